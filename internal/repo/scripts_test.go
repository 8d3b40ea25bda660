package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scriptRef is a repository script or generator input named in a Makefile or script line.
var scriptRef = regexp.MustCompile(`hack/[A-Za-z0-9_./-]+\.(?:sh|jsonnet)`)

// makeVar returns the words of a Makefile variable "NAME := ..." (with backslash continuations).
func makeVar(t *testing.T, makefile, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` :?= ((?:.*\\\n)*.*)$`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatalf("Makefile: no %s variable", name)
	}
	return strings.Fields(strings.ReplaceAll(m[1], "\\\n", " "))
}

// codeLines drops comment lines (a script's or Makefile's comments may name scripts to come).
func codeLines(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMakefileScriptsExist: every script the Makefile runs is in its SCRIPTS list (which make
// checks when it starts) or is a generator of GENERATORS, and exists; and no target skips a
// missing or non-executable script (a test that passes because its harness is gone).
func TestMakefileScriptsExist(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(b)
	scripts := makeVar(t, makefile, "SCRIPTS")
	generators := makeVar(t, makefile, "GENERATORS")
	for _, s := range scripts {
		if _, err := os.Stat(filepath.Join(root, s)); err != nil {
			t.Errorf("Makefile SCRIPTS names %s: %v", s, err)
		}
	}
	for _, g := range generators {
		if _, err := os.Stat(filepath.Join(root, "hack", "generate", g+".sh")); err != nil {
			t.Errorf("Makefile GENERATORS names %s: %v", g, err)
		}
	}
	code := codeLines(makefile)
	for _, s := range scriptRef.FindAllString(code, -1) {
		if !slices.Contains(scripts, s) {
			t.Errorf("the Makefile runs %s, which is not in SCRIPTS (make would not check that it exists)", s)
		}
	}
	for _, guard := range regexp.MustCompile(`\[ -[xefs] [^]]*hack/[^]]*\]`).FindAllString(code, -1) {
		t.Errorf("the Makefile tests for a script (%s): a missing script must fail the target, not skip it", guard)
	}
}

// TestScriptsNameExistingScripts: every script, generator input or deps step that a script, the
// Dockerfile or .ko.yaml runs exists (comments aside).
func TestScriptsNameExistingScripts(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"Dockerfile", ".ko.yaml"}
	for _, glob := range []string{"hack/*.sh", "hack/deps/*.sh", "hack/generate/*.sh", ".ci/*"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, s := range scriptRef.FindAllString(codeLines(string(b)), -1) {
			checked++
			if _, err := os.Stat(filepath.Join(root, s)); err != nil {
				t.Errorf("%s runs %s: %v", f, s, err)
			}
		}
	}
	if checked == 0 {
		t.Error("no script reference found: the pattern is broken")
	}
}

// TestMakeTestRunsEveryPhase: `make test` (what CI runs) runs every phase, whichever of them run
// side by side: `make -n test` prints the command of each, including those of the sub-make that
// runs the e2e suite, lint, the unit tests, fuzzing and the image build together.
func TestMakeTestRunsEveryPhase(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-n", "test")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, out)
	}
	for phase, command := range map[string]string{
		"deps":            "bash hack/install-deps.sh",
		"lint":            "go vet -tags e2e,load,image,compat ./...",
		"lint (mixin)":    "bash hack/lint-mixin.sh",
		"check-generated": `bash "hack/generate/$g.sh"`,
		"unit":            "go test -race -count=1",
		"fuzz":            `-fuzz "^$fn$"`,
		"build":           "-o bin/kubecause ./exporter/cmd/kubecause",
		"e2e":             "bash hack/e2e.sh",
		"image":           "bash hack/image.sh",
		// The compile-bound phases beside the e2e suite yield the CPU to it.
		"unit, yielding":  "nice -n 15 go test -race -count=1",
		"fuzz, yielding":  "nice -n 15 go test -run '^$' -fuzz",
		"lint, yielding":  "nice -n 15 go vet ./...",
		"image, yielding": "nice -n 15 bash hack/image.sh",
	} {
		if !strings.Contains(string(out), command) {
			t.Errorf("make test does not run %s (no %q in make -n test):\n%s", phase, command, out)
		}
	}
	if !regexp.MustCompile(`(?m)^make .*-k .*\be2e lint unit fuzz image$`).Match(out) {
		t.Errorf("make test does not run e2e, lint, unit, fuzz and image with -k (each to its end, every failure reported):\n%s", out)
	}
}
