package causes

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// The table's info series: one table series with its version and source, the version as a
// number, and one series per cause with the properties the mixin's rules select by and the
// runbook link the pattern gives.
func TestCollector(t *testing.T) {
	tab := Default()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(tab, "builtin", "https://runbooks.example.com/%s.md"))
	if n := testutil.CollectAndCount(reg, "kubecause_cause_info"); n != len(tab.Causes()) {
		t.Fatalf("kubecause_cause_info has %d series, the table %d causes", n, len(tab.Causes()))
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if v := m.GetGauge().GetValue(); v != 1 && mf.GetName() != "kubecause_causes_table_version" {
				t.Errorf("%s = %v, want 1", mf.GetName(), v)
			}
			got[mf.GetName()+"/"+label(m, "cause")] = labelMap(m)
		}
	}
	if l := got["kubecause_causes_table_info/"]; l["version"] != tab.Version() || l["source"] != "builtin" {
		t.Errorf("kubecause_causes_table_info labels %v, want version %q source builtin", l, tab.Version())
	}
	for _, tc := range []struct{ cause, category, symptom, symptomOf, podStart, targetKind string }{
		{"configmap_not_found", "volume", "false", "", "workload", ""},
		{"mount_timeout", "volume", "true", "", "", ""},
		{"image_registry_unreachable", "image", "false", "", "platform", "registry"},
		{"csi_driver_not_registered", "volume", "false", "", "platform", "message"},
		{"scheduling_pvc_unbound", "scheduling", "false", "pvc", "", ""},
	} {
		c, ok := tab.Cause(tc.cause)
		if !ok {
			t.Fatalf("no cause %s", tc.cause)
		}
		want := map[string]string{"cause": tc.cause, "category": tc.category, "symptom": tc.symptom, "symptom_of": tc.symptomOf,
			"pod_start": tc.podStart, "target_kind": tc.targetKind, "runbook_url": RunbookURL("https://runbooks.example.com/%s.md", c.Runbook)}
		if l := got["kubecause_cause_info/"+tc.cause]; !maps.Equal(l, want) {
			t.Errorf("kubecause_cause_info{cause=%s} labels %v, want %v", tc.cause, l, want)
		}
	}
}

// The version as a number orders versions as semantic versioning does (major, minor, patch).
func TestVersionNumber(t *testing.T) {
	for v, want := range map[string]float64{"1.12.0": 1012000, "v2.0.3": 2000003, "1.2.3-acme.1": 1002003, "wiki-2024": 0, "1.2": 0, "1000.0.0": 0} {
		if got := VersionNumber(v); got != want {
			t.Errorf("VersionNumber(%q) = %v, want %v", v, got, want)
		}
	}
	if VersionNumber("1.12.0") <= VersionNumber("1.9.9") {
		t.Error("1.12.0 does not rank above 1.9.9")
	}
}

// Outcomes lists every result Classify gives on the golden messages, and only pairs the rules declare.
func TestOutcomes(t *testing.T) {
	tab := Default()
	out := tab.Outcomes()
	for _, g := range goldens {
		if r := tab.Classify(g.reason, g.message); !slices.Contains(out, Result{Cause: r.Cause, Rule: r.Rule}) {
			t.Errorf("Classify(%q, …) = %+v, not in Outcomes", g.reason, r)
		}
	}
	for _, o := range out {
		if o.Rule == "" && o.Cause != Unknown || o.Rule != "" && !slices.Contains(tab.RuleCauses(o.Rule), o.Cause) {
			t.Errorf("outcome %+v is no pair of the table", o)
		}
	}
}

func label(m *dto.Metric, name string) string { return labelMap(m)[name] }

func labelMap(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.Label {
		l[p.GetName()] = p.GetValue()
	}
	return l
}
