package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	docTestRefRE  = regexp.MustCompile("`([a-z0-9-]+\\.yaml)`((?:[ ,]*\\*[^*]+\\*)+)")
	docTestNameRE = regexp.MustCompile(`\*([^*]+)\*`)
)

// docs/alerts.md's table names every generated alert with its trigger, its silence and the
// promtool tests proving them: each cited test exists (a name shortened with "…" matches the
// test whose name holds every part) and at least one of them evaluates the alert. The tests
// themselves run on Prometheus 2 and 3 (TestPromtoolUnitTests).
func TestAlertsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ trigger, silence, tests string }
	rows := map[string]row{}
	inTable := false
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| Alert | Severity | Trigger | Silence |") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		if len(cells) != 5 {
			t.Errorf("docs/alerts.md: row with %d cells, want 5: %s", len(cells), line)
			continue
		}
		rows[strings.TrimSpace(cells[0])] = row{strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3]), cells[4]}
	}
	if len(rows) == 0 {
		t.Fatal("docs/alerts.md: no alert table")
	}
	files := unitTestFiles(t)
	generatedAlerts := map[string]bool{}
	for _, a := range alerts(t) {
		generatedAlerts[a.Alert] = true
	}
	for name := range generatedAlerts {
		r, ok := rows[name]
		if !ok {
			t.Errorf("docs/alerts.md: no row for alert %s", name)
			continue
		}
		if r.trigger == "" || r.silence == "" {
			t.Errorf("docs/alerts.md: %s: trigger %q, silence %q", name, r.trigger, r.silence)
		}
		refs := docTestRefRE.FindAllStringSubmatch(r.tests, -1)
		if len(refs) == 0 {
			t.Errorf("docs/alerts.md: %s names no test: %s", name, r.tests)
			continue
		}
		evaluates := false
		for _, ref := range refs {
			f, ok := files[ref[1]]
			if !ok {
				t.Errorf("docs/alerts.md: %s: no test file rules/tests/%s", name, ref[1])
				continue
			}
			for _, m := range docTestNameRE.FindAllStringSubmatch(ref[2], -1) {
				parts := strings.Split(m[1], "…")
				found := false
				for _, tc := range f.Tests {
					all := true
					for _, p := range parts {
						all = all && strings.Contains(tc.Name, strings.TrimSpace(p))
					}
					if !all {
						continue
					}
					found = true
					for _, at := range tc.AlertRuleTest {
						evaluates = evaluates || at.Alertname == name
					}
				}
				if !found {
					t.Errorf("docs/alerts.md: %s: %s has no test %q", name, ref[1], m[1])
				}
			}
		}
		if !evaluates {
			t.Errorf("docs/alerts.md: %s: none of the cited tests evaluates the alert: %s", name, r.tests)
		}
	}
	for name := range rows {
		if !generatedAlerts[name] {
			t.Errorf("docs/alerts.md: row for %s, which is not generated", name)
		}
	}
}
