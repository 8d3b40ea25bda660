package endpointcheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kubecause/kubecause/internal/testenv"
)

// TestDocumentedPromQLComparison runs the cross-cluster PromQL of docs/istiod-remote.md through
// `promtool test rules`: a workload cluster pointing at a stale LB IP is found, one pointing at the
// current LB IP is not, and two kubecause replicas count once.
func TestDocumentedPromQLComparison(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	testenv.Require(t, err, "promtool", "make deps (hack/deps/00-apt.sh installs Debian's prometheus)")
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "istiod-remote.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```promql\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no promql block in docs/istiod-remote.md")
	}
	dir := t.TempDir()
	rules, _ := json.Marshal(map[string]any{"groups": []any{map[string]any{
		"name": "doc", "rules": []any{map[string]any{"record": "istiod_remote:wrong", "expr": string(m[1])}},
	}}})
	if err := os.WriteFile(filepath.Join(dir, "promql-comparison.rules.yaml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(filepath.Join("testdata", "promql-comparison.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.yaml"), in, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
