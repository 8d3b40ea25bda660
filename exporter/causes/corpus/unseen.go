package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kubecause/kubecause/exporter/causes"
)

// Seen is what a blind round must not share with the rest of the corpus: its masked messages
// (causes.Template: names, numbers, IDs, quoted strings, paths) and the threads its files cite.
type Seen struct {
	masked  map[string]string // masked message -> file:line that holds it
	threads map[string]string // "owner/repo#n" (lower case) -> the first file that cites the thread
	sources map[string]string // a line's source as decoded (a file's path may be \u-escaped in the YAML) -> its file
	files   []string
	raw     []string
}

// LoadSeen reads corpus files (a YAML list of Line, or the real node's recording file when its
// base name is real-node.yaml).
func LoadSeen(paths []string) (*Seen, error) {
	s := &Seen{masked: map[string]string{}, threads: map[string]string{}, sources: map[string]string{}}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		s.files, s.raw = append(s.files, path), append(s.raw, string(b))
		for _, m := range mentionRE.FindAllStringSubmatch(string(b), -1) {
			// A mention may also begin after a '.' or '-' inside what this match took as the
			// owner ("foo.owner/repo#1" cites owner/repo#1).
			for repo := m[1]; ; {
				if k := threadKey(repo, m[2]); s.threads[k] == "" {
					s.threads[k] = path
				}
				i := strings.IndexAny(repo[:strings.IndexByte(repo, '/')], ".-")
				if i < 0 {
					break
				}
				repo = repo[i+1:]
			}
		}
		if filepath.Base(path) == "real-node.yaml" {
			rn, err := LoadRealNode(path)
			if err != nil {
				return nil, err
			}
			for _, m := range rn.Messages {
				s.masked[causes.Template(m.Message)] = path
			}
			continue
		}
		lines, err := Load(path)
		if err != nil {
			return nil, err
		}
		for i, l := range lines {
			s.masked[causes.Template(l.Message)] = fmt.Sprintf("%s:%d", path, i)
			if s.sources[l.Source] == "" {
				s.sources[l.Source] = path
			}
		}
	}
	return s, nil
}

// Check says why a line is not new: its message, masked, is one the files hold, or its thread is
// cited in one of them. Nil when it is new.
func (s *Seen) Check(l Line) []string {
	var why []string
	if where, ok := s.masked[causes.Template(l.Message)]; ok {
		why = append(why, fmt.Sprintf("message %q is, masked, the message of %s", l.Message, where))
	}
	if where, ok := s.sources[l.Source]; ok {
		return append(why, fmt.Sprintf("%s is cited in %s", l.Source, where))
	}
	if m := threadRE.FindStringSubmatch(l.Source); m != nil {
		if where, ok := s.threads[threadKey(m[1], m[2])]; ok {
			why = append(why, fmt.Sprintf("thread %s is cited in %s", l.Source, where))
		}
		return why
	}
	for j, text := range s.raw {
		if strings.Contains(text, l.Source) {
			why = append(why, fmt.Sprintf("%s is cited in %s", l.Source, s.files[j]))
		}
	}
	return why
}

// mentionRE finds every mention of a GitHub thread in a file: owner/repo#N (not followed by another
// digit, whatever note follows it) or …/owner/repo/issues|pull/N, in any case. The files' mentions
// are read once (LoadSeen), not once a line; a file or URL source is looked for as written.
var mentionRE = regexp.MustCompile(`\b([A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+)(?:#|/issues/|/pull/)([0-9]+)\b`)

func threadKey(repo, n string) string { return strings.ToLower(repo) + "#" + n }

var threadRE = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+)#([0-9]+)(?: \([^)]*\))?$`)

// threadOf returns the source if it names a GitHub thread ("owner/repo#N", optionally followed by a
// note in parentheses such as "(issue title)"), "" otherwise.
func threadOf(source string) string {
	if threadRE.MatchString(source) {
		return source
	}
	return ""
}
