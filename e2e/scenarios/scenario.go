// Package scenarios holds the seed scenarios the e2e tests and the demo play: the written ones
// (the test writes the Events as the components would) and the real ones (a real component
// writes them on the real node). The harness that runs them is e2e/framework.
package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubecause/kubecause/e2e/framework"
)

// Occurrences is an expected value of kubecause_events_total.
type Occurrences struct {
	Namespace, Kind, Reason, Cause string
	Count                          float64
}

// Selector is the PromQL selector of the expectation (summed over component and type).
func (o Occurrences) Selector() string {
	return fmt.Sprintf(`sum(kubecause_events_total{namespace=%q,kind=%q,reason=%q,cause=%q})`, o.Namespace, o.Kind, o.Reason, o.Cause)
}

// ExpectedAlert is an alert the pager must receive for a scenario.
type ExpectedAlert struct {
	Name   string
	Labels map[string]string // must all be present with these values
	// Runbook is the page (lower-case alert name) and, for cause alerts, "#<cause>".
	Runbook string
	// ExplainedBy is the alert that pages instead of this one when the component raises what
	// explains it (the kubelet reporting the node condition behind an eviction, for long enough
	// to page): the incident is one notification, this alert or that one, never both — and this
	// one never pages after it.
	ExplainedBy *ExpectedAlert
}

// Match returns the labels that identify the alert among all notifications.
func (a ExpectedAlert) Match() map[string]string {
	m := map[string]string{"alertname": a.Name}
	for k, v := range a.Labels {
		m[k] = v
	}
	return m
}

// RunbookOK reports whether url points at the expected runbook page (and section).
func (a ExpectedAlert) RunbookOK(url string) bool {
	return strings.HasSuffix(url, "/"+a.Runbook)
}

// Scenario is one seed scenario. The written suite, the real node and the demo play the same
// type: Play breaks a workload, Fix repairs or removes it, and the pager must get Alerts.
// Who writes the Events decides which expectation it carries: a written scenario (SeedScenarios)
// writes them as the kubelet, the scheduler and the controllers would, and knows their exact
// Occurrences; on the real node (RealScenarios, RealNodeScenarios) the kubelet, the runtime, the
// scheduler or the controllers write them, and Expect names the Events they must write.
type Scenario struct {
	ID, Title string
	// Namespace holds the scenario's objects, and nothing else, so its Events can be summed.
	Namespace string
	Play      func(ctx context.Context, s *framework.Stack) error
	// Fix makes the state healthy again (the alerts must resolve).
	Fix func(ctx context.Context, s *framework.Stack) error
	// Occurrences are the exact kubecause_events_total of a written scenario.
	Occurrences []Occurrences
	// Expect are the Events a component must write on the real node, and kubecause's cause for
	// each.
	Expect []RealEvent
	// Alerts must reach the pager (labels are a subset match) and resolve after Fix.
	Alerts []ExpectedAlert
	// Explained are the alerts of the scenario's symptoms that an alert of Alerts explains: they
	// never reach the pager, neither while it fires (the shipped inhibition) nor after it (the
	// rules know the explanation).
	Explained []ExpectedAlert
	// Queries are what a user sees in Prometheus while the scenario is broken (each must reach
	// its value) and after Fix (Fixed).
	Queries, Fixed []PromExpect
	// MutesNode: its alert mutes every per-pod alert of the node by the shipped inhibition
	// (KubecauseNodeNotReady), and Alertmanager sends no resolution of a muted alert while it
	// fires (5 min past the node's return, flapWindow): the scenarios played before it must have
	// resolved before it plays.
	MutesNode bool
}

// PromExpect is a PromQL expression and the value its single sample must take.
type PromExpect struct {
	Expr string
	Want float64
}

// RealEvent is an Event a real component writes about Object in the scenario's namespace, or in
// Namespace when set (a Node's Events are in "default").
type RealEvent struct {
	Kind, Object, Reason string
	// Cause is what kubecause must call it.
	Cause     string
	Namespace string
	// Message, when set, is text the component's message must contain: which of the
	// component's wordings for the reason the scenario is about.
	Message string
}

// Namespaces lists the namespaces the scenarios use.
func Namespaces(sc []Scenario) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range sc {
		if !seen[s.Namespace] {
			seen[s.Namespace] = true
			out = append(out, s.Namespace)
		}
	}
	return out
}
