package deploy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/rules/mixintest"
)

var urlRE = regexp.MustCompile(`https?://[^"\s\\]+`)

// runbookURLs are the distinct URLs with "/runbooks/" in v's JSON text.
func runbookURLs(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range urlRE.FindAllString(string(b), -1) {
		if strings.Contains(u, "/runbooks/") && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// TestChartExternalURL: with web.externalURL the exporter gets --web.external-url, and the
// PrometheusRule, plain-Prometheus rules and dashboards the chart installs link the runbooks kubecause
// serves there — the same links the mixin renders with _config.kubecauseExternalURL.
func TestChartExternalURL(t *testing.T) {
	const ext = "https://kubecause.example.com/kc"
	objs, err := HelmTemplate("kubecause", "--set", "web.externalURL="+ext+"/", "--set", "prometheusRule.enabled=true",
		"--set", "dashboards.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, d := range find(objs, "Deployment") {
		args = append(args, podSpecOf(t, d).Containers[0].Args...)
	}
	if !slices.Contains(args, "--web.external-url="+ext+"/") {
		t.Errorf("the exporter's args lack --web.external-url: %q", args)
	}
	var monitoring []Object
	for _, o := range objs {
		if o.Kind() == "PrometheusRule" || o.Kind() == "ConfigMap" {
			monitoring = append(monitoring, o)
		}
	}
	got := runbookURLs(t, monitoring)
	var mixin any
	mixintest.Jsonnet(t, fmt.Sprintf(`local m = (import "mixin.libsonnet") + { _config+:: { kubecauseExternalURL: %q } };
[m.prometheusAlerts, m.prometheusRules, m.grafanaDashboards]`, ext), &mixin)
	want := runbookURLs(t, mixin)
	if len(want) < 20 || !slices.Equal(got, want) {
		t.Errorf("the chart's runbook links differ from the mixin's with kubecauseExternalURL:\nchart: %q\nmixin: %q", got, want)
	}
	b, _ := json.Marshal(monitoring)
	if n := strings.Count(string(b), "github.com/kubecause/kubecause/blob/main/docs/runbooks"); n > 0 {
		t.Errorf("%d links still point at the repository's runbooks", n)
	}
}
