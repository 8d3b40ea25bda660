package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A candidate from a thread the corpus cites, one whose masked message it holds, and two that
// repeat each other are reported; a new one is not; the corpus file given as a candidate is
// checked against the others, not against itself.
func TestRun(t *testing.T) {
	data := filepath.Join("..", "..", "testdata")
	dir := t.TempDir()
	write := func(name, yml string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	line := func(source, message string) string {
		return "- {reason: Failed, type: Warning, kind: Pod, source: \"" + source + "\", cause: none, message: \"" + message + "\"}\n"
	}
	for _, c := range []struct {
		name, yml string
		want      int
	}{
		{"new", line("example/new#1", "a message no corpus file holds, surely"), 0},
		{"cited", line("k3s-io/k3s#916", "another message no corpus file holds"), 1},
		{"held", line("example/new#2", `MountVolume.SetUp failed for volume \"x\" : configmap \"y\" not found`), 1},
		{"twice", line("example/new#3", "a message said twice") + line("example/new#4", "a message said twice"), 1},
	} {
		n, err := run(data, []string{write(c.name+".yaml", c.yml)})
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%s: %d lines reported, want %d", c.name, n, c.want)
		}
	}
	n, err := run(data, []string{filepath.Join(data, "corpus", "blind10.yaml")})
	if err != nil || n != 0 {
		t.Errorf("blind10.yaml as the candidate: %d lines reported (%v), want 0", n, err)
	}
}
