package rules

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A test file may say `removal_tests_from: <test name>`: the harness then adds, for every family
// of rules/dependencies.libsonnet that KubecauseStateSeriesMissing checks, a test whose input is
// that test's without the family's series, expecting the alert for that family alone after its
// 15 minutes, and none before. The expected description is written here from the list (family,
// labels, alerts), not copied from the rule, so the rule's text is checked too.
const removalTestsKey = "removal_tests_from"

func expandRemovalTests(t *testing.T, path string, f map[string]any) {
	t.Helper()
	from, ok := f[removalTestsKey].(string)
	if !ok {
		return
	}
	delete(f, removalTestsKey)
	tests := f["tests"].([]any)
	var base map[string]any
	for _, tc := range tests {
		if m := tc.(map[string]any); m["name"] == from {
			base = m
		}
	}
	if base == nil {
		t.Fatalf("%s: %s names %q, which is not a test of the file", path, removalTestsKey, from)
	}
	input := base["input_series"].([]any)
	for _, s := range stateSeriesList(t) {
		if s.Unchecked != "" {
			continue
		}
		var kept []any
		for _, in := range input {
			series := in.(map[string]any)["series"].(string)
			if name, _, _ := strings.Cut(series, "{"); name != s.Family {
				kept = append(kept, in)
			}
		}
		if len(kept) == len(input) {
			t.Errorf("%s: test %q serves no %s series to remove", path, from, s.Family)
		}
		tests = append(tests, map[string]any{
			"name":         s.Family + " missing",
			"interval":     base["interval"],
			"input_series": kept,
			"alert_rule_test": []any{
				map[string]any{"eval_time": "14m", "alertname": stateSeriesAlert, "exp_alerts": []any{}},
				map[string]any{"eval_time": "16m", "alertname": stateSeriesAlert, "exp_alerts": []any{
					map[string]any{
						"exp_labels": map[string]any{"severity": "warning", "cluster": "c1", "family": s.Family},
						"exp_annotations": map[string]any{
							"summary": "A series the alerts read is missing from kube-state-metrics.",
							"description": fmt.Sprintf("kube-state-metrics on cluster c1 is scraped but serves no %s series with the labels %s, "+
								"although the objects it describes should have one. Without it these alerts are blind or wrong: %s.",
								s.Family, strings.Join(s.Labels, ", "), strings.Join(s.Alerts, ", ")),
							"runbook_url": "https://github.com/kubecause/kubecause/blob/main/docs/runbooks/kubecausestateseriesmissing.md",
						},
					},
				}},
			},
		})
	}
	f["tests"] = tests
}

// readUnitTestFile reads a promtool test file as the harness completes it with removal tests.
func readUnitTestFile(t *testing.T, path string, v any) {
	t.Helper()
	var raw map[string]any
	readYAML(t, path, &raw)
	expandRemovalTests(t, path, raw)
	b, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
