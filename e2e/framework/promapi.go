package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PromAPI queries Prometheus' HTTP API.
type PromAPI struct {
	Base string // http://host:port
}

// Sample is one element of an instant vector.
type Sample struct {
	Labels map[string]string
	Value  float64
}

func (s Sample) String() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, s.Labels[k]))
	}
	return fmt.Sprintf("{%s} %g", strings.Join(parts, ", "), s.Value)
}

// Vector is an instant-query result.
type Vector []Sample

func (v Vector) String() string {
	if len(v) == 0 {
		return "(empty)"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = x.String()
	}
	return strings.Join(s, "; ")
}

func (a *PromAPI) get(ctx context.Context, path string, q url.Values, out any) error {
	u := a.Base + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: %s: %w", u, resp.Status, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", u, env.ErrorType, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// Query runs an instant query now. Scalars come back as one sample without labels.
func (a *PromAPI) Query(ctx context.Context, expr string) (Vector, error) {
	return a.QueryAt(ctx, expr, time.Time{})
}

// QueryAt runs an instant query at evaluation time at (zero: now).
func (a *PromAPI) QueryAt(ctx context.Context, expr string, at time.Time) (Vector, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	q := url.Values{"query": {expr}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	if err := a.get(ctx, "/api/v1/query", q, &data); err != nil {
		return nil, err
	}
	parse := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	switch data.ResultType {
	case "vector":
		var res []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &res); err != nil {
			return nil, err
		}
		out := make(Vector, 0, len(res))
		for _, r := range res {
			f, err := parse(r.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Labels: r.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(data.Result, &v); err != nil {
			return nil, err
		}
		f, err := parse(v)
		return Vector{{Labels: map[string]string{}, Value: f}}, err
	default:
		return nil, fmt.Errorf("query %q: unsupported result type %q", expr, data.ResultType)
	}
}

// WaitFor polls expr every 500 ms until cond accepts the result or timeout passes; it returns
// the last result either way.
func (a *PromAPI) WaitFor(ctx context.Context, expr string, timeout time.Duration, cond func(Vector) bool) (Vector, error) {
	deadline := time.Now().Add(timeout)
	var last Vector
	var lastErr error
	for {
		v, err := a.Query(ctx, expr)
		if err == nil && cond(v) {
			return v, nil
		}
		last, lastErr = v, err
		if time.Now().After(deadline) {
			if lastErr != nil {
				return last, fmt.Errorf("%s: %w", expr, lastErr)
			}
			return last, fmt.Errorf("%s: condition not met within %s; last result: %s", expr, timeout, last)
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// WaitValue waits until expr yields exactly one sample equal to want.
func (a *PromAPI) WaitValue(ctx context.Context, expr string, want float64, timeout time.Duration) (Vector, error) {
	return a.WaitFor(ctx, expr, timeout, func(v Vector) bool { return len(v) == 1 && v[0].Value == want })
}

// Target is a scrape target's health.
type Target struct {
	Job       string
	Instance  string
	Health    string
	LastError string
}

// Targets lists the active scrape targets.
func (a *PromAPI) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		ActiveTargets []struct {
			Labels    map[string]string `json:"labels"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := a.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data); err != nil {
		return nil, err
	}
	var out []Target
	for _, t := range data.ActiveTargets {
		out = append(out, Target{Job: t.Labels["job"], Instance: t.Labels["instance"], Health: t.Health, LastError: t.LastError})
	}
	return out, nil
}

// WaitTargetsUp waits until every active target is healthy.
func (a *PromAPI) WaitTargetsUp(ctx context.Context, timeout time.Duration) error {
	var last []Target
	err := Poll(ctx, timeout, func() (bool, error) {
		ts, err := a.Targets(ctx)
		if err != nil {
			return false, nil
		}
		last = ts
		if len(ts) == 0 {
			return false, nil
		}
		for _, t := range ts {
			if t.Health != "up" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("scrape targets not all up: %+v: %w", last, err)
	}
	return nil
}

// RuleGroup is a loaded rule group with its rules' health.
type RuleGroup struct {
	Name  string
	File  string
	Rules []Rule
}

// Rule is one loaded rule.
type Rule struct {
	Name      string            `json:"name"`
	Query     string            `json:"query"`
	Type      string            `json:"type"` // alerting | recording
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
	Labels    map[string]string `json:"labels"`
	Annots    map[string]string `json:"annotations"`
	State     string            `json:"state"`
}

// Rules lists the loaded rule groups.
func (a *PromAPI) Rules(ctx context.Context) ([]RuleGroup, error) {
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			File  string `json:"file"`
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := a.get(ctx, "/api/v1/rules", nil, &data); err != nil {
		return nil, err
	}
	out := make([]RuleGroup, 0, len(data.Groups))
	for _, g := range data.Groups {
		out = append(out, RuleGroup{Name: g.Name, File: g.File, Rules: g.Rules})
	}
	return out, nil
}

// ActiveAlert is an alert Prometheus holds (pending or firing).
type ActiveAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// Alerts lists Prometheus' pending and firing alerts.
func (a *PromAPI) Alerts(ctx context.Context) ([]ActiveAlert, error) {
	var data struct {
		Alerts []ActiveAlert `json:"alerts"`
	}
	if err := a.get(ctx, "/api/v1/alerts", nil, &data); err != nil {
		return nil, err
	}
	return data.Alerts, nil
}
