package causes

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// realNodeFile holds the messages real components wrote on the e2e real node (kubelet,
// containerd, runc, the scheduler and the controllers), byte for byte, each with the cause a
// person assigned after reading it. `make real-messages` regenerates it from the e2e run.
const realNodeFile = "testdata/real-node.yaml"

type realNodeMessages struct {
	Versions map[string]string `json:"versions"`
	Messages []struct {
		Reason    string `json:"reason"`
		Type      string `json:"type"`
		Component string `json:"component"`
		Kind      string `json:"kind"`
		Message   string `json:"message"`
		Cause     string `json:"cause"`
	} `json:"messages"`
}

// TestRealNodeMessages holds the built-in table to every real message of the fixture.
func TestRealNodeMessages(t *testing.T) {
	b, err := os.ReadFile(realNodeFile)
	if err != nil {
		t.Fatal(err)
	}
	var f realNodeMessages
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("%s: %v", realNodeFile, err)
	}
	if len(f.Messages) == 0 {
		t.Fatalf("%s holds no message", realNodeFile)
	}
	table := Default()
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
	t.Logf("%d real messages from %v", len(f.Messages), f.Versions)
}
