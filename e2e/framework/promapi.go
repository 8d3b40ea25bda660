package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// PromAPI queries Prometheus' HTTP API through client_golang's API client, in the shapes the
// tests assert on.
type PromAPI struct {
	Base string // http://host:port

	once   sync.Once
	client promv1.API
	err    error
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

func (a *PromAPI) api() (promv1.API, error) {
	a.once.Do(func() {
		var c api.Client
		if c, a.err = api.NewClient(api.Config{Address: a.Base}); a.err == nil {
			a.client = promv1.NewAPI(c)
		}
	})
	return a.client, a.err
}

// Query runs an instant query now. Scalars come back as one sample without labels.
func (a *PromAPI) Query(ctx context.Context, expr string) (Vector, error) {
	return a.QueryAt(ctx, expr, time.Time{})
}

// QueryAt runs an instant query at evaluation time at (zero: now).
func (a *PromAPI) QueryAt(ctx context.Context, expr string, at time.Time) (Vector, error) {
	c, err := a.api()
	if err != nil {
		return nil, err
	}
	if at.IsZero() {
		at = time.Now()
	}
	res, _, _, err := c.Query(ctx, expr, at)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	switch v := res.(type) {
	case model.Vector:
		out := make(Vector, 0, len(v))
		for _, x := range v {
			out = append(out, Sample{Labels: labelMap(model.LabelSet(x.Metric)), Value: float64(x.Value)})
		}
		return out, nil
	case *model.Scalar:
		return Vector{{Labels: map[string]string{}, Value: float64(v.Value)}}, nil
	default:
		return nil, fmt.Errorf("query %q: unsupported result type %q", expr, res.Type())
	}
}

func labelMap(ls model.LabelSet) map[string]string {
	out := make(map[string]string, len(ls))
	for k, v := range ls {
		out[string(k)] = string(v)
	}
	return out
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
	c, err := a.api()
	if err != nil {
		return nil, err
	}
	res, err := c.Targets(ctx)
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, t := range res.Active {
		out = append(out, Target{Job: string(t.Labels["job"]), Instance: string(t.Labels["instance"]), Health: string(t.Health), LastError: t.LastError})
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
	// Interval is the group's evaluation interval.
	Interval time.Duration
}

// Rule is one loaded rule.
type Rule struct {
	Name      string
	Query     string
	Type      string // alerting | recording
	Health    string
	LastError string
	Labels    map[string]string
	Annots    map[string]string
	State     string
}

// Rules lists the loaded rule groups.
func (a *PromAPI) Rules(ctx context.Context) ([]RuleGroup, error) {
	c, err := a.api()
	if err != nil {
		return nil, err
	}
	res, err := c.Rules(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]RuleGroup, 0, len(res.Groups))
	for _, g := range res.Groups {
		rg := RuleGroup{Name: g.Name, File: g.File, Interval: time.Duration(g.Interval * float64(time.Second))}
		for _, r := range g.Rules {
			switch r := r.(type) {
			case promv1.AlertingRule:
				rg.Rules = append(rg.Rules, Rule{Name: r.Name, Query: r.Query, Type: string(promv1.RuleTypeAlerting), Health: string(r.Health),
					LastError: r.LastError, Labels: labelMap(r.Labels), Annots: labelMap(r.Annotations), State: r.State})
			case promv1.RecordingRule:
				rg.Rules = append(rg.Rules, Rule{Name: r.Name, Query: r.Query, Type: string(promv1.RuleTypeRecording), Health: string(r.Health),
					LastError: r.LastError, Labels: labelMap(r.Labels)})
			}
		}
		out = append(out, rg)
	}
	return out, nil
}

// ActiveAlert is an alert Prometheus holds (pending or firing).
type ActiveAlert struct {
	Labels      map[string]string
	Annotations map[string]string
	State       string
	// ActiveAt is when the alert became pending: it changes only if the alert resolved between.
	ActiveAt time.Time
}

// Alerts lists Prometheus' pending and firing alerts.
func (a *PromAPI) Alerts(ctx context.Context) ([]ActiveAlert, error) {
	c, err := a.api()
	if err != nil {
		return nil, err
	}
	res, err := c.Alerts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ActiveAlert, 0, len(res.Alerts))
	for _, x := range res.Alerts {
		out = append(out, ActiveAlert{Labels: labelMap(x.Labels), Annotations: labelMap(x.Annotations), State: string(x.State), ActiveAt: x.ActiveAt})
	}
	return out, nil
}
