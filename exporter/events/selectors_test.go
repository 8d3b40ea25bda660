package events

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
)

func TestWatchSelectors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		base     string
		normal   []string
		excluded []string
		want     []string
	}{
		{"type=Warning: one watch per reason", "type=Warning", []string{"SandboxChanged", "BackOff"}, nil,
			[]string{"type=Warning", "type=Normal,reason=SandboxChanged", "type=Normal,reason=BackOff"}},
		{"excluded namespaces apply to every watch", "type=Warning", []string{"BackOff"}, []string{"kube-system", "dev"},
			[]string{"type=Warning,metadata.namespace!=kube-system,metadata.namespace!=dev",
				"type=Normal,reason=BackOff,metadata.namespace!=kube-system,metadata.namespace!=dev"}},
		{"custom selector: one watch, engine filters Normal", "involvedObject.kind=Pod", []string{"BackOff"}, nil,
			[]string{"involvedObject.kind=Pod"}},
		{"everything", "", nil, nil, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WatchSelectors(tc.base, tc.normal, tc.excluded); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDefaultFieldSelector: the default is one watch, valid for the apiserver, that lets through
// every Warning and every counted Normal reason, and none of the noisy Normal ones.
func TestDefaultFieldSelector(t *testing.T) {
	if err := CheckSelector(DefaultFieldSelector); err != nil {
		t.Fatal(err)
	}
	if got := WatchSelectors(DefaultFieldSelector, DefaultNormalReasons, nil); len(got) != 1 {
		t.Errorf("the default is %d watches: %q", len(got), got)
	}
	sel, err := fields.ParseSelector(DefaultFieldSelector)
	if err != nil {
		t.Fatal(err)
	}
	sees := func(typ, reason string) bool { return sel.Matches(fields.Set{"type": typ, "reason": reason}) }
	for _, r := range DefaultNormalReasons {
		if !sees("Normal", r) {
			t.Errorf("the default selector leaves out the counted Normal reason %s", r)
		}
	}
	for _, r := range []string{"Failed", "FailedMount", "FailedCreatePodSandBox", "Unhealthy", "FailedScheduling", "Evicted"} {
		if !sees("Warning", r) {
			t.Errorf("the default selector leaves out Warning %s", r)
		}
	}
	for _, r := range NoisyNormalReasons {
		if sees("Normal", r) {
			t.Errorf("the default selector lets Normal %s through", r)
		}
	}
}
