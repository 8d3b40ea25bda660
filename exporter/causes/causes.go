// Package causes turns a Kubernetes Event (reason and message) into a cause from a closed,
// versioned set, using a declarative table of rules: the first rule whose reasons and message
// pattern match wins, and "unknown" is the fallback.
//
// The built-in table is causes.yaml in this directory (embedded in the binary); users can load
// their own with Load. See docs/causes.md for the format and the list of causes.
package causes

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

// Unknown is the cause returned when no rule matches. Every table must declare it.
const Unknown = "unknown"

// CombinedPrefix is what client-go's event aggregator puts in front of the latest message when it
// folds similar events into one. It is stripped before matching.
const CombinedPrefix = "(combined from similar events): "

// MaxMessageBytes is how much of a message (after the prefix is stripped) the rules see. Longer
// messages are cut here, so a huge message costs no more than this to classify.
const MaxMessageBytes = 4096

//go:embed causes.yaml
var defaultYAML []byte

// Cause is one final cause of the table.
type Cause struct {
	// Name is the value of the cause label, e.g. "configmap_not_found".
	Name string `json:"name"`
	// Category groups causes; each category has one alert and one runbook page.
	Category string `json:"category"`
	// Meaning is a one-line explanation.
	Meaning string `json:"meaning"`
	// Runbook is "<page>#<anchor>"; see RunbookURL.
	Runbook string `json:"runbook"`
	// Symptom marks causes that are consequences of another cause (e.g. mount_timeout).
	Symptom bool `json:"symptom,omitempty"`
	// PodStart is set on causes that keep a pod from starting: "platform" (node, runtime, CNI,
	// disk, storage attach: counts against the pod-start SLO of the monitoring mixin) or
	// "workload" (the workload's own mistake, e.g. a missing ConfigMap or a typo'd image tag).
	PodStart string `json:"podStart,omitempty"`
	// Generic marks a fallback that says where something failed, not why: the catch-all cause of
	// a reason such as "sandbox_failed", and Unknown (always, marked or not). The corpus scores
	// (docs/causes.md) count naming one as no claim.
	Generic bool `json:"generic,omitempty"`
	// Target says where the shared thing an occurrence is about is read from: "registry", "node"
	// or a regular expression with a named group (?P<target>…) (target.go). Empty: no target.
	Target string `json:"target,omitempty"`
	// SymptomOf names the problem outside the object a cause follows from (e.g. "pvc": a claim
	// that cannot be bound), so the alert of that problem can inhibit the cause's alerts.
	SymptomOf string `json:"symptomOf,omitempty"`
}

// Rule maps Events to a cause.
type Rule struct {
	// ID is stable and unique, e.g. "volume.configmap_not_found"; it is the rule label of
	// kubecause_rule_hits_total.
	ID string `json:"id"`
	// Reasons the rule applies to (exact Event reasons); empty means any reason.
	Reasons []string `json:"reasons,omitempty"`
	// Pattern is a Go (RE2) regular expression matched against the message. It may be empty
	// when Reasons is not: the rule then matches any message of those reasons.
	Pattern string `json:"pattern"`
	// Cause is the cause name, or a template with one "{group}" placeholder that is replaced
	// by the text the named group of Pattern captured (compared case-insensitively with Values).
	Cause string `json:"cause"`
	// Values lists, for the template's group, the values it may take; a captured value not in
	// the list makes the rule not match. Only for template causes.
	Values map[string][]string `json:"values,omitempty"`
}

// Result is the outcome of Classify.
type Result struct {
	// Cause is the final cause name.
	Cause string
	// Rule is the ID of the rule that matched, "" when the fallback was used.
	Rule string
	// Target is what the cause's target reads from the message (a registry host, a plugin or
	// driver name, …), "" when it has none or the message does not name it. It may share memory
	// with the message. Not cut or sanitised: see labels.Value.
	Target string
	// TargetNode is set when the cause's target is the Event's node, which the message does not
	// tell: the caller takes source.host (or the Node the Event is about).
	TargetNode bool
}

