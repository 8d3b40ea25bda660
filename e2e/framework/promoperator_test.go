package framework

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestPromOperatorVersionsMatchDeps: the framework looks for the operator and amtool where
// hack/deps/24-prometheus-operator.sh caches them, which is by the versions its wrapper module requires.
func TestPromOperatorVersionsMatchDeps(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "prometheus-operator", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for module, want := range map[string]string{
		"github.com/prometheus-operator/prometheus-operator": PromOperatorVersion,
		"github.com/prometheus/alertmanager":                 AlertmanagerVersion,
	} {
		req := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + ` (\S+)`).FindSubmatch(mod)
		if req == nil || string(req[1]) != want {
			t.Errorf("hack/tools/prometheus-operator/go.mod requires %s %q, the framework looks for %s", module, req, want)
		}
	}
}
