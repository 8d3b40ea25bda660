package rules

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/rules/mixintest"
)

// No alert, recording rule or inhibition rule names a cause: they select causes by the
// properties of kubecause_cause_info (category, symptom, pod_start, target_kind, symptom_of), so
// a cause of the user's own table pages like a built-in one. Two names are the exporter's, not
// the table's choice: unknown (the loader requires it: no rule matched) and the crash loop that
// kube-state-metrics' OOMKilled renames (_config.oomRefines): the crash loop selected in the
// record of OOM-killed crash loops, the name it gets in the record of the pods' causes.
func TestNoCauseNames(t *testing.T) {
	var oom struct{ From, To string }
	mixintest.Jsonnet(t, `(import "mixin.libsonnet")._config.oomRefines`, &oom)
	type text struct{ where, s string }
	var texts []text
	for _, name := range []string{"kubecause-rules.yaml", "kubecause-alerts.yaml"} {
		for _, g := range generated(t, name).Groups {
			for _, r := range g.Rules {
				where := g.Name + "/" + r.Record + r.Alert
				s := r.Expr
				switch r.Record {
				case "namespace_pod_cause:kubecause_pod_oom_crash_loop:max":
					s = strings.Replace(s, `{cause="`+oom.From+`"}`, "", 1)
				case "namespace_pod_cause:kubecause_pod_causes:max":
					s = strings.Replace(s, `"cause", "`+oom.To+`"`, "", 1)
				}
				texts = append(texts, text{where, s})
				for k, v := range r.Labels {
					texts = append(texts, text{where + " label " + k, v})
				}
				for k, v := range r.Annotations {
					texts = append(texts, text{where + " annotation " + k, v})
				}
			}
		}
	}
	var inhibit struct {
		InhibitRules []struct {
			SourceMatchers []string `json:"source_matchers"`
			TargetMatchers []string `json:"target_matchers"`
		} `json:"inhibit_rules"`
	}
	readYAML(t, filepath.Join("alertmanager", "inhibit-rules.yaml"), &inhibit)
	for i, r := range inhibit.InhibitRules {
		texts = append(texts, text{fmt.Sprintf("inhibit rule %d", i), strings.Join(append(r.SourceMatchers, r.TargetMatchers...), " ")})
	}
	if len(texts) < 50 {
		t.Fatalf("only %d rule texts read", len(texts))
	}
	for _, c := range causes.Default().Causes() {
		if c.Name == causes.Unknown {
			continue
		}
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(c.Name) + `($|[^A-Za-z0-9_])`)
		for _, x := range texts {
			if re.MatchString(x.s) {
				t.Errorf("%s names cause %s", x.where, c.Name)
			}
		}
	}
}