// Table is a parsed and compiled cause table. It is safe for concurrent use.
type Table struct {
	version string
	causes  []Cause
	targets []*target // parallel to causes; nil: no target
	byName  map[string]int
	rules   []*rule
	// byReason holds the rules that name a reason, generic those that apply to any reason, each in
	// table order; Classify merges the two by position. (An index of each reason's rules with the
	// generic ones copied in grew as reasons × generic rules: 832 MiB held for a table of 256 KiB.)
	byReason map[string][]*rule
	generic  []*rule
	byID     map[string]*rule
}

type rule struct {
	Rule
	pos      int      // position in the table
	branches []branch // nil: matches any message (a rule with reasons and no pattern)
	cause    string   // final cause when not a template
	group    int      // submatch index of the template group; 0 when not a template
	values   []string // template values, parallel to causes
	causes   []string // final causes this rule can produce
}

type file struct {
	Version string  `json:"version"`
	Causes  []Cause `json:"causes"`
	Rules   []Rule  `json:"rules"`
}

var (
	nameRE     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	ruleIDRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]*$`)
	templateRE = regexp.MustCompile(`\{([^{}]*)\}`)
)

// Default returns the built-in table. It panics only if the embedded file is invalid, which a
// test guards against.
func Default() *Table {
	defaultOnce.Do(func() {
		t, err := Parse(defaultYAML)
		if err != nil {
			panic("causes: the built-in cause table is invalid: " + err.Error())
		}
		defaultTable = t
	})
	return defaultTable
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
)

// DefaultYAML returns a copy of the built-in table's source, a starting point for a custom table.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// MaxFileSize bounds a cause table file. What a table takes to load grows with its size (the
// reason index holds one entry per reason listed) and with its patterns' programs, which
// MaxPatternCost bounds: the worst table of this size loads with 66 MB allocated, 15 MB held
// (docs/performance.md, "Hostile clients"). The built-in table is a sixth of it.
const MaxFileSize = 256 << 10

// Load reads and parses a cause table file: a regular file of at most MaxFileSize bytes (not a
// FIFO or a device, which could block or never end).
func Load(path string) (*Table, error) {
	// Checked before opening: opening a FIFO blocks until someone writes to it.
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cause table: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("cause table %s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cause table: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("cause table: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("cause table %s: larger than %d KiB", path, MaxFileSize>>10)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("cause table %s: %w", path, err)
	}
	return t, nil
}

// Parse parses and validates a cause table (YAML or JSON). All problems found are reported
// together, each naming the cause or rule (index and id) and the field.
func Parse(data []byte) (*Table, error) {
	var f file
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("cannot decode: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	t := &Table{
		version:  strings.TrimSpace(f.Version),
		byName:   map[string]int{},
		byReason: map[string][]*rule{},
		byID:     map[string]*rule{},
	}
	if t.version == "" {
		fail("version: missing")
	}
	if len(f.Causes) == 0 {
		fail("causes: missing")
	}
	// The target patterns, then the rules' patterns, share MaxPatternCost: spend adds a pattern's
	// cost, and a pattern may be compiled only while the sum stays within it.
	cost := 0
	spend := func(pattern, this string) error {
		if cost > MaxPatternCost {
			return errPastBudget
		}
		if cost += patternCost(pattern); cost > MaxPatternCost {
			return fmt.Errorf("the patterns up to this %s expand to %d regexp instructions, more than the %d a table may have (docs/causes.md says what the built-in table needs): simplify the patterns (a repeat such as {1000} is expanded)",
				this, cost, MaxPatternCost)
		}
		return nil
	}
	for i, c := range f.Causes {
		where := fmt.Sprintf("causes[%d] (name %q)", i, c.Name)
		switch {
		case c.Name == "":
			fail("causes[%d]: name: missing", i)
			continue
		case !nameRE.MatchString(c.Name):
			fail("%s: name: must match %s", where, nameRE)
			continue
		}
		if _, dup := t.byName[c.Name]; dup {
			fail("%s: name: duplicate cause", where)
			continue
		}
		if c.Category == "" {
			fail("%s: category: missing", where)
		} else if !nameRE.MatchString(c.Category) {
			fail("%s: category: must match %s", where, nameRE)
		}
		if strings.TrimSpace(c.Meaning) == "" {
			fail("%s: meaning: missing", where)
		} else if strings.ContainsAny(c.Meaning, "\r\n") {
			fail("%s: meaning: must be one line", where)
		}
		if c.Runbook == "" {
			fail("%s: runbook: missing", where)
		} else if isAbsoluteURL(c.Runbook) {
			if u, err := url.Parse(c.Runbook); err != nil || u.Host == "" || strings.ContainsAny(c.Runbook, " \t\r\n") {
				fail("%s: runbook: not a valid URL: %q", where, c.Runbook)
			}
		} else if page, anchor, ok := strings.Cut(c.Runbook, "#"); !ok || page == "" || anchor == "" ||
			strings.ContainsAny(c.Runbook, " \t\r\n") || strings.Contains(anchor, "#") {
			fail("%s: runbook: must be \"<page>#<anchor>\", got %q", where, c.Runbook)
		}
		if c.SymptomOf != "" && !nameRE.MatchString(c.SymptomOf) {
			fail("%s: symptomOf: must match %s", where, nameRE)
		}
		if c.PodStart != "" && c.PodStart != "platform" && c.PodStart != "workload" {
			fail("%s: podStart: must be \"platform\" or \"workload\", got %q", where, c.PodStart)
		}
		tg, err := compileTarget(c.Target, spend)
		if err != nil && err != errPastBudget {
			fail("%s: target: %v", where, err)
		}
		c.Meaning = strings.TrimSpace(c.Meaning)
		t.byName[c.Name] = len(t.causes)
		t.causes = append(t.causes, c)
		t.targets = append(t.targets, tg)
	}
	if i, ok := t.byName[Unknown]; !ok && len(f.Causes) > 0 {
		fail("causes: the fallback cause %q must be declared", Unknown)
	} else if ok {
		// The fallback is generic whether a table marks it or not (tables written before the
		// field stay valid).
		t.causes[i].Generic = true
	}

	for i, r := range f.Rules {
		where := fmt.Sprintf("rules[%d] (id %q)", i, r.ID)
		bad := false
		check := func(ok bool, format string, args ...any) {
			if !ok {
				bad = true
				errs = append(errs, fmt.Errorf(where+": "+format, args...))
			}
		}
		check(r.ID != "", "id: missing")
		check(r.ID == "" || ruleIDRE.MatchString(r.ID), "id: must match %s", ruleIDRE)
		if _, dup := t.byID[r.ID]; dup && r.ID != "" {
			check(false, "id: duplicate rule id")
		}
		seen := map[string]bool{}
		for j, reason := range r.Reasons {
			check(strings.TrimSpace(reason) == reason && reason != "", "reasons[%d]: empty or padded reason %q", j, reason)
			check(!seen[reason], "reasons[%d]: duplicate reason %q", j, reason)
			seen[reason] = true
		}
		cr := &rule{Rule: r}
		template := templateRE.MatchString(r.Cause)
		if r.Pattern == "" {
			check(len(r.Reasons) > 0, "pattern: missing (only a rule with reasons may leave it out)")
		} else if err := spend(r.Pattern, "rule"); err != nil {
			check(err == errPastBudget, "pattern: %v", err)
			bad = true
		} else if br, err := compileBranches(r.Pattern, !template); err != nil {
			check(false, "pattern: %v", err)
		} else {
			cr.branches = br
		}
		if r.Cause == "" {
			check(false, "cause: missing")
		} else {
			compileCause(cr, t, check)
		}
		if bad {
			continue
		}
		t.byID[r.ID] = cr
		t.rules = append(t.rules, cr)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	// Reason index: for each reason named by a rule, the rules that name it, in table order; its
	// size is the number of reasons the table lists.
	for i, r := range t.rules {
		r.pos = i
		if len(r.Reasons) == 0 {
			t.generic = append(t.generic, r)
			continue
		}
		for _, reason := range r.Reasons {
			t.byReason[reason] = append(t.byReason[reason], r)
		}
	}
	// Kubernetes 1.0 and 1.1 wrote reasons with a lower-case first letter (failedSync,
	// failedScheduling, failedMount, failed): a rule's reason matches that spelling too, unless the
	// table names it as a reason of its own.
	for reason, rs := range t.byReason {
		if c := reason[0]; 'A' <= c && c <= 'Z' {
			if old := string(c+'a'-'A') + reason[1:]; t.byReason[old] == nil {
				t.byReason[old] = rs
			}
		}
	}
	return t, nil
}

// compileCause resolves a rule's cause (plain or template) against the declared causes.
func compileCause(cr *rule, t *Table, check func(bool, string, ...any)) {
	r := cr.Rule
	ph := templateRE.FindAllStringSubmatchIndex(r.Cause, -1)
	if len(ph) == 0 {
		check(len(r.Values) == 0, "values: only allowed with a \"{group}\" template in cause")
		_, ok := t.byName[r.Cause]
		check(ok, "cause: %q is not declared in causes", r.Cause)
		cr.cause = r.Cause
		cr.causes = []string{r.Cause}
		return
	}
	if len(ph) > 1 {
		check(false, "cause: at most one {group} placeholder is supported, got %q", r.Cause)
		return
	}
	group := r.Cause[ph[0][2]:ph[0][3]]
	if !nameRE.MatchString(group) {
		check(false, "cause: placeholder {%s} is not a valid group name", group)
		return
	}
	switch {
	case cr.branches != nil:
		cr.group = cr.branches[0].re.SubexpIndex(group)
		check(cr.group > 0, "pattern: has no named group (?P<%s>…) for the cause template", group)
	case r.Pattern == "":
		check(false, "pattern: missing (a template cause needs a named group (?P<%s>…))", group)
	}
	vals := r.Values[group]
	check(len(vals) > 0, "values: %s: missing (list the values the template group may take)", group)
	for k := range r.Values {
		check(k == group, "values: %s: no such placeholder in cause %q", k, r.Cause)
	}
	seen := map[string]bool{}
	for j, v := range vals {
		lv := strings.ToLower(v)
		if !nameRE.MatchString(lv) || seen[lv] {
			check(false, "values: %s[%d]: %q is empty, invalid or repeated", group, j, v)
			continue
		}
		seen[lv] = true
		final := r.Cause[:ph[0][0]] + lv + r.Cause[ph[0][1]:]
		_, ok := t.byName[final]
		check(ok, "cause: %q (for %s=%s) is not declared in causes", final, group, v)
		cr.values = append(cr.values, v)
		cr.causes = append(cr.causes, final)
	}
}

// errPastBudget is what a pattern after the one that went past MaxPatternCost gets: it is not
// compiled, and only the pattern that went past is reported.
var errPastBudget = errors.New("past the pattern budget")

// Version is the table's version string.
func (t *Table) Version() string { return t.version }

// Classify returns the cause of an Event with this reason and message. It never fails: when no
// rule matches, the cause is Unknown and Rule is "". It strips the aggregation prefix and looks
// only at the first MaxMessageBytes bytes of the message. Invalid UTF-8 is matched as U+FFFD.
// The result carries the cause's target (Result.Target, Result.TargetNode).
func (t *Table) Classify(reason, message string) Result {
	for strings.HasPrefix(message, CombinedPrefix) {
		message = message[len(CombinedPrefix):]
	}
	if len(message) > MaxMessageBytes {
		message = message[:MaxMessageBytes]
	}
	return t.withTarget(t.match(reason, message), message)
}

// withTarget reads the target of r's cause from message.
func (t *Table) withTarget(r Result, message string) Result {
	i, ok := t.byName[r.Cause]
	if !ok || t.targets[i] == nil {
		return r
	}
	if tg := t.targets[i]; tg.kind == TargetNode {
		r.TargetNode = true
	} else {
		r.Target = tg.extract(message)
	}
	return r
}

// match is Classify without the target, on the stripped and cut message.
func (t *Table) match(reason, message string) Result {
	specific, generic := t.byReason[reason], t.generic
	buf := bufPool.Get().(*[MaxMessageBytes]byte)
	defer bufPool.Put(buf)
	folded, ascii := foldInto(buf[:], message)
	// The rules of the reason and the generic rules, merged in table order.
	for len(specific) > 0 || len(generic) > 0 {
		var r *rule
		if len(generic) == 0 || len(specific) > 0 && specific[0].pos < generic[0].pos {
			r, specific = specific[0], specific[1:]
		} else {
			r, generic = generic[0], generic[1:]
		}
		if res, ok := r.classify(message, folded, ascii); ok {
			return res
		}
	}
	return Result{Cause: Unknown}
}

// classify applies one rule to a message (folded: its lower-case copy when ascii).
func (r *rule) classify(message string, folded []byte, ascii bool) (Result, bool) {
	if r.branches == nil {
		return Result{Cause: r.cause, Rule: r.ID}, true
	}
	if r.group == 0 {
		for i := range r.branches {
			if r.branches[i].match(message, folded, ascii) {
				return Result{Cause: r.cause, Rule: r.ID}, true
			}
		}
		return Result{}, false
	}
	loc := r.branches[0].submatch(message, folded, ascii)
	if loc == nil || loc[2*r.group] < 0 {
		return Result{}, false
	}
	// Offsets are the message's: the folded copy is used only for pure ASCII messages.
	captured := message[loc[2*r.group]:loc[2*r.group+1]]
	for i, v := range r.values {
		if strings.EqualFold(v, captured) {
			return Result{Cause: r.causes[i], Rule: r.ID}, true
		}
	}
	return Result{}, false
}

// Causes returns every cause of the table, including Unknown, in table order.
func (t *Table) Causes() []Cause { return append([]Cause(nil), t.causes...) }

// Cause returns the cause with this name.
func (t *Table) Cause(name string) (Cause, bool) {
	i, ok := t.byName[name]
	if !ok {
		return Cause{}, false
	}
	return t.causes[i], true
}

// Rules returns the rules in match order.
func (t *Table) Rules() []Rule {
	out := make([]Rule, len(t.rules))
	for i, r := range t.rules {
		out[i] = r.Rule
		out[i].Reasons = append([]string(nil), r.Reasons...)
		if r.Values != nil {
			out[i].Values = map[string][]string{}
			for k, v := range r.Values {
				out[i].Values[k] = append([]string(nil), v...)
			}
		}
	}
	return out
}

// RuleCauses returns the final causes a rule can produce (one, or one per template value), nil
// for an unknown rule id.
func (t *Table) RuleCauses(id string) []string {
	r, ok := t.byID[id]
	if !ok {
		return nil
	}
	return append([]string(nil), r.causes...)
}

// Outcomes returns every result Classify can give: each (rule, cause) pair in table order, then
// the fallback (Unknown, no rule).
func (t *Table) Outcomes() []Result {
	var out []Result
	for _, r := range t.rules {
		for _, c := range r.causes {
			out = append(out, Result{Cause: c, Rule: r.ID})
		}
	}
	return append(out, Result{Cause: Unknown})
}

// RunbookURL builds a runbook link from a pattern such as "https://example.com/docs/runbooks/%s.md"
// and a cause's runbook "page#anchor": the page replaces %s and the anchor is appended, giving
// ".../page.md#anchor". An empty pattern or runbook gives "". A runbook that is an absolute
// http(s) URL (a user's own wiki page) is the link as it is.
func RunbookURL(pattern, runbook string) string {
	if isAbsoluteURL(runbook) {
		return runbook
	}
	if pattern == "" || runbook == "" {
		return ""
	}
	page, anchor, hasAnchor := strings.Cut(runbook, "#")
	var u string
	if strings.Contains(pattern, "%s") {
		u = strings.Replace(pattern, "%s", page, 1)
	} else {
		u = strings.TrimSuffix(pattern, "/") + "/" + page
	}
	if hasAnchor && anchor != "" {
		u += "#" + anchor
	}
	return u
}

// isAbsoluteURL tells a runbook given as a link (http:// or https://) from a "page#anchor".
func isAbsoluteURL(runbook string) bool {
	return strings.HasPrefix(runbook, "https://") || strings.HasPrefix(runbook, "http://")
}
