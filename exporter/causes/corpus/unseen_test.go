package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Seen finds a source where a held file cites it: a thread as owner/repo#N (with or without a note
// after it, in any case, after a '.' or '-', but not another number that begins with N, nor another
// owner) or as an issue or pull request URL; a URL source as written.
func TestSeenCitations(t *testing.T) {
	for _, c := range []struct {
		source, text string
		cited        bool
	}{
		{"kubernetes/kubernetes#4567", `source: "kubernetes/kubernetes#4567"`, true},
		{"kubernetes/kubernetes#4567", `source: "kubernetes/kubernetes#4567 (scheduler log)"`, true},
		{"kubernetes/kubernetes#4567", `source: "kubernetes/kubernetes#45670"`, false},
		{"kubernetes/kubernetes#4567", `see https://github.com/kubernetes/kubernetes/issues/4567`, true},
		{"kubernetes/kubernetes#4567", `source: "other/kubernetes#4567"`, false},
		{"Azure/AKS#2383", `source: "azure/aks#2383"`, true},
		{"kubernetes/kubernetes#4567 (issue title)", `source: "kubernetes/kubernetes#4567"`, true},
		{"https://example.org/q/1", `source: "https://example.org/q/1"`, true},
		{"kubernetes/kubernetes#123", "see https://github.com/Kubernetes/Kubernetes/issues/123 for it", true},
		{"kubernetes/kubernetes#123", "https://github.com/kubernetes/kubernetes/pull/123.", true},
		{"kubernetes/kubernetes#123", "(foo.kubernetes/kubernetes#123)", true},
		{"kubernetes/kubernetes#123", "kubernetes/kubernetes#1234", false},
		{"kubernetes/kubernetes#123", "kubernetes/kubernetes-sigs#123", false},
		{"kubernetes/kubernetes#123", "xkubernetes/kubernetes#123", false},
	} {
		path := filepath.Join(t.TempDir(), "held.yaml")
		if err := os.WriteFile(path, []byte("# "+c.text+"\n[]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		seen, err := LoadSeen([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		l := Line{Source: c.source, Message: "a message no file holds"}
		if got := len(seen.Check(l)) > 0; got != c.cited {
			t.Errorf("%s in %q: cited %v, want %v", c.source, c.text, got, c.cited)
		}
	}
}

// A file's path is compared as the YAML decodes it: one set may write it \u-escaped, another not
// (rounds 12 and 13 cited one file so, and the raw-text search missed it).
func TestSeenEscapedSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.yaml")
	held := "- reason: \"SuccessfulDelete\"\n  type: Normal\n  kind: CronJob\n  source: \"o/r 02~\\u8d44\\u6e90/README.md\"\n  cause: none\n  message: \"Deleted job a\"\n"
	if err := os.WriteFile(path, []byte(held), 0o600); err != nil {
		t.Fatal(err)
	}
	seen, err := LoadSeen([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if why := seen.Check(Line{Source: "o/r 02~资源/README.md", Message: "a message no file holds"}); len(why) == 0 {
		t.Error("a file cited \\u-escaped in another set was not found")
	}
}
