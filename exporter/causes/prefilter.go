package causes

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// Matching cost. Go's regexp runs in linear time but is slow per byte, above all for a
// case-insensitive alternation, and most rules do not match most messages (docs/performance.md
// measures what this file saves). So each pattern is
// compiled into branches (its top-level alternatives) and each branch gets
//   - a prefilter: groups of literals such that every match contains a literal of each group,
//     checked with bytes.Contains on the ASCII-lower-cased ("folded") message;
//   - exact: the branch is nothing but a case-insensitive literal, so a prefilter hit is a match;
//   - folded: for case-insensitive patterns, a lower-cased case-sensitive copy of the regexp run
//     on the folded message (only when the message is pure ASCII, where both agree), which lets
//     Go's regexp use its literal-prefix search.
// Templates are never split (the capture group numbering must stay).

type branch struct {
	groups [][][]byte
	exact  bool
	// first and then, when set: the branch is exactly "<one of first>.*<one of then>" with
	// case-insensitive literals, decided by literal search on messages without a newline.
	first, then [][]byte
	re          *regexp.Regexp // on the message
	folded      *regexp.Regexp // on the folded message, nil when not applicable
}

func (b *branch) mayMatch(folded []byte) bool {
	for _, group := range b.groups {
		found := false
		for _, lit := range group {
			if bytes.Contains(folded, lit) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// match reports whether the branch matches. folded is the folded message; ascii tells whether the
// message was pure ASCII (then folded has the same length and offsets).
func (b *branch) match(message string, folded []byte, ascii bool) bool {
	if !b.mayMatch(folded) {
		return false
	}
	if b.exact {
		return true
	}
	if b.first != nil && bytes.IndexByte(folded, '\n') < 0 {
		return inOrder(folded, b.first, b.then)
	}
	if ascii && b.folded != nil {
		return b.folded.Match(folded)
	}
	return b.re.MatchString(message)
}

// inOrder reports whether some literal of first ends at or before the start of some literal of
// then in s.
func inOrder(s []byte, first, then [][]byte) bool {
	end := -1
	for _, l := range first {
		if i := bytes.Index(s, l); i >= 0 && (end < 0 || i+len(l) < end) {
			end = i + len(l)
		}
	}
	if end < 0 {
		return false
	}
	for _, l := range then {
		if bytes.Contains(s[end:], l) {
			return true
		}
	}
	return false
}

// submatch returns the submatch index pairs of a template branch, or nil.
func (b *branch) submatch(message string, folded []byte, ascii bool) []int {
	if !b.mayMatch(folded) {
		return nil
	}
	if ascii && b.folded != nil {
		return b.folded.FindSubmatchIndex(folded)
	}
	return b.re.FindStringSubmatchIndex(message)
}

// compileBranches splits a pattern into branches. split=false keeps it whole (templates).
func compileBranches(pattern string, split bool) ([]branch, error) {
	whole, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	subs := []*syntax.Regexp{tree}
	if split && tree.Op == syntax.OpAlternate {
		subs = tree.Sub
	}
	var out []branch
	for _, sub := range subs {
		b := branch{re: whole}
		if len(subs) > 1 {
			if b.re, err = regexp.Compile(printRE(sub)); err != nil {
				return nil, err
			}
		}
		groups, exact := required(sub.Simplify())
		b.exact = split && exact && len(groups) == 1
		for _, g := range groups {
			var bs [][]byte
			for _, l := range g {
				bs = append(bs, []byte(l))
			}
			b.groups = append(b.groups, bs)
		}
		if split {
			b.first, b.then = orderedPair(sub)
		}
		if lower, ok := lowerTree(sub); ok {
			if b.folded, err = regexp.Compile(printRE(lower)); err != nil {
				b.folded = nil
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// orderedPair recognises "L1.*L2" where L1 and L2 are exact literal sets.
func orderedPair(re *syntax.Regexp) (first, then [][]byte) {
	if re.Op != syntax.OpConcat || len(re.Sub) != 3 {
		return nil, nil
	}
	star := re.Sub[1]
	if star.Op != syntax.OpStar || star.Sub[0].Op != syntax.OpAnyCharNotNL {
		return nil, nil
	}
	g1, e1 := required(re.Sub[0])
	g2, e2 := required(re.Sub[2])
	if !e1 || !e2 || len(g1) != 1 || len(g2) != 1 {
		return nil, nil
	}
	return toBytes(g1[0]), toBytes(g2[0])
}

func toBytes(l []string) [][]byte {
	out := make([][]byte, len(l))
	for i, s := range l {
		out[i] = []byte(s)
	}
	return out
}

// required returns groups of literals such that every match of re contains a literal of each
// group (nil: nothing known), and whether re matches exactly the strings that contain one literal
// of its single group (case-insensitively).
func required(re *syntax.Regexp) (groups [][]string, exact bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return nil, false
		}
		fold := re.Flags&syntax.FoldCase != 0
		return [][]string{{strings.ToLower(s)}}, fold || !hasLetter(s)
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		g, _ := required(re.Sub[0])
		return g, false
	case syntax.OpRepeat:
		if re.Min >= 1 {
			g, _ := required(re.Sub[0])
			return g, false
		}
		return nil, false
	case syntax.OpAlternate:
		// One literal of some branch: each branch is reduced to its most selective group.
		var union []string
		exact := true
		for _, sub := range re.Sub {
			g, e := required(sub)
			if g == nil {
				return nil, false
			}
			best := g[0]
			for _, cand := range g[1:] {
				if minLen(cand) > minLen(best) {
					best = cand
				}
			}
			union = append(union, best...)
			exact = exact && e && len(g) == 1
		}
		return [][]string{union}, exact
	case syntax.OpConcat:
		// Every child's groups are needed. When every child is an exact literal set, the concat
		// is one too: the cross product (the parser factors "401 x|403 y" into "40(?:1 x|3 y)").
		var all [][]string
		cross, exact := []string{""}, true
		for _, sub := range re.Sub {
			g, e := required(sub)
			all = append(all, g...)
			if !e || len(g) != 1 || len(cross)*len(g[0]) > maxCross {
				exact = false
				continue
			}
			if exact {
				var next []string
				for _, a := range cross {
					for _, b := range g[0] {
						next = append(next, a+b)
					}
				}
				cross = next
			}
		}
		if exact && len(re.Sub) > 0 {
			return [][]string{cross}, true
		}
		return all, false
	}
	return nil, false
}

// lowerTree returns a copy of re that, run case-sensitively on ASCII-lower-cased ASCII text,
// matches exactly where re matches the original text. ok is false when there is no such copy
// (a case-sensitive letter, a character class that is not closed under ASCII case).
func lowerTree(re *syntax.Regexp) (*syntax.Regexp, bool) {
	c := *re
	c.Flags &^= syntax.FoldCase
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		c.Rune = make([]rune, len(re.Rune))
		for i, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil, false
			}
			if isLetter(byte(r)) && !fold {
				return nil, false
			}
			c.Rune[i] = toLower(r)
		}
		return &c, true
	case syntax.OpCharClass:
		if !classFoldClosed(re.Rune) {
			return nil, false
		}
		return &c, true
	}
	if len(re.Sub) > 0 {
		c.Sub = make([]*syntax.Regexp, len(re.Sub))
		for i, s := range re.Sub {
			l, ok := lowerTree(s)
			if !ok {
				return nil, false
			}
			c.Sub[i] = l
		}
	}
	return &c, true
}

// classFoldClosed reports whether a class (pairs of ranges) contains, for every ASCII letter it
// contains, the other case too.
func classFoldClosed(ranges []rune) bool {
	in := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	for r := 'a'; r <= 'z'; r++ {
		if in(r) != in(r-'a'+'A') {
			return false
		}
	}
	return true
}

const maxCross = 64

func minLen(l []string) int {
	m := -1
	for _, s := range l {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { c |= 0x20; return c >= 'a' && c <= 'z' }

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}

func toLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// foldInto writes s lower-cased into dst: ASCII letters are lower-cased, and the two non-ASCII
// runes that Unicode case folding maps onto ASCII letters (KELVIN SIGN → k, LONG S → s) are
// replaced by them, so a case-insensitive literal is found in dst whenever the regexp could match
// it in s. Other bytes are copied. dst must be at least len(s) long; the result is never longer
// than s. ascii reports whether s was pure ASCII (then the result has s's offsets).
func foldInto(dst []byte, s string) (folded []byte, ascii bool) {
	n := 0
	ascii = true
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst[n] = c
			n++
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\u212A':
			dst[n] = 'k'
			n++
		case '\u017F':
			dst[n] = 's'
			n++
		default:
			n += copy(dst[n:], s[i:i+size])
		}
		i += size
	}
	return dst[:n], ascii
}

var bufPool = sync.Pool{New: func() any { return new([MaxMessageBytes]byte) }}

// printRE prints a parsed regexp back as a pattern with the same meaning. (syntax.Regexp.String
// does too, but works out case-folding flags by walking every rune of every character class,
// which makes it take milliseconds for classes such as [^"].) Literals print their runes as
// \x{…} escapes, classes their ranges, and flags are spelt out locally.
func printRE(re *syntax.Regexp) string {
	var b strings.Builder
	writeRE(&b, re)
	return b.String()
}

func writeRE(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpNoMatch:
		b.WriteString(`[^\x{0}-\x{10FFFF}]`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(`(?i:`)
		}
		for _, r := range re.Rune {
			writeRune(b, r)
		}
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(`)`)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			b.WriteString(`[^\x{0}-\x{10FFFF}]`)
			return
		}
		b.WriteString(`[`)
		for i := 0; i+1 < len(re.Rune); i += 2 {
			fmt.Fprintf(b, `\x{%x}-\x{%x}`, re.Rune[i], re.Rune[i+1])
		}
		b.WriteString(`]`)
	case syntax.OpAnyCharNotNL:
		b.WriteString(`(?-s:.)`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine:
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine:
		b.WriteString(`(?m:$)`)
	case syntax.OpBeginText:
		b.WriteString(`\A`)
	case syntax.OpEndText:
		b.WriteString(`\z`)
	case syntax.OpWordBoundary:
		b.WriteString(`\b`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`\B`)
	case syntax.OpCapture:
		if re.Name != "" {
			b.WriteString(`(?P<` + re.Name + `>`)
		} else {
			b.WriteString(`(`)
		}
		writeRE(b, re.Sub[0])
		b.WriteString(`)`)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		b.WriteString(`(?:`)
		writeRE(b, re.Sub[0])
		b.WriteString(`)`)
		switch re.Op {
		case syntax.OpStar:
			b.WriteString(`*`)
		case syntax.OpPlus:
			b.WriteString(`+`)
		case syntax.OpQuest:
			b.WriteString(`?`)
		default:
			switch {
			case re.Max == -1:
				fmt.Fprintf(b, `{%d,}`, re.Min)
			case re.Min == re.Max:
				fmt.Fprintf(b, `{%d}`, re.Min)
			default:
				fmt.Fprintf(b, `{%d,%d}`, re.Min, re.Max)
			}
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString(`?`)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			writeRE(b, sub)
		}
	case syntax.OpAlternate:
		b.WriteString(`(?:`)
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteString(`|`)
			}
			writeRE(b, sub)
		}
		b.WriteString(`)`)
	default:
		// Every Op is handled above; this is a safety net for Ops added to Go later.
		b.WriteString(re.String())
	}
}

func writeRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == ' ') {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%x}`, r)
}

// MaxPatternCost bounds the regexp program of a table: the sum over its patterns of the
// instructions each expands to (patternCost). A pattern's program can be a thousand times its
// text (`\pL{1000}`, nine bytes, is a thousand instructions, ~100 KB once compiled with its
// branches and folded copy), so the file's size alone does not bound what a table takes to load;
// this does (docs/performance.md, "Hostile clients"). The built-in table costs less than a sixth
// of it (TestPatternCost).
const MaxPatternCost = 100_000

// patternCost is the number of instructions a pattern's program has once its repeats are
// expanded, estimated from the parse tree without expanding anything (as regexp/syntax counts
// them, within a few percent). A pattern that does not parse costs 0 (its error is reported).
func patternCost(pattern string) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0
	}
	return treeCost(re)
}

func treeCost(re *syntax.Regexp) int {
	n := 0
	for _, sub := range re.Sub {
		n += treeCost(sub)
	}
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCapture:
		return n + 2
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return n + 1
	case syntax.OpRepeat:
		if re.Max < 0 { // x{2,} is xx*
			return re.Min*n + n + 1
		}
		return re.Min*n + (re.Max-re.Min)*(n+1) // x{2,4} is xx(x(x)?)?
	case syntax.OpConcat:
		return n
	case syntax.OpAlternate:
		return n + len(re.Sub) - 1
	}
	return n + 1 // one instruction: a class, an anchor, an empty match
}
