package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/rules/mixintest"
)

type inhibitFile struct {
	InhibitRules []struct {
		SourceMatchers []string `json:"source_matchers"`
		TargetMatchers []string `json:"target_matchers"`
		Equal          []string `json:"equal"`
	} `json:"inhibit_rules"`
}

var alertnameMatcherRE = regexp.MustCompile(`^alertname(=~|=)"([^"]*)"$`)

// alertNames returns the alert names an alertname matcher of a rule selects (literal
// alternatives only, as the generator writes them).
func alertNames(t *testing.T, matchers []string) []string {
	t.Helper()
	for _, m := range matchers {
		if sm := alertnameMatcherRE.FindStringSubmatch(m); sm != nil {
			return strings.Split(sm[2], "|")
		}
	}
	t.Fatalf("no alertname matcher in %v", matchers)
	return nil
}

// The inhibition rules: valid Alertmanager configuration; every Kubecause alert they name
// exists; every label they compare (equal) is a label of both alerts in their firing tests, so
// a rule cannot silently never match (Alertmanager treats a label missing on both as equal,
// which would inhibit across pods or nodes).
func TestInhibitRules(t *testing.T) {
	path := filepath.Join("alertmanager", "inhibit-rules.yaml")
	var f inhibitFile
	readYAML(t, path, &f)
	if len(f.InhibitRules) == 0 {
		t.Fatal("no inhibit rules")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "alertmanager.yml")
	body := "route:\n  receiver: default\n  group_by: [cluster, alertname, namespace, node]\nreceivers:\n  - name: default\n" + string(data)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	mixintest.Run(t, ".", mixintest.Tool(t, "amtool"), "check-config", cfg)

	exists := map[string]bool{}
	for _, a := range alerts(t) {
		exists[a.Alert] = true
	}
	labels := map[string]map[string]bool{} // alert -> labels of its firing test cases
	for _, uf := range unitTestFiles(t) {
		for _, tc := range uf.Tests {
			for _, at := range tc.AlertRuleTest {
				for _, ea := range at.ExpAlerts {
					if labels[at.Alertname] == nil {
						labels[at.Alertname] = map[string]bool{}
					}
					for k := range ea.ExpLabels {
						labels[at.Alertname][k] = true
					}
				}
			}
		}
	}
	for i, r := range f.InhibitRules {
		for _, side := range [][]string{r.SourceMatchers, r.TargetMatchers} {
			for _, name := range alertNames(t, side) {
				if !strings.HasPrefix(name, "Kubecause") {
					continue // a kubernetes-mixin alert
				}
				if !exists[name] {
					t.Errorf("inhibit rule %d names alert %s, which does not exist", i, name)
					continue
				}
				for _, l := range r.Equal {
					if l != "alertname" && !labels[name][l] {
						t.Errorf("inhibit rule %d compares label %s, which no firing test of %s shows", i, l, name)
					}
				}
			}
		}
	}
}

