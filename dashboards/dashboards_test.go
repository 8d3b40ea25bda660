package dashboards

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/rules/mixintest"
)

type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type link struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

type panel struct {
	Title       string `json:"title"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Datasource  struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
		Overrides []struct {
			Properties []struct {
				ID    string          `json:"id"`
				Value json.RawMessage `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
	Links   []link `json:"links"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func loadDashboards(t *testing.T) map[string]dashboard {
	paths, err := filepath.Glob(filepath.Join("generated", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards under dashboards/generated: %v", err)
	}
	out := map[string]dashboard{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = d
	}
	return out
}

func TestDashboardSet(t *testing.T) {
	ds := loadDashboards(t)
	var names []string
	for n := range ds {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{"kubecause-exporter.json", "kubecause-hosted-mesh.json", "kubecause-overview.json", "kubecause-slo.json"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("dashboards %v, want %v", names, want)
	}
}

// Stable uids, the datasource and cluster variables, unit and description on every panel,
// every query on the datasource variable, scoped to the cluster, with $__rate_interval.
func TestDashboardStructure(t *testing.T) {
	rangeRE := regexp.MustCompile(`\[([^\]]*)\]`)
	uids := map[string]string{}
	for file, d := range loadDashboards(t) {
		sum := md5.Sum([]byte(file))
		if d.UID != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: uid %q is not the md5 of the file name", file, d.UID)
		}
		if other, ok := uids[d.UID]; ok {
			t.Errorf("%s and %s share uid %s", file, other, d.UID)
		}
		uids[d.UID] = file
		vars := map[string]string{}
		for _, v := range d.Templating.List {
			vars[v.Name] = v.Type
		}
		if vars["datasource"] != "datasource" {
			t.Errorf("%s: no datasource variable", file)
		}
		if vars["cluster"] != "query" {
			t.Errorf("%s: no cluster variable", file)
		}
		if len(d.Panels) == 0 {
			t.Errorf("%s: no panels", file)
		}
		for _, p := range d.Panels {
			where := file + ": panel " + p.Title
			if strings.TrimSpace(p.Description) == "" {
				t.Errorf("%s: no description", where)
			}
			if p.FieldConfig.Defaults.Unit == "" {
				t.Errorf("%s: no unit", where)
			}
			if p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: datasource %q is not the datasource variable", where, p.Datasource.UID)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no targets", where)
			}
			for _, tg := range p.Targets {
				if !strings.Contains(tg.Expr, `="$cluster"`) {
					t.Errorf("%s: query does not select the cluster variable: %s", where, tg.Expr)
				}
				for _, m := range rangeRE.FindAllStringSubmatch(tg.Expr, -1) {
					if m[1] != "$__rate_interval" {
						t.Errorf("%s: range [%s] instead of [$__rate_interval]: %s", where, m[1], tg.Expr)
					}
				}
			}
		}
	}
}

// Every runbook link of a panel (and data link) resolves to a page and section; each
// dashboard links runbooks from its panels; the overview table links each pod's cause.
func TestDashboardRunbookLinks(t *testing.T) {
	for file, d := range loadDashboards(t) {
		n := 0
		for _, p := range d.Panels {
			for _, l := range p.Links {
				if !strings.Contains(l.URL, "docs/runbooks/") {
					continue
				}
				n++
				page, err := mixintest.RunbookPage(t, l.URL)
				if err != nil {
					t.Errorf("%s: panel %s: %v", file, p.Title, err)
					continue
				}
				if i := strings.IndexByte(l.URL, '#'); i >= 0 && !mixintest.Anchors(t, page)[l.URL[i+1:]] {
					t.Errorf("%s: panel %s: %s has no section #%s", file, p.Title, filepath.Base(page), l.URL[i+1:])
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no panel links to a runbook", file)
		}
	}
	overview := loadDashboards(t)["kubecause-overview.json"]
	found := false
	for _, p := range overview.Panels {
		for _, o := range p.FieldConfig.Overrides {
			for _, prop := range o.Properties {
				if prop.ID == "links" && strings.Contains(string(prop.Value), "${__data.fields.runbook_url}") {
					found = true
				}
			}
		}
	}
	if !found {
		t.Error("the overview has no data link from a pod's cause to its runbook_url")
	}
}

var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "5m",
	"$cluster", "c1",
	"$namespace", "shop",
	"${__data.fields.runbook_url}", "",
)

// knownMetrics: the names docs/metrics.md documents (histograms with their series), the
// standard go_/process_ collectors it names, the mixin's recording rules, and every metric
// kube-state-metrics (the version in go.mod) can export.
func knownMetrics(t *testing.T) (map[string]bool, []string) {
	root := mixintest.RepoRoot(t)
	// up and ALERTS are written by Prometheus itself (scrapes and alerting rules).
	known := map[string]bool{"up": true, "ALERTS": true}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(kubecause_[a-z_]+)` \\| ([a-z]+)")
	sc := bufio.NewScanner(strings.NewReader(string(doc)))
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			known[m[1]] = true
			if m[2] == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					known[m[1]+s] = true
				}
			}
		}
	}
	if len(known) < 10 {
		t.Fatalf("docs/metrics.md: found only %d metrics", len(known))
	}
	var prefixes []string
	for _, p := range []string{"go_", "process_"} {
		if strings.Contains(string(doc), "`"+p+"*`") {
			prefixes = append(prefixes, p)
		}
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Record string `json:"record"`
			} `json:"rules"`
		} `json:"groups"`
	}
	data, err := os.ReadFile(filepath.Join(root, "rules", "generated", "kubecause-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			known[r.Record] = true
		}
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kube-state-metrics/v2")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("locating kube-state-metrics (go list -m): %v", err)
	}
	stores, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "internal", "store", "*.go"))
	ksmName := regexp.MustCompile(`"(kube_[a-z_]+)"`)
	n := 0
	for _, s := range stores {
		src, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ksmName.FindAllStringSubmatch(string(src), -1) {
			known[m[1]] = true
			n++
		}
	}
	if n < 100 {
		t.Fatalf("found only %d kube-state-metrics metric names in %d store files", n, len(stores))
	}
	return known, prefixes
}

