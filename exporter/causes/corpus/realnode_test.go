package corpus

import (
	"testing"

	"github.com/kubecause/kubecause/exporter/causes"
)

// realNodeFile is RealNodeFile seen from this package's directory.
const realNodeFile = "../testdata/real-node.yaml"

// TestRealNodeMessages holds the built-in table to every message the e2e real node's
// components wrote, as a person read it.
func TestRealNodeMessages(t *testing.T) {
	f, err := LoadRealNode(realNodeFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Messages) == 0 {
		t.Fatalf("%s holds no message", realNodeFile)
	}
	table := causes.Default()
	for _, m := range f.Messages {
		if m.Cause == "TODO" || m.Cause == "" {
			t.Errorf("%s %s from %s has no cause assigned yet (read it, then set cause): %q", m.Type, m.Reason, m.Component, m.Message)
			continue
		}
		if _, ok := table.Cause(m.Cause); !ok {
			t.Errorf("%s %q: cause %q is not in the table", m.Reason, m.Message, m.Cause)
			continue
		}
		if got := table.Classify(m.Reason, m.Message); got.Cause != m.Cause {
			t.Errorf("%s %s from %s (%s): got %s (rule %q), want %s\n  %q", m.Type, m.Reason, m.Component, m.Kind, got.Cause, got.Rule, m.Cause, m.Message)
		}
	}
	t.Logf("%d real messages from %d recordings: %v", len(f.Messages), len(f.Recordings), f.Recordings)
}

// A recording is named by the node's kubelet and runtime; one without a node (TestMultiAttach,
// messages of kube-controller-manager alone) by the controller manager's version.
func TestRecordingName(t *testing.T) {
	for _, tc := range []struct {
		versions map[string]string
		want     string
	}{
		{map[string]string{"kubelet": "v1.37.2", "containerRuntime": "containerd://2.4.2", "runc": "1.1.5+ds1"}, "kubelet v1.37.2, containerd 2.4.2"},
		{map[string]string{"kubeControllerManager": "v1.37.2"}, "kube-controller-manager v1.37.2"},
		{map[string]string{"kubelet": "v1.37.2", "kubeControllerManager": "v1.37.2"}, "kubelet v1.37.2"},
		{map[string]string{}, "unknown versions"},
	} {
		if got := RecordingName(tc.versions); got != tc.want {
			t.Errorf("RecordingName(%v) = %q, want %q", tc.versions, got, tc.want)
		}
	}
}
