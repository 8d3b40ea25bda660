package corpus

import (
	"path/filepath"
	"testing"

	"github.com/kubecause/kubecause/exporter/causes"
)

// TestTemplateInventory: every template of every component's inventory, instantiated as the
// component writes it, gets the cause the inventory says under each of its reasons; a case the
// message cannot tell says why.
func TestTemplateInventory(t *testing.T) {
	invs, err := LoadInventory(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) == 0 {
		t.Fatal("no inventory in testdata/templates: the glob or the directory is broken")
	}
	tab := causes.Default()
	seen := map[string]bool{}
	for _, inv := range invs {
		if seen[inv.Component] {
			t.Errorf("component %q has two inventory files", inv.Component)
		}
		seen[inv.Component] = true
		for _, tm := range inv.Templates {
			for _, c := range tm.Cases {
				if _, ok := tab.Cause(c.Cause); !ok && c.Cause != "unknown" {
					t.Errorf("%s %s: cause %q is not in the table", inv.Component, tm.Source, c.Cause)
				}
				if isGeneric(tab, c.Cause) && c.Why == "" {
					t.Errorf("%s %s: %q: a case the message cannot tell says why", inv.Component, tm.Source, tm.Message(c))
				}
			}
		}
	}
	for _, o := range Check(tab, invs) {
		if o.Wrong() {
			t.Errorf("%s %s [%s] %q: table says %s (target %q), the inventory %s (target %q)",
				o.Inventory, o.Source, o.Reason, o.Message, o.Got, o.GotTarget, o.Want, o.WantTarget)
		}
	}
}

func TestTemplateMessage(t *testing.T) {
	tm := Tmpl{Template: `MountVolume.SetUp failed for volume %q : %v (%d)`}
	got := tm.Message(Case{Args: []any{"config", `configmap "app" not found`, float64(3)}})
	if want := `MountVolume.SetUp failed for volume "config" : configmap "app" not found (3)`; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	inv := Inventory{Component: "c", Repository: "o/r", Version: "v1", Commit: "0123456789012345678901234567890123456789",
		Templates: []Tmpl{{Source: "a.go:1", Reasons: []string{"R"}, Template: "x %s %s", Cases: []Case{{Args: []any{"one"}, Cause: "unknown", Why: "w"}}}}}
	if err := inv.check(); err == nil {
		t.Error("a case with too few args passed the check")
	}
}

// A case that names a target is wrong when the table reads another one, or none.
func TestOutcomeWrongTarget(t *testing.T) {
	for _, c := range []struct {
		o     Outcome
		wrong bool
	}{
		{Outcome{Want: "cni_error", Got: "cni_error"}, false},
		{Outcome{Want: "cni_error", Got: "cni_error", GotTarget: "cilium-cni"}, false},
		{Outcome{Want: "cni_error", Got: "cni_error", WantTarget: "cilium", GotTarget: "cilium"}, false},
		{Outcome{Want: "cni_error", Got: "cni_error", WantTarget: "cilium", GotTarget: "cilium-cni"}, true},
		{Outcome{Want: "cni_error", Got: "cni_error", WantTarget: "cilium"}, true},
		{Outcome{Want: "cni_error", Got: "sandbox_failed", WantTarget: "cilium", GotTarget: "cilium"}, true},
	} {
		if got := c.o.Wrong(); got != c.wrong {
			t.Errorf("%+v: Wrong() = %v, want %v", c.o, got, c.wrong)
		}
	}
}
