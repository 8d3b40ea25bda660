package events

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// notInGoldenScrape are families docs/metrics.md documents that the golden scrape cannot hold,
// by name prefix, each with the reason.
var notInGoldenScrape = map[string]string{
	"kubecause_endpoints_":                  "the endpoint checks (exporter/endpointcheck, --checks) are another collector, fed by Services and EndpointSlices, not by Events",
	"kubecause_http_requests_refused_total": "the HTTP layer's refusals (exporter/pages.Guard, registered by main): package pages imports this one, so this test cannot build it; exporter/pages's limit tests read it",
	"kubecause_http_auth_refused_total":     "the HTTP layer's refusals in front of the credential check (exporter/cmd/kubecause's authLimit); its test reads it",
}

// docRow is a metric row of a docs/metrics.md table: | `name` | type | labels | meaning |.
var docRow = regexp.MustCompile("^\\| `([a-z_:][a-z0-9_:]*)` \\|[^|]*\\|([^|]*)\\|")

var (
	backticked  = regexp.MustCompile("`([^`]*)`")
	parenthesis = regexp.MustCompile(`\([^)]*\)`)
)

// documentedFamilies reads the families of docs/metrics.md and their label names: the labels
// column lists them in backticks (values in parentheses are not labels), "—" for none, or
// "same as `family`".
func documentedFamilies(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string][]string{}
	sameAs := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, col := m[1], strings.TrimSpace(m[2])
		if _, dup := fams[name]; dup {
			t.Errorf("docs/metrics.md documents %s twice", name)
		}
		if rest, ok := strings.CutPrefix(col, "same as "); ok {
			sameAs[name] = strings.Trim(rest, "`")
			fams[name] = nil
			continue
		}
		labels := []string{}
		for _, l := range backticked.FindAllStringSubmatch(parenthesis.ReplaceAllString(col, ""), -1) {
			labels = append(labels, l[1])
		}
		sort.Strings(labels)
		fams[name] = labels
	}
	for name, other := range sameAs {
		labels, ok := fams[other]
		if !ok {
			t.Errorf("docs/metrics.md: %s has the labels of %s, which is not documented", name, other)
		}
		fams[name] = labels
	}
	if len(fams) < 10 {
		t.Fatalf("docs/metrics.md: found only %d families: the table format changed", len(fams))
	}
	return fams
}

// TestMetricsDocumented: every family of the golden scrape is documented in docs/metrics.md with
// exactly its labels, and every family documented there is in the golden scrape (or produced by
// a collector listed in notInGoldenScrape).
func TestMetricsDocumented(t *testing.T) {
	f, err := os.Open(goldenScrape)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	scraped, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", goldenScrape, err)
	}
	docs := documentedFamilies(t)
	for name, mf := range scraped {
		want, ok := docs[name]
		if !ok {
			t.Errorf("%s is exported but not documented in docs/metrics.md", name)
			continue
		}
		var got []string
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !slices.Contains(got, lp.GetName()) {
					got = append(got, lp.GetName())
				}
			}
		}
		sort.Strings(got)
		if len(mf.GetMetric()) > 0 && !slices.Equal(got, want) {
			t.Errorf("%s: exported with labels %v, docs/metrics.md documents %v", name, got, want)
		}
	}
	used := map[string]bool{}
	for name := range docs {
		if _, ok := scraped[name]; ok {
			continue
		}
		excluded := false
		for prefix := range notInGoldenScrape {
			if strings.HasPrefix(name, prefix) {
				excluded, used[prefix] = true, true
			}
		}
		if !excluded {
			t.Errorf("docs/metrics.md documents %s, which the golden scrape (%s) does not export", name, goldenScrape)
		}
	}
	for prefix, why := range notInGoldenScrape {
		if !used[prefix] {
			t.Errorf("notInGoldenScrape lists %s (%s), which docs/metrics.md no longer documents", prefix, why)
		}
	}
}
