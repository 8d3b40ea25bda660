package framework

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// GeneratedRuleFiles lists the mixin's generated rule files (rules/generated/*.yaml).
func GeneratedRuleFiles(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "rules", "generated", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// scrapeAlertFor is the shortest `for` kept for alerts on `up` (the stack's start-up takes seconds).
const scrapeAlertFor = time.Minute

// PrepareRuleFiles copies rule files into dir, shortening every alert's `for` (and
// `keep_firing_for`) that is longer than maxFor, so that the tests see the alerts of the real
// expressions fire within seconds instead of the 10–15 minutes a production page waits.
// Expressions, labels and annotations are kept byte for byte. maxFor 0 copies unchanged.
// It returns the new paths and, per alert name, the original `for`.
func PrepareRuleFiles(files []string, dir string, maxFor time.Duration) ([]string, map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	orig := map[string]string{}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		if maxFor > 0 {
			var doc map[string]any
			if err := yaml.Unmarshal(b, &doc); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f, err)
			}
			groups, _ := doc["groups"].([]any)
			for _, g := range groups {
				gm, _ := g.(map[string]any)
				rules, _ := gm["rules"].([]any)
				for _, r := range rules {
					rm, _ := r.(map[string]any)
					name, _ := rm["alert"].(string)
					expr, _ := rm["expr"].(string)
					limit := maxFor
					if strings.Contains(expr, "up{") && limit < scrapeAlertFor {
						// An alert on the scrape itself (KubecauseDown) must not fire while the
						// stack starts and the first scrapes are still on their way.
						limit = scrapeAlertFor
					}
					for _, key := range []string{"for", "keep_firing_for"} {
						s, ok := rm[key].(string)
						if !ok {
							continue
						}
						d, err := model.ParseDuration(s)
						if err != nil {
							return nil, nil, fmt.Errorf("%s: alert %s: %s %q: %w", f, name, key, s, err)
						}
						if time.Duration(d) > limit {
							if key == "for" && name != "" {
								orig[name] = s
							}
							rm[key] = model.Duration(limit).String()
						}
					}
				}
			}
			if b, err = yaml.Marshal(doc); err != nil {
				return nil, nil, err
			}
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, nil, err
		}
		out = append(out, p)
	}
	return out, orig, nil
}

// SetAlertFor sets the `for` of the named alerts in rule files (rewritten in place), and fails
// when an alert of fors is in none of them.
func SetAlertFor(files []string, fors map[string]time.Duration) error {
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		changed := false
		groups, _ := doc["groups"].([]any)
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			rules, _ := gm["rules"].([]any)
			for _, r := range rules {
				rm, _ := r.(map[string]any)
				name, _ := rm["alert"].(string)
				if d, ok := fors[name]; ok {
					rm["for"] = model.Duration(d).String()
					seen[name], changed = true, true
				}
			}
		}
		if !changed {
			continue
		}
		if b, err = yaml.Marshal(doc); err != nil {
			return err
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return err
		}
	}
	for name := range fors {
		if !seen[name] {
			return fmt.Errorf("no alert %s in the rule files", name)
		}
	}
	return nil
}

// repoRunbook matches the mixin's default runbook links: the public repository's
// docs/runbooks/[zh/]<page>.md.
var repoRunbook = regexp.MustCompile(`https://github\.com/kubecause/kubecause/blob/main/docs/runbooks/(zh/)?([a-z0-9]+|README)\.md`)

// ServedRunbookLinks points the mixin's runbook links in text at the runbooks kubecause serves
// under external, as the mixin renders them with _config.kubecauseExternalURL (and the chart
// with web.externalURL): <external>/runbooks/<page>?lang=<en|zh>.
func ServedRunbookLinks(text, external string) string {
	base := strings.TrimSuffix(external, "/") + "/runbooks/"
	return repoRunbook.ReplaceAllStringFunc(text, func(link string) string {
		m := repoRunbook.FindStringSubmatch(link)
		page, lang := m[2], "en"
		if page == "README" {
			page = ""
		}
		if m[1] != "" {
			lang = "zh"
		}
		return base + page + "?lang=" + lang
	})
}

// linkServedRunbooks rewrites the rule files' runbook links in place (ServedRunbookLinks).
func linkServedRunbooks(files []string, external string) error {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(ServedRunbookLinks(string(b), external)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// CheckRunbookLink fetches a runbook link kubecause serves and checks that the page renders the
// heading its anchor names.
func CheckRunbookLink(link string) error {
	page, anchor, _ := strings.Cut(link, "#")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(page)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answers %s", page, resp.Status)
	}
	if anchor != "" && !strings.Contains(string(body), fmt.Sprintf(` id=%q`, anchor)) {
		return fmt.Errorf("%s has no heading #%s", page, anchor)
	}
	return nil
}
