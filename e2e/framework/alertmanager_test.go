package framework

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/internal/testenv"
	"github.com/kubecause/kubecause/rules/mixintest"
)

// TestShippedAlertmanagerConfig: the e2e Alertmanager's configuration is the shipped one with
// only the receiver's URL and the route's timers changed, and Alertmanager's amtool accepts it.
func TestShippedAlertmanagerConfig(t *testing.T) {
	root := mixintest.RepoRoot(t)
	const url = "http://127.0.0.1:9/alerts"
	got, err := ShippedAlertmanagerConfig(root, url, ShippedRouteTimers)
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(filepath.Join(root, "rules", "alertmanager", "alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var want, have map[string]any
	if err := yaml.Unmarshal(shipped, &want); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	route := want["route"].(map[string]any)
	for k, v := range ShippedRouteTimers {
		if _, ok := route[k]; !ok {
			t.Errorf("the shipped route sets no %s", k)
		}
		route[k] = v
	}
	for _, r := range want["receivers"].([]any) {
		r.(map[string]any)["webhook_configs"] = []any{map[string]any{"url": url, "send_resolved": true}}
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("configuration differs from the shipped one beyond receiver URL and timers:\n%s", got)
	}
	_, lookErr := exec.LookPath("amtool")
	testenv.Require(t, lookErr, "amtool", "make deps (hack/deps/00-apt.sh installs Debian's prometheus-alertmanager)")
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, got, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("amtool", "check-config", path).CombinedOutput(); err != nil {
		t.Errorf("amtool check-config: %v\n%s", err, out)
	}
}
