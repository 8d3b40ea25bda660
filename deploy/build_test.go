package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The linker flags are written once, in hack/ldflags.sh: the Makefile, .ko.yaml (through hack/image.sh's
// LDFLAGS) and the Dockerfile use its output and set no -X of their own.
func TestLinkerFlagsDefinedOnce(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command(filepath.Join(root, "hack", "ldflags.sh"))
	cmd.Env = append(os.Environ(), "VERSION=v9.8.7", "REVISION=abc1234", "BRANCH=main", "BUILD_DATE=20261123-07:00:00")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/ldflags.sh: %v", err)
	}
	for _, want := range []string{"-s -w",
		"-X github.com/prometheus/common/version.Version=v9.8.7",
		"-X github.com/prometheus/common/version.Revision=abc1234",
		"-X github.com/prometheus/common/version.Branch=main",
		"-X github.com/prometheus/common/version.BuildUser=kubecause",
		"-X github.com/prometheus/common/version.BuildDate=20261123-07:00:00"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("hack/ldflags.sh prints %q, lacking %q", out, want)
		}
	}
	for file, use := range map[string]string{"Makefile": "hack/ldflags.sh", "Dockerfile": "hack/ldflags.sh",
		".ko.yaml": "{{.Env.LDFLAGS}}", "hack/image.sh": "hack/ldflags.sh"} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "common/version.") {
			t.Errorf("%s sets version variables itself", file)
		}
		if !strings.Contains(string(b), use) {
			t.Errorf("%s does not use %s", file, use)
		}
	}
}
