// The real node's and the controllers' executables, and whether this host can run a node.

package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Versions of the real node's components: the kubelet is built with the control plane, of its
// release (hack/deps/20-e2e-tools.sh), so it is never newer than its apiserver; containerd:
// Containerd2Version (hack/deps/26-containerd2.sh); runc and the CNI plugins: Debian packages.
const KubeletVersion = KubeVersion

// NodeBinaries are the executables of the real node and of the controllers.
type NodeBinaries struct {
	ControllerManager string
	Scheduler         string
	Kubelet           string
	// Containerd, Shim and Ctr are containerd 2.x, its runc shim and its ctr, of one release
	// (Containerd2Dir); every runtime handler names the shim by its path.
	Containerd string
	Shim       string
	Ctr        string
	Runc       string
	CNIDir     string
}

// FindNodeBinaries locates the node's binaries; it fails with what is missing.
func FindNodeBinaries() (NodeBinaries, error) {
	b := NodeBinaries{
		ControllerManager: controllerManagerBin(),
		Scheduler:         schedulerBin(),
		Kubelet:           firstExecutable(os.Getenv("KUBELET_BIN"), filepath.Join(CacheDir(), "bin", "kubelet-"+KubeletVersion)),
		Containerd:        firstExecutable(filepath.Join(Containerd2Dir(), "containerd")),
		Shim:              firstExecutable(filepath.Join(Containerd2Dir(), "containerd-shim-runc-v2")),
		Ctr:               firstExecutable(filepath.Join(Containerd2Dir(), "ctr")),
		Runc:              firstExecutable("runc"),
		CNIDir:            "/usr/lib/cni",
	}
	var missing []string
	for name, p := range map[string]string{
		"kube-controller-manager (hack/deps/20-e2e-tools.sh)":                              b.ControllerManager,
		"kube-scheduler (hack/deps/20-e2e-tools.sh)":                                       b.Scheduler,
		"kubelet (hack/deps/20-e2e-tools.sh)":                                              b.Kubelet,
		"containerd " + Containerd2Version + " (hack/deps/26-containerd2.sh)":              b.Containerd,
		"containerd-shim-runc-v2 " + Containerd2Version + " (hack/deps/26-containerd2.sh)": b.Shim,
		"ctr " + Containerd2Version + " (hack/deps/26-containerd2.sh)":                     b.Ctr,
		"runc (Debian runc)": b.Runc,
		"the CNI bridge plugin (Debian containernetworking-plugins)": firstExecutable(filepath.Join(b.CNIDir, "bridge")),
		"ip (Debian iproute2)": firstExecutable("ip"),
	} {
		if p == "" {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return b, fmt.Errorf("missing: %s (make deps)", strings.Join(missing, ", "))
	}
	return b, nil
}

func controllerManagerBin() string {
	return firstExecutable(os.Getenv("KUBE_CONTROLLER_MANAGER_BIN"), filepath.Join(CacheDir(), "bin", "kube-controller-manager-"+KubeVersion))
}

func schedulerBin() string {
	return firstExecutable(os.Getenv("KUBE_SCHEDULER_BIN"), filepath.Join(CacheDir(), "bin", "kube-scheduler-"+KubeVersion))
}

// FindControllerBinaries locates kube-controller-manager and kube-scheduler alone, for
// StartControllers without a node (no kubelet, no containerd: controllers that read only API
// objects, such as the attach-detach controller); it fails with what is missing.
func FindControllerBinaries() (NodeBinaries, error) {
	b := NodeBinaries{ControllerManager: controllerManagerBin(), Scheduler: schedulerBin()}
	var missing []string
	if b.ControllerManager == "" {
		missing = append(missing, "kube-controller-manager (hack/deps/20-e2e-tools.sh)")
	}
	if b.Scheduler == "" {
		missing = append(missing, "kube-scheduler (hack/deps/20-e2e-tools.sh)")
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("missing: %s (make deps)", strings.Join(missing, ", "))
	}
	return b, nil
}

// NodeHostSupported says why this host cannot run the real node (nil when it can): the
// kubelet and containerd need root, cgroups and network namespaces. Missing binaries are not
// the host's fault: StartStack reports them (make deps builds them).
func NodeHostSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("not root: the kubelet and containerd need root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			return errors.New("no memory cgroup (neither cgroup v1 nor v2) at /sys/fs/cgroup")
		}
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return errors.New("no network namespaces")
	}
	return nil
}
