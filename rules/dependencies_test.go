package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/rules/mixintest"
)

// An entry of the mixin's kubeStateMetricsSeries (rules/dependencies.libsonnet).
type stateSeries struct {
	Family    string   `json:"family"`
	Labels    []string `json:"labels"`
	Unchecked string   `json:"unchecked"`
	Expected  []struct {
		Family   string `json:"family"`
		Matchers string `json:"matchers"`
		Filter   string `json:"filter"`
	} `json:"expected"`
	Alerts []string `json:"alerts"`
}

const stateSeriesAlert = "KubecauseStateSeriesMissing"

func stateSeriesList(t *testing.T) []stateSeries {
	t.Helper()
	var list []stateSeries
	mixintest.Jsonnet(t, `(import "mixin.libsonnet").kubeStateMetricsSeries`, &list)
	if len(list) == 0 {
		t.Fatal("kubeStateMetricsSeries is empty")
	}
	return list
}

var (
	ksmFamilyRE = regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:])(kube_[a-z0-9_]+)`)
	identRE     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

// The generated rules other than KubecauseStateSeriesMissing's, each with the identifiers
// (metric, record and label names) its expression reads.
type readingRule struct {
	rule
	reads map[string]bool
}

func readingRules(t *testing.T) []readingRule {
	var out []readingRule
	for _, name := range []string{"kubecause-rules.yaml", "kubecause-alerts.yaml"} {
		for _, g := range generated(t, name).Groups {
			for _, r := range g.Rules {
				if r.Alert == stateSeriesAlert {
					continue
				}
				rr := readingRule{rule: r, reads: map[string]bool{}}
				for _, id := range identRE.FindAllString(r.Expr, -1) {
					rr.reads[id] = true
				}
				out = append(out, rr)
			}
		}
	}
	return out
}

// The list names every kube-state-metrics family a rule reads, and nothing else; each entry's
// alerts are those that read the family, directly or through recording rules (derived here
// again, from the generated files); each label it needs is one the rules name.
func TestStateSeriesList(t *testing.T) {
	list := stateSeriesList(t)
	rules := readingRules(t)
	read := map[string]bool{}
	for _, r := range rules {
		for _, m := range ksmFamilyRE.FindAllStringSubmatch(r.Expr, -1) {
			read[m[1]] = true
		}
	}
	listed := map[string]bool{}
	for _, s := range list {
		if listed[s.Family] {
			t.Errorf("%s is listed twice", s.Family)
		}
		listed[s.Family] = true
		if !read[s.Family] {
			t.Errorf("%s is listed in rules/dependencies.libsonnet but no rule reads it", s.Family)
		}
	}
	for f := range read {
		if !listed[f] {
			t.Errorf("a rule reads %s, which rules/dependencies.libsonnet does not list: add it (its labels, when it is expected)", f)
		}
	}

	for _, s := range list {
		// Records that read the family, directly or through other records.
		names := map[string]bool{s.Family: true}
		for grew := true; grew; {
			grew = false
			for _, r := range rules {
				if r.Record == "" || names[r.Record] {
					continue
				}
				for n := range names {
					if r.reads[n] {
						names[r.Record], grew = true, true
						break
					}
				}
			}
		}
		var want []string
		labelsNamed := map[string]bool{}
		for _, r := range rules {
			if r.reads[s.Family] {
				for id := range r.reads {
					labelsNamed[id] = true
				}
			}
			if r.Alert == "" {
				continue
			}
			for n := range names {
				if r.reads[n] {
					want = append(want, r.Alert)
					break
				}
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		if len(want) == 0 {
			t.Errorf("%s: no alert reads it", s.Family)
		}
		if !slices.Equal(s.Alerts, want) {
			t.Errorf("%s: alerts %v, but the alerts that read it are %v", s.Family, s.Alerts, want)
		}
		for _, l := range s.Labels {
			if !labelsNamed[l] {
				t.Errorf("%s: label %s is listed as needed, but no rule that reads the family names it", s.Family, l)
			}
		}
		if (s.Unchecked == "") == (len(s.Expected) == 0) {
			t.Errorf("%s: either series that say it is expected or why it cannot be checked, not %d series and %q", s.Family, len(s.Expected), s.Unchecked)
		}
		for _, e := range s.Expected {
			if e.Family == s.Family {
				t.Errorf("%s: expected when its own series exist", s.Family)
			}
		}
	}
}

// One KubecauseStateSeriesMissing rule per checked family, labelled with it, reading it with
// the labels it needs, naming the alerts that read it; none for an unchecked family.
func TestStateSeriesMissingRules(t *testing.T) {
	list := stateSeriesList(t)
	got := map[string]rule{}
	for _, a := range alerts(t) {
		if a.Alert != stateSeriesAlert {
			continue
		}
		f := a.Labels["family"]
		if _, dup := got[f]; dup {
			t.Errorf("two %s rules for %s", stateSeriesAlert, f)
		}
		got[f] = a
	}
	for _, s := range list {
		a, ok := got[s.Family]
		delete(got, s.Family)
		if s.Unchecked != "" {
			if ok {
				t.Errorf("%s is unchecked (%s) but has a rule", s.Family, s.Unchecked)
			}
			continue
		}
		if !ok {
			t.Errorf("no %s rule for %s", stateSeriesAlert, s.Family)
			continue
		}
		present := regexp.MustCompile(regexp.QuoteMeta(s.Family) + `\{[^}]*\}`).FindString(a.Expr[strings.Index(a.Expr, "unless"):])
		for _, l := range s.Labels {
			if !strings.Contains(present, l+`!=""`) {
				t.Errorf("%s: the rule does not require label %s: %s", s.Family, l, present)
			}
		}
		d := a.Annotations["description"]
		if !strings.Contains(d, s.Family) || !strings.Contains(d, strings.Join(s.Alerts, ", ")) {
			t.Errorf("%s: description does not name the family and the alerts %v: %s", s.Family, s.Alerts, d)
		}
	}
	for f := range got {
		t.Errorf("%s rule for %s, which is not in the list", stateSeriesAlert, f)
	}
}

// rules/tests/dependencies.yaml has, for every checked family, one test that removes exactly
// that family (its series, or the labels it needs) from an input where every other checked
// family is served, and expects the alert for it alone; a test where all are served and it is
// silent; and one where kube-state-metrics is down and it is silent.
func TestStateSeriesMissingCases(t *testing.T) {
	list := stateSeriesList(t)
	var file struct {
		Tests []struct {
			Name        string `json:"name"`
			InputSeries []struct {
				Series string `json:"series"`
				Values string `json:"values"`
			} `json:"input_series"`
			AlertRuleTest []struct {
				EvalTime  string `json:"eval_time"`
				Alertname string `json:"alertname"`
				ExpAlerts []struct {
					ExpLabels map[string]string `json:"exp_labels"`
				} `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	readUnitTestFile(t, filepath.Join("tests", "dependencies.yaml"), &file)
	byFamily := map[string][]string{}
	var healthy, down []string
	for _, tc := range file.Tests {
		// The families the input serves with their needed labels, not shadowed by the scrape's.
		served := map[string]bool{}
		ksmDown := false
		for _, in := range tc.InputSeries {
			name, rest, _ := strings.Cut(in.Series, "{")
			ls := map[string]string{}
			for _, m := range labelRE.FindAllStringSubmatch(rest, -1) {
				ls[m[1]] = m[2]
			}
			if name == "up" && ls["job"] == "kube-state-metrics" {
				for _, v := range strings.Fields(in.Values) {
					ksmDown = ksmDown || strings.HasPrefix(v, "0x") || v == "0"
				}
			}
			for _, s := range list {
				if s.Family != name {
					continue
				}
				ok := true
				for _, l := range s.Labels {
					ok = ok && ls[l] != "" && ls["exported_"+l] == ""
				}
				served[name] = served[name] || ok
			}
		}
		var missing []string
		for _, s := range list {
			if s.Unchecked == "" && !served[s.Family] {
				missing = append(missing, s.Family)
			}
		}
		fired := map[string]bool{}
		evaluated := false
		for _, at := range tc.AlertRuleTest {
			if at.Alertname != stateSeriesAlert {
				continue
			}
			evaluated = true
			for _, e := range at.ExpAlerts {
				fired[e.ExpLabels["family"]] = true
			}
		}
		if !evaluated {
			t.Errorf("%s: does not evaluate %s", tc.Name, stateSeriesAlert)
			continue
		}
		switch {
		case ksmDown:
			down = append(down, tc.Name)
		case len(missing) == 0 && len(fired) == 0:
			healthy = append(healthy, tc.Name)
		case len(missing) == 1 && len(fired) == 1 && fired[missing[0]]:
			byFamily[missing[0]] = append(byFamily[missing[0]], tc.Name)
		case len(fired) == 0:
			// A family served late (within the alert's `for`): not a removal.
		case subset(fired, missing):
			// Several families removed (a resource left out): each fired one is missing.
		default:
			t.Errorf("%s: input misses %v, the test expects the alert for %v: a test removes exactly one family", tc.Name, missing, keys(fired))
		}
	}
	for _, s := range list {
		if s.Unchecked == "" && len(byFamily[s.Family]) == 0 {
			t.Errorf("no test in rules/tests/dependencies.yaml removes %s and expects %s for it", s.Family, stateSeriesAlert)
		}
	}
	if len(healthy) == 0 {
		t.Errorf("no test where every family is served and %s is silent", stateSeriesAlert)
	}
	if len(down) == 0 {
		t.Errorf("no test where kube-state-metrics is down and %s is evaluated", stateSeriesAlert)
	}
}

