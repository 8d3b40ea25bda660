package framework

import (
	"fmt"
	"os"
)

// WantKubeVersionEnv names the kube-apiserver release a run must get: the compatibility matrix
// (hack/compat.sh) points KUBEBUILDER_ASSETS at another release's binaries and sets this, so that
// a cell cannot pass on the default release by mistake. Unset: any release.
const WantKubeVersionEnv = "KUBECAUSE_WANT_KUBE_VERSION"

// checkServerVersion fails when the apiserver c talks to is not the release WantKubeVersionEnv
// names (its gitVersion, e.g. v1.32.13).
func checkServerVersion(c *Cluster) error {
	want := os.Getenv(WantKubeVersionEnv)
	if want == "" {
		return nil
	}
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("kube-apiserver version: %w", err)
	}
	if v.GitVersion != want {
		return fmt.Errorf("kube-apiserver from %s is %s, %s=%s", AssetsDir(), v.GitVersion, WantKubeVersionEnv, want)
	}
	return nil
}

// runKubeVersion is the release the stack's log names: WantKubeVersionEnv's, else KubeVersion.
func runKubeVersion() string {
	if v := os.Getenv(WantKubeVersionEnv); v != "" {
		return v
	}
	return KubeVersion
}
