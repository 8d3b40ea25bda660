package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/rules/mixintest"
)

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type unitTestFile struct {
	Tests []struct {
		Name           string `json:"name"`
		PromqlExprTest []struct {
			Expr string `json:"expr"`
		} `json:"promql_expr_test"`
		AlertRuleTest []struct {
			EvalTime  string `json:"eval_time"`
			Alertname string `json:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `json:"exp_labels"`
				ExpAnnotations map[string]string `json:"exp_annotations"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func generated(t *testing.T, name string) ruleFile {
	var f ruleFile
	readYAML(t, filepath.Join("generated", name), &f)
	if len(f.Groups) == 0 {
		t.Fatalf("generated/%s has no groups", name)
	}
	return f
}

func alerts(t *testing.T) []rule {
	var out []rule
	for _, g := range generated(t, "kubecause-alerts.yaml").Groups {
		out = append(out, g.Rules...)
	}
	return out
}

func unitTestFiles(t *testing.T) map[string]unitTestFile {
	paths, err := filepath.Glob(filepath.Join("tests", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no promtool tests under rules/tests: %v", err)
	}
	files := map[string]unitTestFile{}
	for _, p := range paths {
		var f unitTestFile
		readUnitTestFile(t, p, &f)
		files[filepath.Base(p)] = f
	}
	return files
}

// promtoolsEnv lists other promtools to run the rule tests with, comma-separated names in
// $KUBECAUSE_CACHE/bin or PATH (the compatibility matrix, hack/compat.sh, gives one release's).
const promtoolsEnv = "KUBECAUSE_PROMTOOLS"

// promtools are the promtools the rule tests run with: $KUBECAUSE_PROMTOOLS, else def.
func promtools(def ...string) []string {
	if v := os.Getenv(promtoolsEnv); v != "" {
		return strings.Split(v, ",")
	}
	return def
}

// promtool test rules: every alert's firing and resolved cases, the SLI expressions, the
// healthy cluster, completed by preparedUnitTests (the group order, the cause table's series). On Prometheus 2 (Debian's promtool) and 3 (promtool3, built by make deps),
// whose range selectors differ (3 leaves the start of a range out).
func TestPromtoolUnitTests(t *testing.T) {
	for _, tool := range promtools("promtool", "promtool3") {
		t.Run(tool, func(t *testing.T) {
			promtool := mixintest.Tool(t, tool)
			dir, paths := preparedUnitTests(t)
			out := mixintest.Run(t, dir, promtool, append([]string{"test", "rules"}, paths...)...)
			if n := strings.Count(out, "SUCCESS"); n != len(paths) {
				t.Fatalf("%s: %d of %d test files succeeded:\n%s", tool, n, len(paths), out)
			}
		})
	}
}

// promtool check rules --lint-fatal: syntax, and duplicate rules are errors.
func TestPromtoolCheckRules(t *testing.T) {
	for _, tool := range promtools("promtool") {
		t.Run(tool, func(t *testing.T) {
			mixintest.Run(t, ".", mixintest.Tool(t, tool), "check", "rules", "--lint-fatal",
				filepath.Join("generated", "kubecause-alerts.yaml"), filepath.Join("generated", "kubecause-rules.yaml"))
		})
	}
}

// pint, offline: no problem at WARN level or above, with the generated rules/pint.hcl (the
// records other groups may read: TestRuleOrder).
func TestPint(t *testing.T) {
	pint := mixintest.Tool(t, "pint")
	abs, err := filepath.Abs("generated")
	if err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs("pint.hcl")
	if err != nil {
		t.Fatal(err)
	}
	// Run outside the repository so no stray .pint.hcl or git state changes what is checked.
	out := mixintest.Run(t, t.TempDir(), pint, "--config", config, "-n", "-o", "-l", "WARN", "lint", abs)
	if strings.TrimSpace(out) != "" {
		t.Fatalf("pint reports problems:\n%s", out)
	}
}

var (
	alertNameRE = regexp.MustCompile(`^Kubecause[A-Z][A-Za-z0-9]*$`)
	templateRE  = regexp.MustCompile(`\{\{\s*\$labels\.(\w+)\s*(\|\s*toLower\s*)?\}\}`)
)

// causeRunbookRE matches the runbook_url of an alert about causes (lib.causeRunbookURL): the
// cause's own runbook_url label, else the alert's page (group 1).
var causeRunbookRE = regexp.MustCompile(`^\{\{ with printf .*\$labels\.cause \| query \}\}.*\{\{ else \}\}(\S+)\{\{ end \}\}$`)

// alertRunbookURL is the alert's own page: the runbook_url, or its fallback when the link is the
// cause's.
func alertRunbookURL(url string) (string, bool) {
	if m := causeRunbookRE.FindStringSubmatch(url); m != nil {
		return m[1], true
	}
	return url, false
}

// anchorValues lists every anchor a runbook_url can take: literal, each value of the label it
// is templated from, or, for a cause's own link, the anchors of the built-in table's causes
// whose runbook is on the alert's page.
func anchorValues(t *testing.T, a rule, cats map[string]mixintest.Category) []string {
	if _, ok := alertRunbookURL(a.Annotations["runbook_url"]); ok {
		var vals []string
		for _, c := range mixintest.CauseTable(t) {
			if page, anchor, _ := strings.Cut(c.Runbook, "#"); page == strings.ToLower(a.Alert) {
				vals = append(vals, anchor)
			}
		}
		// The incident and a CronJob's runs name causes of every category: their sections are on
		// the category alerts' pages.
		if len(vals) == 0 && a.Alert != "KubecauseIncident" && a.Alert != "KubecauseCronJobFailing" {
			t.Errorf("%s: no cause of the table has its runbook on the alert's page", a.Alert)
		}
		return vals
	}
	url := a.Annotations["runbook_url"]
	i := strings.IndexByte(url, '#')
	if i < 0 {
		return nil
	}
	anchor := url[i+1:]
	m := templateRE.FindStringSubmatch(anchor)
	if m == nil {
		return []string{anchor}
	}
	var vals []string
	if m[1] == "cause" {
		for _, c := range cats {
			if c.Alert == a.Alert {
				vals = append(vals, c.Causes...)
			}
		}
	} else {
		vals = mixintest.LabelValues(t, a.Expr, m[1])
	}
	if len(vals) == 0 {
		t.Errorf("%s: cannot enumerate the values of runbook anchor %q", a.Alert, anchor)
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if m[2] != "" {
			v = strings.ToLower(v)
		}
		out = append(out, templateRE.ReplaceAllString(anchor, v))
	}
	return out
}

// The mixtool alert lint, plus runbooks: each alert's page and section exist, in English and Chinese.
func TestAlertLint(t *testing.T) {
	cats := mixintest.CauseCategories(t)
	cfg := mixintest.Config(t)
	base, _ := cfg["runbookBaseURL"].(string)
	if base == "" {
		t.Fatal("_config.runbookBaseURL is empty")
	}
	for _, name := range []string{"kubecause-alerts.yaml", "kubecause-rules.yaml"} {
		for _, g := range generated(t, name).Groups {
			if len(g.Rules) > 20 {
				t.Errorf("group %s has %d rules (max 20)", g.Name, len(g.Rules))
			}
			if len(g.Name) > 40 {
				t.Errorf("group name %s longer than 40", g.Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range alerts(t) {
		if !alertNameRE.MatchString(a.Alert) || len(a.Alert) > 40 {
			t.Errorf("%s: name must be UpperCamelCase with prefix Kubecause, at most 40 characters", a.Alert)
		}
		switch a.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity %q", a.Alert, a.Labels["severity"])
		}
		s := a.Annotations["summary"]
		if s == "" || strings.Contains(s, "{{") || !strings.HasSuffix(s, ".") || strings.ToUpper(s[:1]) != s[:1] {
			t.Errorf("%s: summary must be a static sentence with a capital first letter ending in '.': %q", a.Alert, s)
		}
		if d := a.Annotations["description"]; !strings.Contains(d, "{{") {
			t.Errorf("%s: description must be templated: %q", a.Alert, d)
		}
		url, _ := alertRunbookURL(a.Annotations["runbook_url"])
		if !strings.HasPrefix(url, base+strings.ToLower(a.Alert)+".md") {
			t.Errorf("%s: runbook_url %q is not %s<alert in lower case>.md", a.Alert, url, base)
			continue
		}
		if seen[a.Alert] {
			continue // the burn-rate alerts share one name and page
		}
		seen[a.Alert] = true
		page, err := mixintest.RunbookPage(t, url)
		if err != nil {
			t.Error(err)
			continue
		}
		zhPage := filepath.Join(filepath.Dir(page), "zh", filepath.Base(page))
		if _, err := os.Stat(zhPage); err != nil {
			t.Errorf("%s: no Chinese runbook %s", a.Alert, zhPage)
			continue
		}
		en, zh := mixintest.Anchors(t, page), mixintest.Anchors(t, zhPage)
		for _, anchor := range anchorValues(t, a, cats) {
			if !en[anchor] {
				t.Errorf("%s: runbook %s has no section for anchor #%s", a.Alert, filepath.Base(page), anchor)
			}
			if !zh[anchor] {
				t.Errorf("%s: Chinese runbook has no section for anchor #%s", a.Alert, anchor)
			}
		}
	}
	for _, c := range cats {
		if !seen[c.Alert] {
			t.Errorf("cause category alert %s does not exist", c.Alert)
		}
	}
}

// Every page has the parts a novice on call needs.
func TestRunbookPages(t *testing.T) {
	root := mixintest.RepoRoot(t)
	for _, a := range alerts(t) {
		page := strings.ToLower(a.Alert) + ".md"
		for _, p := range []struct{ path, lang string }{
			{filepath.Join(root, "docs", "runbooks", page), "en"},
			{filepath.Join(root, "docs", "runbooks", "zh", page), "zh"},
		} {
			data, err := os.ReadFile(p.path)
			if err != nil {
				t.Errorf("%s: %v", a.Alert, err)
				continue
			}
			text := string(data)
			if !strings.HasPrefix(text, "# "+a.Alert+"\n") {
				t.Errorf("%s (%s): page must start with '# %s'", a.Alert, p.lang, a.Alert)
			}
			sections := map[string][]string{
				"en": {"## Meaning", "## Impact", "## Diagnosis", "## Mitigation"},
				"zh": {"## 含义", "## 影响", "## 诊断", "## 处理"},
			}[p.lang]
			for _, s := range sections {
				if !strings.Contains(text, "\n"+s+"\n") {
					t.Errorf("%s (%s): missing section %q", a.Alert, p.lang, s)
				}
			}
			if !strings.Contains(text, "```promql") {
				t.Errorf("%s (%s): Diagnosis has no PromQL", a.Alert, p.lang)
			}
		}
	}
	index, err := os.ReadFile(filepath.Join(root, "docs", "runbooks", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts(t) {
		if !strings.Contains(string(index), "("+strings.ToLower(a.Alert)+".md)") {
			t.Errorf("docs/runbooks/README.md does not list %s", a.Alert)
		}
	}
}

// _config.runbookLanguage chooses the Chinese pages.
func TestRunbookLanguage(t *testing.T) {
	var urls []string
	mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: { runbookLanguage: "zh" } };
		[r.annotations.runbook_url for g in m.prometheusAlerts.groups for r in g.rules]`, &urls)
	if len(urls) == 0 {
		t.Fatal("no alerts")
	}
	for _, u := range urls {
		u, _ = alertRunbookURL(u) // a cause's own link is the exporter's (--runbook.url-pattern)
		if !strings.Contains(u, "/docs/runbooks/zh/") {
			t.Errorf("runbookLanguage zh: %s is not a Chinese page", u)
			continue
		}
		if _, err := mixintest.RunbookPage(t, u); err != nil {
			t.Error(err)
		}
	}
}

// Every alert has a firing case (all labels and annotations given) and a not-firing case; the
// healthy-cluster test expects silence from every alert; every recording rule family has an
// expression test.
func TestEveryRuleIsTested(t *testing.T) {
	files := unitTestFiles(t)
	firing, silent, healthy := map[string]bool{}, map[string]bool{}, map[string]bool{}
	exprs := ""
	for name, f := range files {
		for _, tc := range f.Tests {
			for _, e := range tc.PromqlExprTest {
				exprs += e.Expr + "\n"
			}
			for _, at := range tc.AlertRuleTest {
				if len(at.ExpAlerts) == 0 {
					silent[at.Alertname] = true
					if name == "healthy.yaml" {
						healthy[at.Alertname] = true
					}
					continue
				}
				for _, ea := range at.ExpAlerts {
					for _, k := range []string{"summary", "description", "runbook_url"} {
						if ea.ExpAnnotations[k] == "" {
							t.Errorf("%s: a firing case of %s does not check annotation %s", name, at.Alertname, k)
						}
					}
					if ea.ExpLabels["severity"] == "" {
						t.Errorf("%s: a firing case of %s does not check the severity", name, at.Alertname)
					}
				}
				if name != "healthy.yaml" {
					firing[at.Alertname] = true
				}
			}
		}
	}
	var names []string
	for _, a := range alerts(t) {
		names = append(names, a.Alert)
	}
	sort.Strings(names)
	for _, n := range names {
		if !firing[n] {
			t.Errorf("alert %s has no firing test case", n)
		}
		if !silent[n] {
			t.Errorf("alert %s has no not-firing test case", n)
		}
		if !healthy[n] {
			t.Errorf("alert %s is not in the healthy-cluster test", n)
		}
	}
	window := regexp.MustCompile(`[0-9]+[smhdw]$`)
	for _, g := range generated(t, "kubecause-rules.yaml").Groups {
		for _, r := range g.Rules {
			family := window.ReplaceAllString(r.Record, "")
			if !strings.Contains(exprs, family) {
				t.Errorf("recording rule %s has no expression test", r.Record)
			}
		}
	}
}

// The vendor-neutral SLO spec: queries parse as PromQL, objectives equal the mixin's targets.
func TestSLOSpec(t *testing.T) {
	var spec struct {
		Version string `json:"version"`
		SLOs    []struct {
			Name      string  `json:"name"`
			Objective float64 `json:"objective"`
			SLI       struct {
				Events *struct {
					ErrorQuery string `json:"error_query"`
					TotalQuery string `json:"total_query"`
				} `json:"events"`
				Raw *struct {
					ErrorRatioQuery string `json:"error_ratio_query"`
				} `json:"raw"`
			} `json:"sli"`
		} `json:"slos"`
	}
	readYAML(t, filepath.Join("..", "slo", "kubecause.sloth.yaml"), &spec)
	if spec.Version != "prometheus/v1" || len(spec.SLOs) != 2 {
		t.Fatalf("unexpected spec: version %q, %d SLOs", spec.Version, len(spec.SLOs))
	}
	cfg := mixintest.Config(t)
	want := map[string]float64{
		"pod-start":               cfg["podStartSLOTarget"].(float64) * 100,
		"istiod-remote-endpoints": cfg["istiodRemoteSLOTarget"].(float64) * 100,
	}
	pint := mixintest.Tool(t, "pint")
	dir := t.TempDir()
	for _, s := range spec.SLOs {
		if w, ok := want[s.Name]; !ok || s.Objective < w-1e-9 || s.Objective > w+1e-9 {
			t.Errorf("SLO %s: objective %v, want %v", s.Name, s.Objective, w)
		}
		var queries []string
		if s.SLI.Events != nil {
			queries = append(queries, s.SLI.Events.ErrorQuery, s.SLI.Events.TotalQuery)
		}
		if s.SLI.Raw != nil {
			queries = append(queries, s.SLI.Raw.ErrorRatioQuery)
		}
		if len(queries) == 0 {
			t.Errorf("SLO %s has no SLI query", s.Name)
		}
		for _, q := range queries {
			mixintest.Run(t, dir, pint, "parse", strings.ReplaceAll(q, "{{.window}}", "5m"))
		}
	}
}
