package events

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// defaultOptions are the options of kubecause's flag defaults.
func defaultOptions() Options {
	return Options{
		FieldSelector: "type=Warning",
		NormalReasons: []string{"SandboxChanged", "BackOff", "FailedBinding", "NodeNotReady", "NodeNotSchedulable",
			"NodeHasDiskPressure", "NodeHasInsufficientMemory", "NodeHasInsufficientPID"},
		MaxSeries: 10000, MaxObjectSeries: 10000, MaxTargets: 1000,
		SnapshotInterval: 30 * time.Second,
	}
}

// TestOptionsValidate: every value the flag parser lets through but the watch or the engine
// cannot use is refused with an error naming the flag; good values pass.
func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string // "" for valid; otherwise the error's text contains it
		// selection: ValidateSelection refuses it too (not a cap of the engine).
		selection bool
	}{
		{name: "flag defaults", change: func(*Options) {}},
		{name: "namespaces and exclusions", change: func(o *Options) {
			o.Namespaces, o.ExcludedNamespaces = []string{"default", "istio-system"}, []string{"kube-system"}
		}},
		{name: "any selector of Event fields", change: func(o *Options) { o.FieldSelector = "type!=Normal,involvedObject.kind=Pod" }},
		{name: "empty selector", change: func(o *Options) { o.FieldSelector = "" }},
		{name: "caps of 1", change: func(o *Options) { o.MaxSeries, o.MaxObjectSeries, o.MaxTargets = 1, 1, 1 }},

		{name: "zero series cap", change: func(o *Options) { o.MaxSeries = 0 },
			want: "--events.max-series must be at least 1, not 0"},
		{name: "negative object view cap", change: func(o *Options) { o.MaxObjectSeries = -1 },
			want: "--object-view.max-series must be at least 1, not -1"},
		{name: "zero target cap", change: func(o *Options) { o.MaxTargets = 0 },
			want: "--object-view.max-targets must be at least 1, not 0"},
		{name: "snapshot interval below a second", change: func(o *Options) { o.SnapshotInterval = 500 * time.Millisecond },
			want: "--events.snapshot-interval must be at least 1s, not 500ms"},
		{name: "bad namespace", change: func(o *Options) { o.Namespaces = []string{"Default"} }, selection: true,
			want: `namespace "Default" (--events.namespace, --events.exclude-namespace, --namespace): a lowercase RFC 1123 label must consist of`},
		{name: "bad excluded namespace", change: func(o *Options) { o.ExcludedNamespaces = []string{"Kube_System"} }, selection: true,
			want: `namespace "Kube_System" (--events.namespace, --events.exclude-namespace, --namespace)`},
		{name: "reason with a comma", change: func(o *Options) { o.NormalReasons = []string{"BackOff,type=Warning"} }, selection: true,
			want: `--events.normal-reason "BackOff,type=Warning": a reason is a word without commas, '=', '!', '\' or spaces`},
		{name: "empty reason", change: func(o *Options) { o.NormalReasons = []string{""} }, selection: true,
			want: `--events.normal-reason "": a reason is a word`},
		{name: "reason with a space", change: func(o *Options) { o.NormalReasons = []string{"Back Off"} }, selection: true,
			want: `--events.normal-reason "Back Off"`},
		{name: "selector that does not parse", change: func(o *Options) { o.FieldSelector = "a=b=c" }, selection: true,
			want: `Event field selector "a=b=c" (from --events.field-selector, --events.normal-reason, --events.exclude-namespace)`},
		{name: "unknown selector field", change: func(o *Options) { o.FieldSelector = "spec.nodeName=node-1" }, selection: true,
			want: `Event field selector "spec.nodeName=node-1" (from --events.field-selector, --events.normal-reason, --events.exclude-namespace): "spec.nodeName" is not a field Events can be selected by`},
		{name: "empty type in selector", change: func(o *Options) { o.FieldSelector = "type==" }, selection: true,
			want: "type with an empty value selects no Event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions()
			tc.change(&o)
			err := o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if err := o.ValidateSelection(); err != nil {
					t.Fatalf("ValidateSelection() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			err = o.ValidateSelection()
			if tc.selection && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("ValidateSelection() = %v, want an error containing %q", err, tc.want)
			}
			if !tc.selection && err != nil {
				t.Fatalf("ValidateSelection() = %v: a cap of the engine is not the selection's", err)
			}
		})
	}
}

// TestOptionsValidateReportsEveryProblem: all problems at once, one a line, caps first.
func TestOptionsValidateReportsEveryProblem(t *testing.T) {
	o := defaultOptions()
	o.MaxSeries, o.MaxTargets = 0, 0
	o.ExcludedNamespaces = []string{"Bad_NS"}
	err := o.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	lines := strings.Split(err.Error(), "\n")
	for i, prefix := range []string{"--events.max-series", "--object-view.max-targets", `namespace "Bad_NS"`} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], prefix) {
			t.Fatalf("Validate() line %d does not begin with %q:\n%v", i, prefix, err)
		}
	}
	// Bad_NS is in every watch's selector (metadata.namespace!=Bad_NS), which still parses.
	if len(lines) != 3 {
		t.Errorf("Validate() gave %d lines, want 3:\n%v", len(lines), err)
	}
}

// TestOptionsWatches: the scopes and selectors of the watches the options ask for.
func TestOptionsWatches(t *testing.T) {
	o := Options{FieldSelector: "type=Warning", NormalReasons: []string{"BackOff"}, ExcludedNamespaces: []string{"kube-system"}}
	if got, want := o.Scopes(), []string{""}; !reflect.DeepEqual(got, want) {
		t.Errorf("Scopes() without namespaces = %q, want %q (all)", got, want)
	}
	if got, want := o.Selectors(), []string{"type=Warning,metadata.namespace!=kube-system", "type=Normal,reason=BackOff,metadata.namespace!=kube-system"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Selectors() = %q, want %q", got, want)
	}
	o.Namespaces = []string{"a", "b"}
	if got, want := o.Scopes(), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Scopes() = %q, want %q", got, want)
	}
}