// The AlertmanagerConfig (prometheus-operator) holds exactly the rules of inhibit-rules.yaml,
// matcher by matcher, in the CRD's form.
func TestInhibitRulesAlertmanagerConfig(t *testing.T) {
	var plain inhibitFile
	readYAML(t, filepath.Join("alertmanager", "inhibit-rules.yaml"), &plain)
	type matcher struct {
		Name, MatchType, Value string
	}
	var amc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			InhibitRules []struct {
				SourceMatch []matcher `json:"sourceMatch"`
				TargetMatch []matcher `json:"targetMatch"`
				Equal       []string  `json:"equal"`
			} `json:"inhibitRules"`
		} `json:"spec"`
	}
	readYAML(t, filepath.Join("alertmanager", "alertmanagerconfig.yaml"), &amc)
	if amc.APIVersion != "monitoring.coreos.com/v1alpha1" || amc.Kind != "AlertmanagerConfig" {
		t.Fatalf("%s %s, want monitoring.coreos.com/v1alpha1 AlertmanagerConfig", amc.APIVersion, amc.Kind)
	}
	if len(amc.Spec.InhibitRules) != len(plain.InhibitRules) {
		t.Fatalf("%d rules in the AlertmanagerConfig, %d in inhibit-rules.yaml", len(amc.Spec.InhibitRules), len(plain.InhibitRules))
	}
	str := func(ms []matcher) []string {
		var out []string
		for _, m := range ms {
			switch m.MatchType {
			case "=", "!=", "=~", "!~":
			default:
				t.Errorf("matcher %+v: matchType not one of = != =~ !~", m)
			}
			out = append(out, fmt.Sprintf("%s%s%q", m.Name, m.MatchType, m.Value))
		}
		return out
	}
	for i, r := range amc.Spec.InhibitRules {
		p := plain.InhibitRules[i]
		for _, c := range []struct{ got, want []string }{{str(r.SourceMatch), p.SourceMatchers}, {str(r.TargetMatch), p.TargetMatchers}, {r.Equal, p.Equal}} {
			if strings.Join(c.got, " ") != strings.Join(c.want, " ") {
				t.Errorf("rule %d: AlertmanagerConfig %v, inhibit-rules.yaml %v", i, c.got, c.want)
			}
		}
	}
}

// The _config switches drop what they say, and only that.
func TestConfigSwitches(t *testing.T) {
	names := func(override string) map[string]bool {
		var list []string
		mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: {`+override+`} };
			[r.alert for g in m.prometheusAlerts.groups for r in g.rules]`, &list)
		out := map[string]bool{}
		for _, n := range list {
			out[n] = true
		}
		return out
	}
	all := names("")
	for _, c := range []struct {
		override string
		dropped  []string
	}{
		{"ingressByNodePort: true", []string{"KubecauseLoadBalancerNoAddress"}},
		{"kubernetesMixinInstalled: true", []string{"KubecauseNodeNotReady", "KubecauseNodePressure", "KubecauseContainerWaiting"}},
	} {
		got := names(c.override)
		want := map[string]bool{}
		for _, d := range c.dropped {
			if !all[d] {
				t.Errorf("%s is not generated by default", d)
			}
			want[d] = true
		}
		for n := range all {
			if got[n] == want[n] {
				t.Errorf("%s: alert %s generated=%v, want %v", c.override, n, got[n], !want[n])
			}
		}
	}
	// With kubernetes-mixin's KubeNodeNotReady as the node alert, the inhibition follows it.
	var sources []string
	mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: { kubernetesMixinInstalled: true } };
		std.flattenArrays([r.source_matchers for r in m.alertmanagerInhibitRules])`, &sources)
	if !strings.Contains(strings.Join(sources, " "), `alertname="KubeNodeNotReady"`) {
		t.Errorf("kubernetesMixinInstalled: no inhibit rule with KubeNodeNotReady as source: %v", sources)
	}
}

// _config.language zh: every summary and description is Chinese, links the Chinese runbook, and
// the rule file stays valid (promtool checks the annotation templates).
func TestChineseAnnotations(t *testing.T) {
	var doc string
	mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: { language: "zh" } };
		std.manifestYamlDoc(m.prometheusAlerts)`, &doc)
	var f ruleFile
	path := filepath.Join(t.TempDir(), "zh-alerts.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	readYAML(t, path, &f)
	han := regexp.MustCompile(`\p{Han}`)
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			n++
			for _, k := range []string{"summary", "description"} {
				if !han.MatchString(r.Annotations[k]) {
					t.Errorf("%s: %s is not Chinese: %q", r.Alert, k, r.Annotations[k])
				}
			}
			if !strings.Contains(r.Annotations["runbook_url"], "/docs/runbooks/zh/") {
				t.Errorf("%s: runbook_url %q is not a Chinese page", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	if n == 0 {
		t.Fatal("no alerts")
	}
	mixintest.Run(t, ".", mixintest.Tool(t, "promtool"), "check", "rules", path)
}
