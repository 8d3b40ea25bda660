package corpus

import (
	"github.com/kubecause/kubecause/exporter/causes"
	"regexp"
	"strings"
	"testing"
)

// The blind rounds (issue 26, blindRounds in scores.go): real messages from threads nobody here
// had read while writing the rules, labelled by hand before the table classified them. A round's
// score is taken once, when its rules are final, and kept as taken; these tests check that each
// set is what it claims to be — well formed, new (no message and no thread shared with what the
// table was tuned or checked against, nor with an earlier round), the very lines that were scored —
// and that the table never falls below a round's first score on it.
func blindPath(file string) string { return "../testdata/corpus/" + file }

// blindSeen are the files whose messages and threads round i must not share: everything else the
// corpus holds — the tuning and held-back sets, the real node's messages and every other round,
// earlier or later. Later rounds are checked too, in both directions, so that a tuning line added
// after a round (for the next table) cannot come from a blind round's thread either.
func blindSeen(i int) []string {
	seen := []string{tuningCorpus, heldBackCorpus, realNodeFile}
	for j, r := range blindRounds {
		if j != i {
			seen = append(seen, blindPath(r.file))
		}
	}
	return seen
}

// Every blind line is complete, labelled with a cause the table declares (not unknown) or one of
// the corpus labels, carries no known miss, and appears once — also once per reason after
// masking, so that a message pasted in two threads is not scored twice. A round keeps the lines
// its score was taken on: none added, none dropped.
func TestBlindCorpusWellFormed(t *testing.T) {
	tab := causes.Default()
	for _, r := range blindRounds {
		lines := loadCorpus(t, blindPath(r.file))
		if len(lines) != r.lines {
			t.Errorf("%s has %d lines, its score was taken on %d", r.file, len(lines), r.lines)
		}
		seen := map[string]int{}
		for i, l := range lines {
			if l.Reason == "" || l.Kind == "" || l.Source == "" || l.Message == "" {
				t.Errorf("%s:%d: reason, kind, source and message are required: %+v", r.file, i, l)
			}
			if l.Type != "Normal" && l.Type != "Warning" {
				t.Errorf("%s:%d: type %q", r.file, i, l.Type)
			}
			switch l.Cause {
			case LabelNone, LabelUnknowable, LabelOutOfScope:
			default:
				if _, ok := tab.Cause(l.Cause); !ok || l.Cause == causes.Unknown {
					t.Errorf("%s:%d (%s): cause %q is neither a cause of the table nor a label", r.file, i, l.Source, l.Cause)
				}
			}
			if l.Miss != "" {
				t.Errorf("%s:%d: a blind set is scored, not tuned: it has no known misses", r.file, i)
			}
			if threadOf(l.Source) == "" && !fileRE.MatchString(l.Source) && !strings.HasPrefix(l.Source, "https://") {
				t.Errorf("%s:%d: source %q is neither owner/repo#N, owner/repo path nor a URL", r.file, i, l.Source)
			}
			key := l.Reason + "\x00" + causes.Template(l.Message)
			if prev, dup := seen[key]; dup {
				t.Errorf("%s:%d (%s): same reason and masked message as line %d", r.file, i, l.Source, prev)
			}
			seen[key] = i
		}
	}
}

// No blind message equals, once masked (Template: names, numbers, IDs, quoted strings, paths),
// a message of the tuning set, the held-back set, the real node or another round, whatever its
// reason; and no blind thread is cited anywhere in those files (as owner/repo#N or as a GitHub URL).
func TestBlindCorpusUnseen(t *testing.T) {
	for ri, r := range blindRounds {
		seen, err := LoadSeen(blindSeen(ri))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range loadCorpus(t, blindPath(r.file)) {
			for _, why := range seen.Check(l) {
				t.Errorf("%s:%d (%s): %s", r.file, i, l.Source, why)
			}
		}
	}
}

// Each round's first score, taken once, is the floor: the table may get better on a round (its
// misses answered as classes by a later table), never worse than when the round was blind. The
// figures are printed, for comparison only: after the first score they are no longer blind.
func TestBlindRoundsScore(t *testing.T) {
	tab := causes.Default()
	for _, r := range blindRounds {
		s := ScoreTable(tab, loadCorpus(t, blindPath(r.file)))
		t.Logf("%s (first score with table %s: precision %.1f%% (%d/%d), coverage %.1f%% (%d/%d)): now precision %.1f%% (%d/%d), coverage %.1f%% (%d/%d)",
			r.file, r.version, percent(r.namedRight, r.named), r.namedRight, r.named, percent(r.covered, r.knowable), r.covered, r.knowable,
			s.Precision(), s.NamedRight, s.Named, s.Coverage(), s.Covered, s.Knowable)
		// a/b >= c/d, in integers
		if s.NamedRight*r.named < r.namedRight*s.Named {
			t.Errorf("%s: precision %.1f%% (%d/%d) below its first score %.1f%% (%d/%d)",
				r.file, s.Precision(), s.NamedRight, s.Named, percent(r.namedRight, r.named), r.namedRight, r.named)
		}
		if s.Covered*r.knowable < r.covered*s.Knowable {
			t.Errorf("%s: specific coverage %.1f%% (%d/%d) below its first score %.1f%% (%d/%d)",
				r.file, s.Coverage(), s.Covered, s.Knowable, percent(r.covered, r.knowable), r.covered, r.knowable)
		}
	}
}

// fileRE matches a file of a public repository: "owner/repo path/to/file" (a path may hold spaces).
var fileRE = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+ [^ #][^#]*$`)

// The source forms the checks above read (what Seen finds is TestSeenCitations).
func TestBlindCitation(t *testing.T) {
	if !fileRE.MatchString("longhorn/website content/kb/x.md") || !fileRE.MatchString("o/r docs/a guide/b.md") ||
		fileRE.MatchString("kubernetes/kubernetes#1") || fileRE.MatchString("kubernetes/kubernetes #1") {
		t.Error("fileRE")
	}
	if threadOf("kubernetes/kubernetes#1") == "" || threadOf("kubernetes/kubernetes#1 (issue title)") == "" ||
		threadOf("kubernetes/kubernetes path/to/file") != "" {
		t.Error("threadOf")
	}
}
