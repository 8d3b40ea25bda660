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

// A cause of the user's own table, its runbook on their wiki: the info series carries the link
// as it is, whatever the pattern, and the properties the rules select it by.
func TestCollectorUserCause(t *testing.T) {
	tab, err := Parse([]byte(`version: "1.13.0-acme.1"
causes:
  - {name: longhorn_no_block_frontend, category: volume, meaning: Longhorn has no block device for the volume., runbook: "https://wiki.example.com/storage/longhorn#no-block-frontend", podStart: platform, target: node}
  - {name: unknown, category: other, meaning: No rule matched., runbook: "kubecauseunclassifiedevents#unknown"}
rules:
  - {id: acme.longhorn, reasons: [FailedMount], pattern: 'desc = There is no block device frontend for volume ', cause: longhorn_no_block_frontend}
`))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(tab, "/etc/kubecause/config/causes.yaml", "https://runbooks.example.com/%s.md"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			switch {
			case mf.GetName() == "kubecause_causes_table_version" && m.GetGauge().GetValue() != 1013000:
				t.Errorf("kubecause_causes_table_version = %v, want 1013000", m.GetGauge().GetValue())
			case mf.GetName() == "kubecause_cause_info" && label(m, "cause") == "longhorn_no_block_frontend":
				want := map[string]string{"cause": "longhorn_no_block_frontend", "category": "volume", "symptom": "false", "symptom_of": "",
					"pod_start": "platform", "target_kind": "node", "runbook_url": "https://wiki.example.com/storage/longhorn#no-block-frontend"}
				if l := labelMap(m); !maps.Equal(l, want) {
					t.Errorf("labels %v, want %v", l, want)
				}
			}
		}
	}
}
