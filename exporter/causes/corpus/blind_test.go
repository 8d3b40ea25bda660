package corpus

import (
	"github.com/kubecause/kubecause/exporter/causes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// blindCorpus is the blind set (issue 26): real messages from threads nobody here had read while
// writing the rules, labelled by hand before the table classified them. Its score is taken once,
// by someone who did not collect it; this file only checks that the set is what it claims to be:
// well formed, and new — no message and no thread shared with what the table was tuned or
// checked against. It asserts no score.
const blindCorpus = "../testdata/corpus/blind.yaml"

// The blind set may grow, never shrink below this.
const minBlindLines = 150

// seenCorpora are the files whose messages and threads the blind set must not share.
var seenCorpora = []string{tuningCorpus, heldBackCorpus, realNodeFile}

// Every blind line is complete, labelled with a cause the table declares (not unknown) or one of
// the corpus labels, carries no known miss, and appears once — also once per reason after
// masking, so that a message pasted in two threads is not scored twice.
func TestBlindCorpusWellFormed(t *testing.T) {
	tab := causes.Default()
	lines := loadCorpus(t, blindCorpus)
	if len(lines) < minBlindLines {
		t.Errorf("%s has %d lines, want at least %d", blindCorpus, len(lines), minBlindLines)
	}
	seen := map[string]int{}
	for i, l := range lines {
		if l.Reason == "" || l.Kind == "" || l.Source == "" || l.Message == "" {
			t.Errorf("blind.yaml:%d: reason, kind, source and message are required: %+v", i, l)
		}
		if l.Type != "Normal" && l.Type != "Warning" {
			t.Errorf("blind.yaml:%d: type %q", i, l.Type)
		}
		switch l.Cause {
		case LabelNone, LabelUnknowable, LabelOutOfScope:
		default:
			if _, ok := tab.Cause(l.Cause); !ok || l.Cause == causes.Unknown {
				t.Errorf("blind.yaml:%d (%s): cause %q is neither a cause of the table nor a label", i, l.Source, l.Cause)
			}
		}
		if l.Miss != "" {
			t.Errorf("blind.yaml:%d: the blind set is scored, not tuned: it has no known misses", i)
		}
		if threadOf(l.Source) == "" && !strings.HasPrefix(l.Source, "https://") {
			t.Errorf("blind.yaml:%d: source %q is neither owner/repo#N nor a URL", i, l.Source)
		}
		key := l.Reason + "\x00" + causes.Template(l.Message)
		if prev, dup := seen[key]; dup {
			t.Errorf("blind.yaml:%d (%s): same reason and masked message as line %d", i, l.Source, prev)
		}
		seen[key] = i
	}
}

// No blind message equals, once masked (Template: names, numbers, IDs, quoted strings, paths),
// a message of the tuning set, the held-back set or the real node, whatever its reason; and no
// blind thread is cited anywhere in those files (as owner/repo#N or as a GitHub URL).
func TestBlindCorpusUnseen(t *testing.T) {
	masked := map[string]string{}
	var raw []string
	for _, path := range seenCorpora {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, string(b))
		if path == realNodeFile {
			rn, err := LoadRealNode(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range rn.Messages {
				masked[causes.Template(m.Message)] = path
			}
			continue
		}
		for i, l := range loadCorpus(t, path) {
			masked[causes.Template(l.Message)] = path + ":" + strconv.Itoa(i)
		}
	}
	for i, l := range loadCorpus(t, blindCorpus) {
		if where, ok := masked[causes.Template(l.Message)]; ok {
			t.Errorf("blind.yaml:%d (%s): message %q is, masked, the message of %s", i, l.Source, l.Message, where)
		}
		cited := citation(l.Source)
		for j, text := range raw {
			if cited.MatchString(text) {
				t.Errorf("blind.yaml:%d: thread %s is cited in %s", i, l.Source, seenCorpora[j])
			}
		}
	}
}

var threadRE = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+)#([0-9]+)(?: \([^)]*\))?$`)

// threadOf returns the source if it names a GitHub thread ("owner/repo#N", optionally followed by a
// note in parentheses such as "(issue title)"), "" otherwise.
func threadOf(source string) string {
	if threadRE.MatchString(source) {
		return source
	}
	return ""
}

// citation matches a mention of source's thread in a corpus file: owner/repo#N (not followed by
// another digit, whatever note follows it) or https://github.com/owner/repo/issues|pull/N; for a
// URL source, the URL itself.
func citation(source string) *regexp.Regexp {
	m := threadRE.FindStringSubmatch(source)
	if m == nil {
		return regexp.MustCompile(regexp.QuoteMeta(source))
	}
	repo, n := regexp.QuoteMeta(m[1]), m[2]
	return regexp.MustCompile(`(?i)\b` + repo + `(?:#|/issues/|/pull/)` + n + `\b`)
}

// The checks above find what they are meant to find.
func TestBlindCitation(t *testing.T) {
	for _, c := range []struct {
		source, text string
		want         bool
	}{
		{"kubernetes/kubernetes#4567", `source: "kubernetes/kubernetes#4567"`, true},
		{"kubernetes/kubernetes#4567", `source: "kubernetes/kubernetes#4567 (scheduler log)"`, true},
		{"kubernetes/kubernetes#4567", `source: "kubernetes/kubernetes#45670"`, false},
		{"kubernetes/kubernetes#4567", `see https://github.com/kubernetes/kubernetes/issues/4567`, true},
		{"kubernetes/kubernetes#4567", `source: "other/kubernetes#4567"`, false},
		{"Azure/AKS#2383", `source: "azure/aks#2383"`, true},
		{"kubernetes/kubernetes#4567 (issue title)", `source: "kubernetes/kubernetes#4567"`, true},
		{"https://example.org/q/1", `source: "https://example.org/q/1"`, true},
	} {
		if got := citation(c.source).MatchString(c.text); got != c.want {
			t.Errorf("citation(%q) on %q: %v, want %v", c.source, c.text, got, c.want)
		}
	}
	if threadOf("kubernetes/kubernetes#1") == "" || threadOf("kubernetes/kubernetes#1 (issue title)") == "" ||
		threadOf("kubernetes/kubernetes path/to/file") != "" {
		t.Error("threadOf")
	}
}
