package framework

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/kubecause/kubecause/rules/mixintest"
)

var runbookURL = regexp.MustCompile(`https?://[^"\s\\]+/runbooks/[^"\s\\]*`)

// runbookURLs lists the distinct runbook links in text.
func runbookURLs(text string) []string {
	out := runbookURL.FindAllString(text, -1)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestServedRunbookLinks: the generated rules with their links pointed at the runbooks kubecause
// serves (what the demo's Prometheus loads) link exactly what the mixin renders with
// _config.kubecauseExternalURL, in English and Chinese.
func TestServedRunbookLinks(t *testing.T) {
	const ext = "http://127.0.0.1:9737"
	root := mixintest.RepoRoot(t)
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			var generated, want []byte
			var mixin any
			if lang == "en" {
				files, err := GeneratedRuleFiles(root)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					generated = append(generated, b...)
				}
			} else {
				// The generated files are English; the Chinese links come from the mixin built with
				// language zh and no external URL.
				mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: { language: "zh" } }; [m.prometheusAlerts, m.prometheusRules]`, &mixin)
				generated, _ = json.Marshal(mixin)
			}
			mixintest.Jsonnet(t, `local m = (import "mixin.libsonnet") + { _config+:: { kubecauseExternalURL: "`+ext+`", language: "`+lang+`" } }; [m.prometheusAlerts, m.prometheusRules]`, &mixin)
			want, _ = json.Marshal(mixin)
			got := runbookURLs(ServedRunbookLinks(string(generated), ext))
			if w := runbookURLs(string(want)); len(w) < 10 || !slices.Equal(got, w) {
				t.Errorf("served links differ from the mixin's with kubecauseExternalURL:\ngot:  %q\nwant: %q", got, w)
			}
			if n := len(repoRunbook.FindAllString(ServedRunbookLinks(string(generated), ext), -1)); n > 0 {
				t.Errorf("%d links still point at the repository", n)
			}
		})
	}
}
