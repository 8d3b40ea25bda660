package framework

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Notification is one alert as Alertmanager's webhook delivers it.
type Notification struct {
	Status      string            `json:"status"` // firing | resolved
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Fingerprint string            `json:"fingerprint"`
	Received    time.Time         `json:"-"`
}

func (n Notification) String() string {
	keys := make([]string, 0, len(n.Labels))
	for k := range n.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s{", n.Status, n.Labels["alertname"])
	first := true
	for _, k := range keys {
		if k == "alertname" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s=%q", k, n.Labels[k])
	}
	b.WriteString("}")
	if u := n.Annotations["runbook_url"]; u != "" {
		fmt.Fprintf(&b, " runbook_url=%s", u)
	}
	return b.String()
}

// Delivery is one notification as Alertmanager sends it: the alerts of one group (firing and,
// with send_resolved, resolved) delivered together, which a pager shows as one page.
type Delivery struct {
	// GroupKey identifies the route and group; GroupLabels are the group_by labels' values.
	GroupKey    string
	GroupLabels map[string]string
	Status      string // firing (any alert of the group fires) | resolved
	Alerts      []Notification
	Received    time.Time
}

// Has reports whether an alert of the delivery matches every label of match and, when status is
// not empty, has that status.
func (d Delivery) Has(match map[string]string, status string) bool {
	for _, a := range d.Alerts {
		if labelsMatch(a.Labels, match) && (status == "" || a.Status == status) {
			return true
		}
	}
	return false
}

func (d Delivery) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s group %v:", d.Received.Format("15:04:05.000"), d.Status, d.GroupLabels)
	for _, a := range d.Alerts {
		fmt.Fprintf(&b, "\n    %v", a)
	}
	return b.String()
}

// Webhook is the receiver Alertmanager delivers to: it records what a pager would get.
type Webhook struct {
	URL string

	srv        *http.Server
	mu         sync.Mutex
	received   []Notification
	deliveries []Delivery
	changed    chan struct{}
}

// StartWebhook serves the receiver on 127.0.0.1 at a free port.
func StartWebhook() (*Webhook, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &Webhook{URL: "http://" + l.Addr().String() + "/alerts", changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/alerts", w.handle)
	w.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = w.srv.Serve(l) }()
	return w, nil
}

func (w *Webhook) handle(rw http.ResponseWriter, r *http.Request) {
	var msg struct {
		GroupKey    string            `json:"groupKey"`
		GroupLabels map[string]string `json:"groupLabels"`
		Status      string            `json:"status"`
		Alerts      []Notification    `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	w.mu.Lock()
	d := Delivery{GroupKey: msg.GroupKey, GroupLabels: msg.GroupLabels, Status: msg.Status, Received: now}
	for _, a := range msg.Alerts {
		a.Received = now
		w.received = append(w.received, a)
		d.Alerts = append(d.Alerts, a)
	}
	w.deliveries = append(w.deliveries, d)
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// Close stops the receiver.
func (w *Webhook) Close() error { return w.srv.Close() }

// All returns every notification received, in order.
func (w *Webhook) All() []Notification {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Notification(nil), w.received...)
}

// Deliveries returns every notification received (one per group delivery), in order.
func (w *Webhook) Deliveries() []Delivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Delivery(nil), w.deliveries...)
}

// Current returns the latest state of each alert (by fingerprint) that matches every label of
// match.
func (w *Webhook) Current(match map[string]string) []Notification {
	latest := map[string]Notification{}
	var order []string
	for _, n := range w.All() {
		if !labelsMatch(n.Labels, match) {
			continue
		}
		if _, ok := latest[n.Fingerprint]; !ok {
			order = append(order, n.Fingerprint)
		}
		latest[n.Fingerprint] = n
	}
	out := make([]Notification, 0, len(order))
	for _, f := range order {
		out = append(out, latest[f])
	}
	return out
}

// Firing returns the alerts whose latest notification is firing.
func (w *Webhook) Firing(match map[string]string) []Notification {
	var out []Notification
	for _, n := range w.Current(match) {
		if n.Status == "firing" {
			out = append(out, n)
		}
	}
	return out
}

// WaitFor blocks until cond holds over the received notifications or timeout passes.
func (w *Webhook) WaitFor(timeout time.Duration, cond func(*Webhook) bool) error {
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		ch := w.changed
		w.mu.Unlock()
		if cond(w) {
			return nil
		}
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("webhook condition not met within %s; received: %v", timeout, w.All())
		}
	}
}

// WaitFiring waits for at least one firing alert matching match and returns those.
func (w *Webhook) WaitFiring(timeout time.Duration, match map[string]string) ([]Notification, error) {
	var got []Notification
	err := w.WaitFor(timeout, func(w *Webhook) bool { got = w.Firing(match); return len(got) > 0 })
	return got, err
}

// WaitResolved waits until every alert matching match that was ever received is resolved.
func (w *Webhook) WaitResolved(timeout time.Duration, match map[string]string) ([]Notification, error) {
	var got []Notification
	err := w.WaitFor(timeout, func(w *Webhook) bool {
		got = w.Current(match)
		if len(got) == 0 {
			return false
		}
		for _, n := range got {
			if n.Status != "resolved" {
				return false
			}
		}
		return true
	})
	return got, err
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// AlertmanagerAlert is an alert as Alertmanager holds it (/api/v2/alerts).
type AlertmanagerAlert struct {
	Labels      map[string]string `json:"labels"`
	Fingerprint string            `json:"fingerprint"`
	Status      struct {
		State       string   `json:"state"` // active | suppressed | unprocessed
		InhibitedBy []string `json:"inhibitedBy"`
		SilencedBy  []string `json:"silencedBy"`
	} `json:"status"`
}

// AlertmanagerAlerts lists the alerts Alertmanager am holds (firing ones, inhibited included)
// whose labels match every pair of match.
func AlertmanagerAlerts(am *Component, match map[string]string) ([]AlertmanagerAlert, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(am.URL("/api/v2/alerts"))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("alertmanager /api/v2/alerts: %s", resp.Status)
	}
	var all []AlertmanagerAlert
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		return nil, fmt.Errorf("alertmanager /api/v2/alerts: %w", err)
	}
	var out []AlertmanagerAlert
	for _, a := range all {
		if labelsMatch(a.Labels, match) {
			out = append(out, a)
		}
	}
	return out, nil
}
