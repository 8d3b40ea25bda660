package causes

import (
	"regexp"
	"regexp/syntax"
	"testing"
)

// printRE must print patterns back with the same meaning: same matches, same submatches.
func TestPrintREMeaning(t *testing.T) {
	patterns := []string{
		`(?i)^(?P<probe>liveness|readiness|startup) probe (?:failed|errored[^:]*):.*connection refused`,
		`(?i)configmaps? "[^"]*" not found`, `\bInsufficient \S+|Too many pods`,
		`(?m)^a$|(?s)b.c`, `x{2,3}y{2,}z{2}w*?v+?u??`, `(a)(?:b|)c\Bd`, `[[:alpha:]][^\]\n]\d\W`,
		`(?i)ſtraße|\x{212A}elvin`, `(?U)a+b`, `^$`, `a|^`, `(?i)[k-s]+`,
	}
	inputs := []string{"", "a", "bxc", "b\nc", "LIVENESS probe errored and more: connection refused",
		`configMaps "x" not found`, "Insufficient cpu", "xxyyyzzw", "aaac db", "A\n", "Straße", "STRASSE",
		"\u212Aelvin", "kelvin", "aab", "ab", "\xff\xfe", "K\u017F", "]x5-"}
	for _, p := range patterns {
		tree, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		orig := regexp.MustCompile(p)
		printed := printRE(tree)
		again, err := regexp.Compile(printed)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not compile: %v", p, printed, err)
		}
		for _, in := range inputs {
			a, b := orig.FindAllStringSubmatchIndex(in, -1), again.FindAllStringSubmatchIndex(in, -1)
			if len(a) != len(b) {
				t.Errorf("%q vs printed %q on %q: %v vs %v", p, printed, in, a, b)
				continue
			}
			for i := range a {
				for j := range a[i] {
					if a[i][j] != b[i][j] {
						t.Errorf("%q vs printed %q on %q: %v vs %v", p, printed, in, a, b)
					}
				}
			}
		}
	}
}
