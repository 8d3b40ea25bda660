// Package corpus scores a cause table on the corpus of real Event messages
// (exporter/causes/testdata) and renders docs/causes.md: the table's reference, its scores, and
// the messages of the e2e real node. The exporter does not link it: it is run by the tests and by
// hack/generate/causes-doc.sh (go run ./exporter/causes/corpus/gendoc).
package corpus

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes"
)

// Labels of corpus lines that are not a cause of the table.
const (
	// LabelNone marks an Event that reports no failure (a Normal lifecycle Event): the table
	// must not name a cause for it.
	LabelNone = "none"
	// LabelUnknowable marks a failure whose message cannot tell why (e.g. "Failed create pod
	// sandbox."): the table must not claim a specific cause for it.
	LabelUnknowable = "unknowable"
	// LabelOutOfScope marks a failure with a knowable cause that the table deliberately does not
	// name (docs/causes.md lists them).
	LabelOutOfScope = "out_of_scope"
)

// GenericCauses are the table's fallbacks, in table order: causes.yaml marks them `generic: true`
// (causes.Unknown always is). They say where something failed, not why: a corpus line that gets
// one of them is not "covered", and naming one is not a claim that precision counts.
func GenericCauses(t *causes.Table) []string {
	var out []string
	for _, c := range t.Causes() {
		if c.Generic {
			out = append(out, c.Name)
		}
	}
	return out
}

// IsGeneric reports whether cause is a generic fallback of the table.
func IsGeneric(t *causes.Table, cause string) bool {
	c, ok := t.Cause(cause)
	return ok && c.Generic
}

// Line is one real Event message of the corpus (exporter/causes/testdata/corpus).
type Line struct {
	// Reason, Type and Kind are the Event's reason, type and involved object kind.
	Reason string `json:"reason"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	// Source is where the message was found: "owner/repo#N" (an issue or pull request thread),
	// "owner/repo path" (a file of that repository), or a seed runbook / the real test node.
	Source string `json:"source"`
	// Cause is the cause the message tells, or LabelNone, LabelUnknowable, LabelOutOfScope.
	Cause string `json:"cause"`
	// Message is the Event's message, byte for byte as found.
	Message string `json:"message"`
	// Miss, on tuning lines only, says why the table knowingly gets this line wrong; the golden
	// test holds it to that, so a fixed line must lose its Miss.
	Miss string `json:"miss,omitempty"`
}

// Load reads a corpus file (a YAML list of Line).
func Load(path string) ([]Line, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []Line
	if err := yaml.UnmarshalStrict(data, &lines); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return lines, nil
}

// Score is how a table does on a corpus.
type Score struct {
	Lines int // lines scored
	// Named: lines for which the table names a specific (non-generic) cause; NamedRight: of
	// those, the ones where it is the labelled cause.
	Named, NamedRight int
	// Knowable: lines labelled with a specific cause; Covered: of those, the ones that get it.
	Knowable, Covered int
	// Labelled with LabelNone, LabelUnknowable, LabelOutOfScope or a generic cause.
	None, Unknowable, OutOfScope, Generic int
}

// Precision is NamedRight/Named in percent (100 when nothing is named).
func (s Score) Precision() float64 { return percent(s.NamedRight, s.Named) }

// Coverage is Covered/Knowable in percent (100 when nothing is knowable).
func (s Score) Coverage() float64 { return percent(s.Covered, s.Knowable) }

func percent(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

// Right reports whether the answer got that table t gives for a line labelled want is right: the
// labelled cause itself, or for a line without a specific cause, any generic answer.
func Right(t *causes.Table, want, got string) bool {
	if got == want {
		return true
	}
	specific := want != LabelNone && want != LabelUnknowable && want != LabelOutOfScope && !IsGeneric(t, want)
	return !specific && IsGeneric(t, got)
}

// ScoreTable classifies every line with the table and counts.
func ScoreTable(t *causes.Table, lines []Line) Score {
	var s Score
	for _, l := range lines {
		got := t.Classify(l.Reason, l.Message).Cause
		s.Lines++
		switch {
		case l.Cause == LabelNone:
			s.None++
		case l.Cause == LabelUnknowable:
			s.Unknowable++
		case l.Cause == LabelOutOfScope:
			s.OutOfScope++
		case IsGeneric(t, l.Cause):
			s.Generic++
		default:
			s.Knowable++
			if got == l.Cause {
				s.Covered++
			}
		}
		if !IsGeneric(t, got) {
			s.Named++
			if got == l.Cause {
				s.NamedRight++
			}
		}
	}
	return s
}
