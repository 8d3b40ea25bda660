package deploy

import (
	"os/exec"
	"strings"
	"testing"
)

// The exporter binary links no module that only tests and tools need: controller-runtime (envtest in
// e2e), kube-state-metrics (pinned for the dashboard tests) and go-containerregistry (the image tests
// and the e2e registry) stay out of it, and so do the e2e packages.
// (Package testing itself is linked: prometheus/common's expfmt imports github.com/pandatix/go-abnf, which
// imports it outside its tests.)
func TestBinaryLeavesTestModulesOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", "github.com/kubecause/kubecause/exporter/cmd/kubecause").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"sigs.k8s.io/controller-runtime", "k8s.io/kube-state-metrics/v2", "github.com/google/go-containerregistry"}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		pkg, mod, _ := strings.Cut(line, " ")
		for _, f := range forbidden {
			if mod == f {
				t.Errorf("the exporter links %s (module %s)", pkg, mod)
			}
		}
		if strings.HasPrefix(pkg, "github.com/kubecause/kubecause/e2e") {
			t.Errorf("the exporter links %s", pkg)
		}
	}
	if len(lines) < 100 {
		t.Fatalf("go list -deps listed %d packages: not the exporter's dependencies", len(lines))
	}
}
