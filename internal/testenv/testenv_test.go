package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRequireHelper is the test the subprocess runs: it requires something missing.
func TestRequireHelper(t *testing.T) {
	if os.Getenv("TESTENV_HELPER") == "" {
		t.Skip("run by TestRequire")
	}
	Require(t, errors.New("no such file"), "chromium", "make deps (hack/deps/00-apt.sh)")
}

// TestRequire runs TestRequireHelper in a child go test process: under CI=true the missing
// dependency fails it, naming what is missing and its install step; without CI it skips.
func TestRequire(t *testing.T) {
	for _, c := range []struct {
		ci       string
		wantFail bool
		wantText string
	}{
		{"true", true, "--- FAIL: TestRequireHelper"},
		{"", false, "--- SKIP: TestRequireHelper"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRequireHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_HELPER=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.wantFail {
			t.Errorf("CI=%q: exit error %v, want failure %v\n%s", c.ci, err, c.wantFail, out)
		}
		for _, want := range []string{c.wantText, "chromium missing: no such file", "hack/deps/00-apt.sh"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("CI=%q: output lacks %q:\n%s", c.ci, want, out)
			}
		}
	}
	// Present: nothing happens, whatever CI says.
	t.Setenv("CI", "true")
	Require(t, nil, "chromium", "make deps")
}
