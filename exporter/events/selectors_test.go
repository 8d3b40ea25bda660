package events

import (
	"reflect"
	"testing"
)

func TestWatchSelectors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		base     string
		normal   []string
		excluded []string
		want     []string
	}{
		{"default", "type=Warning", []string{"SandboxChanged", "BackOff"}, nil,
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
