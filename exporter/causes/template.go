package causes

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxTemplateBytes bounds a template (a label value of kubecause_unclassified_messages): the words
// that tell a failure come first in Kubernetes messages, the tail is mostly names and paths.
const MaxTemplateBytes = 200

// Placeholders Template puts where a message varies between occurrences of the same failure.
const (
	maskQuoted = `"<q>"`
	maskURL    = "<url>"
	maskUID    = "<uid>"
	maskHex    = "<hex>"
	maskIP     = "<ip>"
	maskPath   = "<path>"
	maskName   = "<name>"
	maskNum    = "<n>"
)

// The masks, applied in order: the earlier ones must go first because they contain what the later
// ones match (a quoted string holds paths and numbers, a URL an IP, a UID hex digits).
var templateMasks = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Quoted strings. Those escaped inside an error that was quoted again (\"…\") go first and
	// leave no quote behind, so the outer string still pairs up.
	{regexp.MustCompile(`\\+"(?:[^"\\]|\\[^"])*\\+"`), "<q>"},
	{regexp.MustCompile(`"(?:[^"\\]|\\.)*"`), maskQuoted},
	// Single quotes only when they open after a non-letter, so "didn't match Pod's" stays.
	{regexp.MustCompile(`(^|[^\pL])'[^'\n]*'`), "${1}'<q>'"},
	{regexp.MustCompile(`\bhttps?://[^\s"']+`), maskURL},
	// UIDs, also glued to a prefix as in cgroup names ("pod<uid>").
	{regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), maskUID},
	// Digests and container, sandbox and image IDs: 12 or more hexadecimal digits.
	{regexp.MustCompile(`(?i)\b(?:sha256:)?[0-9a-f]{12,}\b`), maskHex},
	{regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?:/\d{1,2})?\b`), maskIP},
	{regexp.MustCompile(`\[[0-9a-fA-F:]*:[0-9a-fA-F:]+\](?::\d+)?`), maskIP},
	// Absolute paths (after a space, a colon, "=", "(" or "[", or at the start).
	{regexp.MustCompile(`(^|[\s:=(\[])/[^\s:,;"'()\[\]]+`), "${1}" + maskPath},
	// Generated names: a last dash-separated part of 5 characters from the alphabet Kubernetes
	// uses for generated suffixes (no vowels), optionally after a ReplicaSet hash and a namespace.
	{regexp.MustCompile(`\b[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?-[bcdfghjklmnpqrstvwxz2456789]{5}(?:_[a-z0-9-]+)?\b`), maskName},
	// Numbers with an optional unit or duration suffix (5, 0.5, 1024Mi, 3m20s, 99%).
	{regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[a-zA-Zµ]{1,3}\d*)*%?`), maskNum},
}

// Template masks what varies between occurrences of the same failure in an Event message —
// quoted strings, URLs, UIDs, hexadecimal IDs and digests, IP addresses, absolute paths,
// generated object names and numbers — so that occurrences group into one template: the label
// of kubecause_unclassified_messages and the key of Unclassified. The aggregation prefix is
// removed first, and the result is cut to MaxTemplateBytes on a UTF-8 boundary. Invalid UTF-8
// is replaced, so a template is always valid UTF-8.
func Template(message string) string {
	for strings.HasPrefix(message, CombinedPrefix) {
		message = message[len(CombinedPrefix):]
	}
	if len(message) > MaxMessageBytes {
		message = message[:MaxMessageBytes]
	}
	s := strings.ToValidUTF8(message, "\uFFFD")
	for _, m := range templateMasks {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxTemplateBytes {
		cut := MaxTemplateBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimRight(s[:cut], " ")
	}
	return s
}
