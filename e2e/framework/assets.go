package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kubecause/kubecause/internal/repo"
)

// Versions of the components built by hack/deps/20-e2e-tools.sh: KubeVersion is the release of
// the control plane and of the real node's kubelet (KubeletVersion), built by one go build.
const (
	KubeVersion = "v1.37.2"
	KSMVersion  = "v2.20.0"
)

// CacheDir is $KUBECAUSE_CACHE, by default $HOME/.cache/kubecause.
func CacheDir() string { return repo.CacheDir() }

// AssetsDir is $KUBEBUILDER_ASSETS, by default the directory hack/deps/20-e2e-tools.sh assembles.
func AssetsDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(CacheDir(), "kubebuilder-assets")
}

// RepoRoot is the repository's top directory.
func RepoRoot() (string, error) { return repo.Root() }

// Binaries are the paths of the executables the stack runs.
type Binaries struct {
	Kubecause        string
	KubeStateMetrics string
	Prometheus       string
	Alertmanager     string
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func firstExecutable(candidates ...string) string {
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if filepath.IsAbs(c) {
			if executable(c) {
				return c
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// FindBinaries locates every binary; the environment variables KUBECAUSE_BIN,
// KUBE_STATE_METRICS_BIN, PROMETHEUS_BIN and ALERTMANAGER_BIN override the defaults.
// The kubecause binary is required only when needKubecause.
func FindBinaries(needKubecause bool) (Binaries, error) {
	root, err := RepoRoot()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Kubecause: firstExecutable(os.Getenv("KUBECAUSE_BIN"), filepath.Join(root, "bin", "kubecause")),
		KubeStateMetrics: firstExecutable(os.Getenv("KUBE_STATE_METRICS_BIN"),
			filepath.Join(CacheDir(), "bin", "kube-state-metrics-"+KSMVersion),
			filepath.Join(AssetsDir(), "kube-state-metrics")),
		Prometheus:   firstExecutable(os.Getenv("PROMETHEUS_BIN"), "prometheus"),
		Alertmanager: firstExecutable(os.Getenv("ALERTMANAGER_BIN"), "prometheus-alertmanager", "alertmanager"),
	}
	var missing []string
	if b.Kubecause == "" && needKubecause {
		missing = append(missing, "kubecause (make build)")
	}
	if b.KubeStateMetrics == "" {
		missing = append(missing, "kube-state-metrics (hack/deps/20-e2e-tools.sh)")
	}
	if b.Prometheus == "" {
		missing = append(missing, "prometheus (hack/deps/00-apt.sh)")
	}
	if b.Alertmanager == "" {
		missing = append(missing, "prometheus-alertmanager (hack/deps/00-apt.sh)")
	}
	for _, n := range []string{"kube-apiserver", "etcd"} {
		if !executable(filepath.Join(AssetsDir(), n)) {
			missing = append(missing, n+" in "+AssetsDir()+" (hack/deps/20-e2e-tools.sh)")
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("missing binaries — run make deps build: %v", missing)
	}
	return b, nil
}
