package labels

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"FailedMount", "FailedMount"},
		{"a\xffb", "a\uFFFDb"},
		{"", ""},
	} {
		if got := Value(tc.in); got != tc.want {
			t.Errorf("Value(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := Value(strings.Repeat("é", 200))
	if len(long) > MaxBytes || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Fatalf("long value: %d bytes, valid=%v: %q", len(long), utf8.ValidString(long), long)
	}
}

func FuzzValue(f *testing.F) {
	f.Add("FailedMount")
	f.Add("x\xff\xfe" + strings.Repeat("é", 100))
	f.Fuzz(func(t *testing.T, s string) {
		v := Value(s)
		if !utf8.ValidString(v) || len(v) > MaxBytes {
			t.Fatalf("Value(%q) = %q: valid=%v len=%d", s, v, utf8.ValidString(v), len(v))
		}
		if utf8.ValidString(s) && len(s) <= MaxBytes && v != s {
			t.Fatalf("a valid short value was changed: %q → %q", s, v)
		}
	})
}