// Every query parses as PromQL (the Prometheus parser inside pint) and names only metrics that
// exist.
func TestDashboardQueries(t *testing.T) {
	pint := mixintest.Tool(t, "pint")
	known, prefixes := knownMetrics(t)
	// Vector selectors print "* Name: x"; those inside range selectors "* VectorSelector: x{…}".
	nameRE := regexp.MustCompile(`(?m)^\s*\* (?:Name: |VectorSelector: )([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	dir := t.TempDir()
	for file, d := range loadDashboards(t) {
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				expr := grafanaVars.Replace(tg.Expr)
				cmd := exec.Command(pint, "parse", expr)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("%s: panel %s: query does not parse: %v\n%s\n%s", file, p.Title, err, expr, out)
					continue
				}
				names := nameRE.FindAllStringSubmatch(string(out), -1)
				if len(names) == 0 {
					t.Errorf("%s: panel %s: query names no metric: %s", file, p.Title, expr)
				}
				for _, m := range names {
					name := m[1]
					ok := known[name]
					for _, pre := range prefixes {
						ok = ok || strings.HasPrefix(name, pre)
					}
					if !ok {
						t.Errorf("%s: panel %s: metric %s is neither in docs/metrics.md, a recording rule, nor a kube-state-metrics metric", file, p.Title, name)
					}
				}
			}
		}
	}
}

// The overview and the hosted-mesh dashboard show namespaced objects: every query selects the
// namespace variable (their series carry a namespace label; the discovery table reaches it
// through its check's state). The SLO and exporter dashboards are cluster-wide.
func TestDashboardNamespaceFilter(t *testing.T) {
	ds := loadDashboards(t)
	for _, file := range []string{"kubecause-overview.json", "kubecause-hosted-mesh.json"} {
		d, ok := ds[file]
		if !ok {
			t.Fatalf("%s missing", file)
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				if !strings.Contains(tg.Expr, `namespace=~"$namespace`) {
					t.Errorf("%s: panel %s: query ignores the namespace variable: %s", file, p.Title, tg.Expr)
				}
			}
		}
	}
	for file, d := range ds {
		found := false
		for _, v := range d.Templating.List {
			found = found || v.Name == "namespace"
		}
		if !found {
			t.Errorf("%s: no namespace variable", file)
		}
	}
}
