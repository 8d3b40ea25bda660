// Package labels makes strings safe as Prometheus label values. Every label value kubecause
// exports that comes from the cluster passes through Value.
package labels

import (
	"strings"
	"unicode/utf8"
)

// MaxBytes bounds every label value kubecause exports.
const MaxBytes = 128

// Value makes s a safe label value: valid UTF-8 (invalid bytes become U+FFFD) and at most MaxBytes
// bytes (longer values are cut at a rune boundary and end in "…"). An invalid byte in an Event must
// never make a scrape fail.
func Value(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= MaxBytes {
		return s
	}
	cut := MaxBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
