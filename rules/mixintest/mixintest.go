// Package mixintest holds helpers shared by the tests of the monitoring mixin (rules and
// dashboards): locating the pinned tools, evaluating the mixin with jsonnet, and resolving
// runbook URLs to pages and section anchors in docs/runbooks.
package mixintest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/internal/repo"
)

// RepoRoot is the repository root (two levels above this file).
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Tool returns the path of a tool from $KUBECAUSE_CACHE/bin (default ~/.cache/kubecause/bin) or
// PATH. A missing tool fails the test: the tests must not pass silently without their tools.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(repo.CacheDir(), "bin", name)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Fatalf("%s not found in $KUBECAUSE_CACHE/bin or PATH: run make deps", name)
	return ""
}

// Run runs a command in dir and returns its combined output; a non-zero exit fails the test.
func Run(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Jsonnet evaluates a jsonnet snippet with the repository root as import path and decodes its
// JSON output into v.
func Jsonnet(t testing.TB, snippet string, v any) {
	t.Helper()
	root := RepoRoot(t)
	out := Run(t, root, Tool(t, "jsonnet"), "-J", root, "-e", snippet)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decoding jsonnet output: %v", err)
	}
}

// Category is one entry of _config.causeCategories.
type Category struct {
	Alert    string   `json:"alert"`
	Kind     string   `json:"kind"`
	Causes   []string `json:"causes"`
	Symptoms []string `json:"symptoms"`
}

// CauseCategories returns _config.causeCategories of the mixin.
func CauseCategories(t testing.TB) map[string]Category {
	t.Helper()
	var cats map[string]Category
	Jsonnet(t, `(import "mixin.libsonnet")._config.causeCategories`, &cats)
	return cats
}

// Cause is one cause of the built-in cause table.
type Cause struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Runbook  string `json:"runbook"`
}

// CauseTable returns the causes of the built-in table (exporter/causes/causes.yaml).
func CauseTable(t testing.TB) []Cause {
	t.Helper()
	var tab struct{ Causes []Cause }
	Jsonnet(t, `std.parseYaml(importstr "exporter/causes/causes.yaml")`, &tab)
	return tab.Causes
}

// Config returns selected string fields of _config.
func Config(t testing.TB) map[string]any {
	t.Helper()
	var cfg map[string]any
	Jsonnet(t, `local c = (import "mixin.libsonnet")._config; {[k]: c[k] for k in std.objectFields(c) if std.isString(c[k]) || std.isNumber(c[k]) || std.isBoolean(c[k])}`, &cfg)
	return cfg
}

var headingRE = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)

// Anchors returns the GitHub-style anchors of the headings of a markdown file.
func Anchors(t testing.TB, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("runbook page: %v", err)
	}
	anchors := map[string]bool{}
	inCode := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			anchors[Slug(m[1])] = true
		}
	}
	return anchors
}

// Slug is GitHub's anchor of a heading: lower case, punctuation except '-' and '_' dropped,
// spaces to '-'.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// RunbookPage maps a runbook URL (after the anchor is cut off) to a file under docs/runbooks.
func RunbookPage(t testing.TB, url string) (string, error) {
	t.Helper()
	i := strings.Index(url, "docs/runbooks/")
	if i < 0 {
		return "", fmt.Errorf("runbook URL %q does not point into docs/runbooks/", url)
	}
	rel := url[i:]
	if j := strings.IndexByte(rel, '#'); j >= 0 {
		rel = rel[:j]
	}
	p := filepath.Join(RepoRoot(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("runbook URL %q: page %s does not exist", url, rel)
	}
	return p, nil
}

// LabelValues lists the values the matchers of expr allow for label (label="v", or label=~"a|b"
// split at |), in expr and in the expressions of the mixin's recording rules that expr reads,
// directly or through other records (an alert over a record names its values there).
func LabelValues(t testing.TB, expr, label string) []string {
	var records []struct{ Record, Expr string }
	Jsonnet(t, `[{record: r.record, expr: r.expr} for g in (import "mixin.libsonnet").prometheusRules.groups for r in g.rules if std.objectHas(r, "record")]`, &records)
	// The expression and the records it reads, and the records those read.
	all, read := expr, map[string]bool{}
	for grown := true; grown; {
		grown = false
		for _, r := range records {
			if !read[r.Record] && regexp.MustCompile(`(^|[^a-zA-Z0-9_:])`+regexp.QuoteMeta(r.Record)+`($|[^a-zA-Z0-9_:])`).MatchString(all) {
				read[r.Record], grown = true, true
				all += "\n" + r.Expr
			}
		}
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(label) + `\s*(=~|=)\s*"([^"]*)"`)
	var vals []string
	for _, m := range re.FindAllStringSubmatch(all, -1) {
		if m[1] == "=" {
			vals = append(vals, m[2])
		} else {
			vals = append(vals, strings.Split(m[2], "|")...)
		}
	}
	return vals
}