func subset(m map[string]bool, of []string) bool {
	for k := range m {
		if !slices.Contains(of, k) {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// docs/alerts.md ("kube-state-metrics series the rules read") has a row per family of the list
// with its labels and the series it is checked against, or why it is not checked.
func TestStateSeriesDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `kube_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Errorf("docs/alerts.md: row with %d cells, want 3: %s", len(cells), line)
			continue
		}
		rows[strings.Trim(strings.TrimSpace(cells[0]), "`")] = cells
	}
	list := stateSeriesList(t)
	for _, s := range list {
		cells, ok := rows[s.Family]
		delete(rows, s.Family)
		if !ok {
			t.Errorf("docs/alerts.md: no row for %s", s.Family)
			continue
		}
		var labels []string
		for _, l := range s.Labels {
			labels = append(labels, "`"+l+"`")
		}
		if got := strings.TrimSpace(cells[1]); got != strings.Join(labels, ", ") {
			t.Errorf("docs/alerts.md: %s needs labels %s, the row says %s", s.Family, strings.Join(labels, ", "), got)
		}
		var expected []string
		for _, e := range s.Expected {
			x := e.Family
			if e.Matchers != "" {
				x += "{" + e.Matchers + "}"
			}
			if e.Filter != "" {
				x += " " + e.Filter
			}
			expected = append(expected, "`"+x+"`")
		}
		want := strings.Join(expected, ", ")
		if s.Unchecked != "" {
			want = "not checked: " + s.Unchecked
		}
		if got := strings.TrimSpace(cells[2]); got != want {
			t.Errorf("docs/alerts.md: %s is expected while %s is served, the row says %s", s.Family, want, got)
		}
	}
	for f := range rows {
		t.Errorf("docs/alerts.md: row for %s, which rules/dependencies.libsonnet does not list", f)
	}
}

// With kubernetesMixinInstalled and ingressByNodePort, the alerts that read the node, waiting
// reason and Service families are not generated: no rule for those families, and every rule
// left names at least one alert.
func TestStateSeriesMissingSwitches(t *testing.T) {
	var rules []struct {
		Family string `json:"family"`
		Alerts string `json:"alerts"`
	}
	mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: { kubernetesMixinInstalled: true, ingressByNodePort: true } };
		[{family: r.labels.family, alerts: std.split(r.annotations.description, ":")[1]} for g in m.prometheusAlerts.groups for r in g.rules if r.alert == "`+stateSeriesAlert+`"]`, &rules)
	if len(rules) == 0 {
		t.Fatal("no rules")
	}
	for _, r := range rules {
		if !strings.Contains(r.Alerts, "Kubecause") {
			t.Errorf("%s: the rule names no alert that reads it: %q", r.Family, r.Alerts)
		}
		switch r.Family {
		case "kube_node_info", "kube_node_status_condition", "kube_node_spec_unschedulable", "kube_pod_container_status_waiting_reason", "kube_service_spec_type":
			t.Errorf("%s: no alert reads it with these switches, but it has a rule", r.Family)
		}
	}
}
