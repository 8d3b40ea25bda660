package endpointcheck

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/exporter/kube"
)

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "checks.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"LB without service", `
checks:
  - {name: a, namespace: istio-system, service: istiod-remote, expect: {addresses: [10.0.0.1]}}
  - {name: b, namespace: istio-system, service: other, expect: {loadBalancer: {namespace: istio-system}}}
`, []string{"checks[1].expect.loadBalancer.service: required"}},
		{"unknown field", "checks:\n  - {name: a, namespace: n, service: s, expect: {adresses: [10.0.0.1]}}\n",
			[]string{"line 2: field adresses not found"}},
		{"unknown nested field", "discovery:\n  namespace: istio-system\n  meshId: mesh1\n",
			[]string{"line 3: field meshId not found"}},
		{"wrong type", "checks:\n  - name: a\n    namespace: n\n    service: s\n    ports: [xds]\n    expect: {external: true}\n",
			[]string{"line 5: cannot unmarshal", "xds"}},
		{"not YAML", "checks: [\n", []string{"checks.yaml"}},
		{"no expectation", "checks:\n  - {name: a, namespace: n, service: s}\n",
			[]string{"checks[0].expect: exactly one of pods, service, loadBalancer, addresses, external is required (found 0)"}},
		{"two expectations", "checks:\n  - {name: a, namespace: n, service: s, expect: {external: true, addresses: [10.0.0.1]}}\n",
			[]string{"checks[0].expect: exactly one", "(found 2)"}},
		{"bad selector", "checks:\n  - {name: a, namespace: n, service: s, expect: {pods: {selector: 'app in (x'}}}\n",
			[]string{"checks[0].expect.pods.selector:"}},
		{"empty selector", "checks:\n  - {name: a, namespace: n, service: s, expect: {pods: {selector: ''}}}\n",
			[]string{"checks[0].expect.pods.selector: required"}},
		{"bad IP", "checks:\n  - {name: a, namespace: n, service: s, expect: {addresses: [10.0.0.300]}}\n",
			[]string{`checks[0].expect.addresses[0]: "10.0.0.300" is not an IP address`}},
		{"unknown cluster", "checks:\n  - {name: a, namespace: n, service: s, expect: {loadBalancer: {cluster: cp, service: lb}}}\n",
			[]string{`checks[0].expect.loadBalancer.cluster: unknown cluster "cp"`}},
		{"bad port and dup name", `
checks:
  - {name: a, namespace: n, service: s, ports: [15012, 70000], expect: {external: true}}
  - {name: a, namespace: n, service: t, ports: [1, 1], expect: {external: true}}
`, []string{"checks[0].ports[1]: 70000 is not a port", `checks[1].name: duplicate check name "a"`, "checks[1].ports[1]: duplicate port 1"}},
		{"same service twice", `
checks:
  - {name: a, namespace: ns1, service: s, expect: {external: true}}
  - {name: b, namespace: ns1, service: s, expect: {external: true}}
`, []string{"checks[1].service: ns1/s is already checked by checks[0]"}},
		{"missing names", "checks:\n  - {expect: {external: true}}\n",
			[]string{"checks[0].name: required", "checks[0].namespace: required", "checks[0].service: required"}},
		{"discovery", "discovery: {role: primary, controlPlaneCluster: cp, meshID: Mesh_1}\n",
			[]string{`discovery.role: "primary"`, `discovery.controlPlaneCluster: unknown cluster "cp"`, `discovery.meshID: "Mesh_1"`}},
		{"cluster without kubeconfig file", "clusters:\n  - {name: cp, kubeconfig: does-not-exist.yaml}\n",
			[]string{"clusters[0].kubeconfig:", "does-not-exist.yaml"}},
		{"cluster without name", "clusters:\n  - {kubeconfig: x}\n", []string{"clusters[0].name: required", "clusters[0].kubeconfig"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfig(t, t.TempDir(), tc.yaml)
			_, err := LoadConfig(p)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if cerr := CheckConfigFile(p); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("CheckConfigFile = %v, want the LoadConfig error", cerr)
			}
		})
	}
}

func TestConfigValid(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cp.kubeconfig"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := writeConfig(t, dir, `
clusters:
  - {name: cp, kubeconfig: cp.kubeconfig}
discovery: {controlPlaneCluster: cp}
checks:
  - name: istiod-remote-lb
    namespace: istio-system
    service: istiod-remote
    ports: [15012, 15017]
    expect: {loadBalancer: {cluster: cp, service: istiod-mesh1-hosted-lb}}
`)
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Clusters[0].Kubeconfig, filepath.Join(dir, "cp.kubeconfig"); got != want {
		t.Errorf("relative kubeconfig resolved to %s, want %s", got, want)
	}
	if !cfg.discoveryEnabled() {
		t.Error("discovery must default to enabled")
	}
	// The kubeconfig has no cluster in it: building the client fails with the cluster's name.
	if _, err := cfg.RemoteClients("kubecause/test"); err == nil || !strings.Contains(err.Error(), `"cp"`) {
		t.Errorf("RemoteClients: %v", err)
	}
}

func TestEmptyConfigIsZeroConfig(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, t.TempDir(), ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Checks) != 0 || !cfg.discoveryEnabled() {
		t.Errorf("empty config = %+v", cfg)
	}
	var nilCfg *Config
	if err := nilCfg.Validate(); err != nil || !nilCfg.discoveryEnabled() {
		t.Errorf("nil config: %v", err)
	}
}

func TestShippedExampleIsValid(t *testing.T) {
	if err := CheckConfigFile(filepath.Join("..", "..", "examples", "endpoint-checks.yaml")); err != nil {
		t.Fatal(err)
	}
}

// A remote cluster's client is built like the local one: its requests carry kubecause's User-Agent.
func TestRemoteClientsUseKubeConfig(t *testing.T) {
	agents := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case agents <- r.UserAgent():
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"ServiceList","apiVersion":"v1","items":[]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: cp, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: cp, context: {cluster: cp, user: u}}]
current-context: cp
`, srv.URL)
	if err := os.WriteFile(filepath.Join(dir, "cp.kubeconfig"), []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(writeConfig(t, dir, "clusters:\n  - {name: cp, kubeconfig: cp.kubeconfig}\n"))
	if err != nil {
		t.Fatal(err)
	}
	remote, err := cfg.RemoteClients("kubecause/test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote["cp"].List(context.Background(), kube.Services, "istio-system", metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := <-agents; got != "kubecause/test" {
		t.Errorf("User-Agent = %q, want kubecause/test", got)
	}
}
