package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Seen reads each file's thread mentions once; a thread is cited wherever citation's pattern finds
// it: owner/repo#N, an issue or pull request URL, any case, after a '.' or '-', but not another
// number that begins with N.
func TestSeenThreadMentions(t *testing.T) {
	for _, c := range []struct {
		text  string
		cited bool
	}{
		{"source: \"kubernetes/kubernetes#123\"", true},
		{"see https://github.com/Kubernetes/Kubernetes/issues/123 for it", true},
		{"https://github.com/kubernetes/kubernetes/pull/123.", true},
		{"(foo.kubernetes/kubernetes#123)", true},
		{"kubernetes/kubernetes#1234", false},
		{"kubernetes/kubernetes-sigs#123", false},
		{"xkubernetes/kubernetes#123", false},
	} {
		path := filepath.Join(t.TempDir(), "held.yaml")
		if err := os.WriteFile(path, []byte("# "+c.text+"\n[]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		seen, err := LoadSeen([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		l := Line{Source: "kubernetes/kubernetes#123", Message: "a message no file holds"}
		if got := len(seen.Check(l)) > 0; got != c.cited {
			t.Errorf("%q: cited %v, want %v", c.text, got, c.cited)
		}
		if got := citation(l.Source).MatchString(c.text); got != c.cited {
			t.Errorf("%q: citation's pattern says %v, want %v", c.text, got, c.cited)
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
