package events

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Options are the Event watch's settings as kubecause's flags give them (exporter/cmd/kubecause):
// which Events to watch and the engine's caps. Validate checks every value the flag parser lets
// through, before anything starts; its errors name the flag.
type Options struct {
	// Namespaces are the namespaces watched (--events.namespace; explain's --namespace sets the
	// same); none: every namespace.
	Namespaces []string
	// ExcludedNamespaces are not watched (--events.exclude-namespace).
	ExcludedNamespaces []string
	// FieldSelector is the server-side field selector of the Events watched (--events.field-selector).
	FieldSelector string
	// NormalReasons are the reasons of Normal Events also counted (--events.normal-reason).
	NormalReasons []string

	// The engine's caps (Config): --events.max-series, --object-view.max-series,
	// --object-view.max-targets.
	MaxSeries, MaxObjectSeries, MaxTargets int

	// SnapshotFile keeps the counting state across restarts (--events.snapshot-file; empty: none),
	// written every SnapshotInterval (--events.snapshot-interval) and at SIGTERM (snapshot.go).
	SnapshotFile     string
	SnapshotInterval time.Duration
}

// Validate checks every option and reports all problems at once: the engine's caps, then what
// ValidateSelection checks.
func (o Options) Validate() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.MaxSeries < 1 {
		fail("--events.max-series must be at least 1, not %d", o.MaxSeries)
	}
	if o.MaxObjectSeries < 1 {
		fail("--object-view.max-series must be at least 1, not %d", o.MaxObjectSeries)
	}
	if o.MaxTargets < 1 {
		fail("--object-view.max-targets must be at least 1, not %d", o.MaxTargets)
	}
	if o.SnapshotInterval < time.Second {
		fail("--events.snapshot-interval must be at least 1s, not %s", o.SnapshotInterval)
	}
	return errors.Join(append(errs, o.ValidateSelection())...)
}

// ValidateSelection checks which Events are selected — namespaces, Normal reasons and the field
// selectors of the watches (WatchSelectors) — and not the engine's caps: it is what a reading of
// Events without an engine (kubecause explain) needs.
func (o Options) ValidateSelection() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, ns := range append(append([]string(nil), o.Namespaces...), o.ExcludedNamespaces...) {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			fail("namespace %q (--events.namespace, --events.exclude-namespace, --namespace): %s", ns, strings.Join(msgs, "; "))
		}
	}
	for _, r := range o.NormalReasons {
		if r == "" || strings.ContainsFunc(r, func(c rune) bool {
			return c == ',' || c == '=' || c == '!' || c == '\\' || !unicode.IsGraphic(c) || c == ' '
		}) {
			fail("--events.normal-reason %q: a reason is a word without commas, '=', '!', '\\' or spaces", r)
		}
	}
	// Selectors the apiserver would refuse are a configuration error, not something to retry forever.
	for _, sel := range o.Selectors() {
		if err := CheckSelector(sel); err != nil {
			fail("Event field selector %q (from --events.field-selector, --events.normal-reason, --events.exclude-namespace): %v", sel, err)
		}
	}
	return errors.Join(errs...)
}

// Selectors are the server-side field selectors of the watches (WatchSelectors).
func (o Options) Selectors() []string {
	return WatchSelectors(o.FieldSelector, o.NormalReasons, o.ExcludedNamespaces)
}

// Scopes are the namespaces of the watches: those asked for, or "" (every namespace).
func (o Options) Scopes() []string {
	if len(o.Namespaces) == 0 {
		return []string{""}
	}
	return o.Namespaces
}
