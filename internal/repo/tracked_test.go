package repo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file git may track outside a testdata/ folder: the biggest
// generated file (a deploy overlay's rendered rules) is about 160 KiB.
const maxTrackedBytes = 512 << 10

// TestNoBuildOutputTracked: git tracks no executable (ELF, Mach-O, PE or an exec-bit file that is
// not a script) and no file over maxTrackedBytes outside testdata/: build output stays out of the
// repository and of every image build context (COPY . .).
func TestNoBuildOutputTracked(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err) // a source tarball has no index to check
	}
	checked := 0
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(string(rec), "\t")
		if !ok {
			t.Fatalf("git ls-files -s: unexpected record %q", rec)
		}
		checked++
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if reason := buildOutput(strings.HasPrefix(meta, "100755"), b); reason != "" {
			t.Errorf("%s is tracked by git but is %s: untrack it (git rm --cached) and list it in .gitignore", path, reason)
		}
		if len(b) > maxTrackedBytes && !strings.Contains("/"+path, "/testdata/") {
			t.Errorf("%s is tracked by git and holds %d bytes (> %d outside testdata/): build output or data that belongs elsewhere", path, len(b), maxTrackedBytes)
		}
	}
	if checked < 100 {
		t.Fatalf("git ls-files listed %d files: the listing is broken", checked)
	}
}

// buildOutput says why a file's content is build output, or "".
func buildOutput(execBit bool, b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "an ELF executable"
	case bytes.HasPrefix(b, []byte{0xcf, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xcf}):
		return "a Mach-O executable"
	case bytes.HasPrefix(b, []byte("MZ")):
		return "a PE executable"
	case execBit && !bytes.HasPrefix(b, []byte("#!")):
		return "executable but not a script"
	}
	return ""
}

func TestBuildOutputDetects(t *testing.T) {
	for _, c := range []struct {
		exec bool
		b    string
		want bool
	}{
		{false, "\x7fELF\x02\x01", true},
		{true, "\x00\x00binary", true},
		{true, "#!/usr/bin/env bash\n", false},
		{false, "package main\n", false},
		{false, "MZ\x90\x00", true},
	} {
		if got := buildOutput(c.exec, []byte(c.b)) != ""; got != c.want {
			t.Errorf("buildOutput(%v, %q) = %v, want %v", c.exec, c.b, got, c.want)
		}
	}
}
