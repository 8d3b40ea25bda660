package causes

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// The table's info series: one table series with its version and source, one series per cause
// with the runbook link the pattern gives.
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
			if m.GetGauge().GetValue() != 1 {
				t.Errorf("%s = %v, want 1", mf.GetName(), m.GetGauge().GetValue())
			}
			got[mf.GetName()+"/"+label(m, "cause")] = labelMap(m)
		}
	}
	if l := got["kubecause_causes_table_info/"]; l["version"] != tab.Version() || l["source"] != "builtin" {
		t.Errorf("kubecause_causes_table_info labels %v, want version %q source builtin", l, tab.Version())
	}
	c, _ := tab.Cause("configmap_not_found")
	l := got["kubecause_cause_info/configmap_not_found"]
	if want := RunbookURL("https://runbooks.example.com/%s.md", c.Runbook); l["runbook_url"] != want || l["category"] != c.Category {
		t.Errorf("kubecause_cause_info{cause=configmap_not_found} labels %v, want runbook_url %q category %q", l, want, c.Category)
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
