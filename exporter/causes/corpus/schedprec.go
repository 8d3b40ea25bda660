package corpus

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/kubecause/kubecause/exporter/causes"
)

// SchedulingGroup is one group of nodes a kube-scheduler FailedScheduling message lists: how many
// nodes, and the reason text ("Insufficient cpu", "node(s) had untolerated taint {…}").
type SchedulingGroup struct {
	Nodes  int
	Reason string
}

// The scheduler's wordings across releases: "0/N nodes are available: <groups>." (1.9+, with a
// "preemption: …" tail from 1.22 and "no new claims to deallocate" in some 1.3x releases), "No
// nodes are available that match all of the following predicates:: <groups>." (1.6-1.8) and
// "fit failure summary on nodes : <groups>" (1.4-1.5). In the first form a group is "<n> <reason>",
// in the other two "<reason> (<n>)".
var (
	schedHead     = regexp.MustCompile(`(?i)(?:nodes are available: |match all of the (?:following )?predicates:?: |fit failure summary on nodes : )`)
	schedTail     = regexp.MustCompile(`(?i)\.? *(?:preemption:|no new claims to deallocate)|\.\s*$`)
	groupLeading  = regexp.MustCompile(`^(\d+) (.+)$`)
	groupTrailing = regexp.MustCompile(`^(.+?) \((\d+)\)$`)
)

// SchedulingGroups parses the node groups of a multi-reason scheduler message; nil when the
// message has no such list. A reason that contains ", " (a taint with its old "…}, that the pod
// didn't tolerate" wording) stays one group.
func SchedulingGroups(message string) []SchedulingGroup {
	loc := schedHead.FindStringIndex(message)
	if loc == nil {
		return nil
	}
	body := message[loc[1]:]
	if t := schedTail.FindStringIndex(body); t != nil {
		body = body[:t[0]]
	}
	var out []SchedulingGroup
	for _, part := range strings.Split(body, ", ") {
		part = strings.TrimSpace(part)
		if m := groupLeading.FindStringSubmatch(part); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, SchedulingGroup{Nodes: n, Reason: m[2]})
			continue
		}
		if m := groupTrailing.FindStringSubmatch(part); m != nil {
			n, _ := strconv.Atoi(m[2])
			out = append(out, SchedulingGroup{Nodes: n, Reason: m[1]})
			continue
		}
		if len(out) > 0 { // the rest of the previous group's reason
			out[len(out)-1].Reason += ", " + part
		}
	}
	return out
}

// alone is the scheduler message as it would read if g were the only group it listed: the same
// head ("0/17 nodes are available: ", "… predicates:: "), that group in the form of the head, and
// a final ".".
func alone(message string, g SchedulingGroup) string {
	loc := schedHead.FindStringIndex(message)
	if loc == nil {
		return g.Reason
	}
	head := message[:loc[1]]
	if strings.HasSuffix(head, "nodes are available: ") {
		return head + strconv.Itoa(g.Nodes) + " " + g.Reason + "."
	}
	return head + g.Reason + " (" + strconv.Itoa(g.Nodes) + ")."
}

// PrecedenceScore compares two ways to name the cause of the corpus's multi-reason scheduler
// messages (FailedScheduling lines whose groups the table maps to at least two different causes):
// the table's declared precedence, and the cause of the group that covers the most nodes (the
// table applied to the message listing that group alone; the first such group on a tie).
type PrecedenceScore struct {
	Lines, Precedence, MostNodes int
}

// ScoreSchedulingPrecedence counts, on lines, how often each way gives the labelled cause.
func ScoreSchedulingPrecedence(t *causes.Table, lines []Line) PrecedenceScore {
	var s PrecedenceScore
	for _, l := range lines {
		if l.Reason != "FailedScheduling" {
			continue
		}
		groups := SchedulingGroups(l.Message)
		distinct := map[string]bool{}
		best, bestCause := -1, ""
		for _, g := range groups {
			c := t.Classify(l.Reason, alone(l.Message, g)).Cause
			distinct[c] = true
			if g.Nodes > best {
				best, bestCause = g.Nodes, c
			}
		}
		if len(distinct) < 2 {
			continue
		}
		s.Lines++
		if Right(t, l.Cause, t.Classify(l.Reason, l.Message).Cause) {
			s.Precedence++
		}
		if Right(t, l.Cause, bestCause) {
			s.MostNodes++
		}
	}
	return s
}

// GuardScore is how the table treats corpus lines whose message cannot tell a specific cause
// (labelled none, unknowable or out_of_scope): Silent of them get no specific cause, Unknown of
// those exactly "unknown" (no rule at all).
type GuardScore struct {
	Lines, Silent, Unknown int
}

// ScoreGuard counts the lines a precision guard is about.
func ScoreGuard(t *causes.Table, lines []Line) GuardScore {
	var s GuardScore
	for _, l := range lines {
		if l.Cause != LabelNone && l.Cause != LabelUnknowable && l.Cause != LabelOutOfScope {
			continue
		}
		s.Lines++
		got := t.Classify(l.Reason, l.Message).Cause
		if IsGeneric(t, got) {
			s.Silent++
		}
		if got == causes.Unknown {
			s.Unknown++
		}
	}
	return s
}
