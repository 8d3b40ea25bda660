package rules

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A rule a reader takes in at a glance: intermediate recording rules with names that say what
// they hold rather than one expression that does everything.
const (
	maxExprChars = 600
	maxExprLines = 15
)

// generatedRules lists every rule of the generated rule files with where it is.
type placedRule struct {
	file, group string
	index       int // position in the group
	groupIndex  int // position of the group in kubecause-rules.yaml, then kubecause-alerts.yaml
	rule
}

func (r placedRule) name() string { return r.Record + r.Alert }

func generatedRules(t *testing.T) []placedRule {
	var out []placedRule
	gi := 0
	for _, name := range []string{"kubecause-rules.yaml", "kubecause-alerts.yaml"} {
		for _, g := range generated(t, name).Groups {
			for i, r := range g.Rules {
				out = append(out, placedRule{file: name, group: g.Name, index: i, groupIndex: gi, rule: r})
			}
			gi++
		}
	}
	return out
}

// No generated rule's expression is longer than maxExprChars characters or maxExprLines lines.
func TestRuleLength(t *testing.T) {
	rules := generatedRules(t)
	type row struct {
		where        string
		chars, lines int
	}
	var over []row
	longest := row{}
	for _, r := range rules {
		e := strings.TrimRight(r.Expr, "\n")
		x := row{fmt.Sprintf("%s %s/%s", r.file, r.group, r.name()), len(e), strings.Count(e, "\n") + 1}
		if x.chars > longest.chars {
			longest = x
		}
		if x.chars > maxExprChars || x.lines > maxExprLines {
			over = append(over, x)
		}
	}
	sort.Slice(over, func(i, j int) bool { return over[i].chars > over[j].chars })
	for _, x := range over {
		t.Errorf("%s: %d characters, %d lines (at most %d and %d): split it into recording rules", x.where, x.chars, x.lines, maxExprChars, maxExprLines)
	}
	t.Logf("%d rules; the longest: %s, %d characters, %d lines", len(rules), longest.where, longest.chars, longest.lines)
}

var (
	quotedRE = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
	// A recording rule's name has colons (level:metric:operations); no exporter's metric has.
	recordNameRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*:[A-Za-z0-9_:]*`)
)

// readRecords returns the recording rules an expression reads.
func readRecords(expr string) []string {
	return recordNameRE.FindAllString(quotedRE.ReplaceAllString(expr, `""`), -1)
}

const stateMissingRecord = "cluster:kubecause_state_source_missing:info"

// The generated order is an evaluation order: promtool evaluates the groups in the order of the
// files (preparedUnitTests), so a recording rule reads only records of a group above its own or
// above it in its group (itself for held(): its value at the last evaluation). Every record that
// is read exists.
//
// Prometheus evaluates each group on its own schedule: a record of another group is read as that
// group last wrote it, up to an evaluation interval old. A recording rule reads from another group
// only the record of the missing state sources and the records held with it (lib.held): out of
// step, these are the last or the held value, never a state a source has not reported yet. They
// are the records rules/pint.hcl lets pint's rule/dependency check accept.
func TestRuleOrder(t *testing.T) {
	rules := generatedRules(t)
	defined := map[string]placedRule{}
	groups := map[string]bool{}
	for _, r := range rules {
		if r.Record == "" {
			continue
		}
		if _, dup := defined[r.Record]; dup {
			t.Errorf("record %s is defined twice", r.Record)
		}
		defined[r.Record] = r
	}
	sharable := func(d placedRule) bool {
		return d.Record == stateMissingRecord || strings.Contains(d.Expr, stateMissingRecord)
	}
	data, err := os.ReadFile("pint.hcl")
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`(?m)^\s*"([^"]+)",$`).FindAllStringSubmatch(string(data), -1)
	if len(listed) == 0 {
		t.Fatal("pint.hcl lists no record")
	}
	for _, m := range listed {
		name := m[1]
		if d, ok := defined[name]; !ok || !sharable(d) {
			t.Errorf("pint.hcl lets other groups read %s, which is not the missing sources' record or held with it", name)
		}
	}
	for _, r := range rules {
		if r.index == 0 {
			if groups[r.group] {
				t.Errorf("group %s twice", r.group)
			}
			groups[r.group] = true
		}
		for _, name := range readRecords(r.Expr) {
			d, ok := defined[name]
			switch {
			case !ok:
				t.Errorf("%s/%s reads %s, which no rule records", r.group, r.name(), name)
			case r.Record == "" || name == r.Record:
			case d.groupIndex > r.groupIndex || (d.groupIndex == r.groupIndex && d.index > r.index):
				t.Errorf("%s/%s reads %s, recorded after it (%s)", r.group, r.name(), name, d.group)
			case d.group != r.group && r.file == d.file && !sharable(d):
				t.Errorf("%s/%s reads %s of group %s: move them into one group, or hold it (lib.held)", r.group, r.name(), name, d.group)
			}
		}
	}
}

// Whether a state source is missing is defined once: only its record reads up{}; every record
// held through an outage reads that record (lib.held), none a copy of its expression.
func TestStateSourceHoldDefinedOnce(t *testing.T) {
	const missing = stateMissingRecord
	upRE := regexp.MustCompile(`(^|[^A-Za-z0-9_:])up\{`)
	held := 0
	for _, r := range generatedRules(t) {
		if r.Record == "" {
			continue
		}
		if upRE.MatchString(r.Expr) && r.Record != missing {
			t.Errorf("%s/%s reads up{}: read %s instead", r.group, r.Record, missing)
		}
		if strings.Contains(r.Expr, missing) {
			held++
		}
	}
	if held < 10 {
		t.Errorf("only %d records read %s", held, missing)
	}
}
