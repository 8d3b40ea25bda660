// Starting a real node: containerd with runc and a CNI bridge, and a kubelet registered with the
// test's apiserver (its faults: node_faults.go; its teardown: node_stop.go).

package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podSubnetFormat is where each node's CNI bridge range comes from: a /24 of 198.18.0.0/15 (set
// aside for benchmarking test networks), picked at random so a bridge left behind by a killed run
// cannot shadow the next run's routes. Pod IPs live only inside the network namespaces the CNI
// creates for the test's pods, which get no default route.
const podSubnetFormat = "198.18.%d.0/24"

// Node is one real node: containerd with runc and a CNI bridge, and a kubelet registered with
// the cluster. Everything it makes lives under Dir and is removed by Stop.
type Node struct {
	Name   string
	Dir    string
	Bin    NodeBinaries
	Socket string
	// Bridge is the CNI bridge's interface name and PodSubnet its range (unique per node).
	Bridge, PodSubnet string
	// CgroupRoot is the kubelet's cgroupRoot ("/kubecause-<id>"), made for this node in every
	// cgroup hierarchy and removed by Stop, so two nodes on one host never share cgroups.
	CgroupRoot string
	// PodLogsDir is the kubelet's podLogsDir (not the host's /var/log/pods).
	PodLogsDir string
	// StopTime is how long the last Stop took.
	StopTime time.Duration
	// KilledShimSockets are the sockets of the shims seed S14 killed that Stop removed.
	KilledShimSockets []string
	// ManifestDir is the kubelet's staticPodPath.
	ManifestDir string
	// SmallDiskDir is the state root of the runtime handler SmallDiskRuntimeHandler: seed S10
	// mounts a small tmpfs there and fills it (FillSmallDisk).
	SmallDiskDir string
	// RegistryHosts is containerd's registry config_path (hosts.toml per registry).
	RegistryHosts string

	cluster     *Cluster
	logDir      string
	containerd  *Process
	kubelet     *Process
	kubeletCfg  string
	kubeletPort int
	healthzPort int
	// nodefsAvailable is the kubelet's nodefs.available eviction threshold.
	nodefsAvailable string
	// runtimeRequestTimeout is the kubelet's runtimeRequestTimeout ("": its default, 2m).
	runtimeRequestTimeout string
	// started is when StartNode began (Leftovers: shim sockets made since then).
	started time.Time
	// slowCNI puts the plugin slowCNIPlugin last in the node's CNI chain (seed S15).
	slowCNI     bool
	images      []string
	healthz     string
	subnetLock  *os.File
	seenNetns   []string
	seenSockets []string
}

// NodeOptions configure StartNode.
type NodeOptions struct {
	Name   string // node name ("" = "kubecause-node")
	Dir    string // work directory (required)
	LogDir string // containerd.log, kubelet.log
	// Images are image tarballs imported into containerd before the kubelet starts.
	Images []string
	// SandboxImage is the pause image's reference (it must be among Images).
	SandboxImage string
}

// StartNode starts containerd and the kubelet and waits until the Node is Ready.
// On error, what was started is stopped and cleaned up.
func StartNode(ctx context.Context, b NodeBinaries, c *Cluster, o NodeOptions) (_ *Node, err error) {
	if o.Name == "" {
		o.Name = "kubecause-node"
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	id := hex.EncodeToString(suffix)
	n := &Node{
		Name:          o.Name,
		Dir:           o.Dir,
		Bin:           b,
		Socket:        filepath.Join(o.Dir, "containerd", "containerd.sock"),
		Bridge:        "kcbr" + id,
		CgroupRoot:    "/kubecause-" + id,
		PodLogsDir:    filepath.Join(o.Dir, "pod-logs"),
		ManifestDir:   filepath.Join(o.Dir, "manifests"),
		SmallDiskDir:  filepath.Join(o.Dir, "small-disk"),
		RegistryHosts: filepath.Join(o.Dir, "containerd", "certs.d"),
		cluster:       c,
		logDir:        o.LogDir,
		images:        o.Images,
	}
	n.started = time.Now()
	liveNodes.Store(n, true)
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	if n.PodSubnet, n.subnetLock, err = reservePodSubnet(); err != nil {
		return nil, err
	}
	for _, d := range []string{"containerd/root", "containerd/state", "containerd/certs.d", "cni/net.d", "cni/ipam", "cni/bin", "kubelet", "manifests", "pod-logs", "small-disk"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := createCgroupRoot(n.CgroupRoot); err != nil {
		return nil, fmt.Errorf("creating the node's cgroup root %s: %w", n.CgroupRoot, err)
	}
	if err := n.RestorePodAddresses(); err != nil {
		return nil, err
	}
	if err := n.startContainerd(o.SandboxImage); err != nil {
		return nil, err
	}
	if err := n.importImages(); err != nil {
		return nil, err
	}
	if err := n.startKubelet(); err != nil {
		return nil, err
	}
	if err := n.WaitReady(ctx, 120*time.Second); err != nil {
		return nil, err
	}
	return n, nil
}

// importImages imports the node's image tarballs into containerd.
func (n *Node) importImages() error {
	for _, img := range n.images {
		if out, err := n.ctr("images", "import", "--all-platforms", img); err != nil {
			return fmt.Errorf("importing %s into containerd: %v: %s", img, err, out)
		}
	}
	return nil
}

// ctr runs containerd's ctr against this node's socket in the CRI namespace.
func (n *Node) ctr(args ...string) (string, error) {
	cmd := exec.Command(n.Bin.Ctr, append([]string{"--address", n.Socket, "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// cniNetwork is the name of the node's CNI network; host-local keeps one file per address it
// handed out under <ipam dataDir>/<cniNetwork>/.
const cniNetwork = "kubecause-e2e"

// writeCNIConfig writes the bridge + host-local network on the node's subnet, gateway .1,
// handing out addresses from first to last (the whole subnet when both are empty). containerd
// reloads its CNI configuration on a write, rename or removal in the directory (1.6 not on a
// create; 2.4 reloads on the rename too, docs/e2e.md "Runtimes"): the file is written under a
// name the CNI does not load (.tmp) and renamed over the old one, so containerd reloads (on the
// rename) and never loads a half-written file.
func (n *Node) writeCNIConfig(first, last string) error {
	r := map[string]string{"subnet": n.PodSubnet, "gateway": strings.TrimSuffix(n.PodSubnet, "0/24") + "1"}
	if first != "" {
		r["rangeStart"], r["rangeEnd"] = first, last
	}
	plugins := []any{map[string]any{
		"type": "bridge", "bridge": n.Bridge, "isGateway": true, "ipMasq": false,
		"ipam": map[string]any{"type": "host-local", "ranges": [][]map[string]string{{r}}, "dataDir": filepath.Join(n.Dir, "cni", "ipam")},
	}}
	if n.slowCNI {
		plugins = append(plugins, map[string]any{"type": slowCNIPlugin})
	}
	conf, err := json.MarshalIndent(map[string]any{
		"cniVersion": "0.4.0",
		"name":       cniNetwork,
		"plugins":    plugins,
	}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(n.Dir, "cni", "net.d", "10-kubecause.conflist.tmp")
	if err := os.WriteFile(tmp, conf, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(n.Dir, "cni", "net.d", "10-kubecause.conflist"))
}

// startContainerd writes the node's containerd 2.x configuration (containerdConfigV3) and
// starts containerd, waiting until it answers on its socket.
func (n *Node) startContainerd(sandboxImage string) error {
	// No crun handler: crun cannot run a container on a host with cgroup v1 controllers
	// (docs/e2e.md, "Runtimes"), and no scenario uses it.
	params := n.containerdV3Params(sandboxImage, n.Bin.Shim, "")
	if err := os.WriteFile(params.ShimKiller, []byte(shimKiller(n.Bin.Runc, n.killedShimsFile())), 0o755); err != nil {
		return err
	}
	cfg := containerdConfigV3(params)
	path := filepath.Join(n.Dir, "containerd", "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return err
	}
	n.containerd = NewProcess("containerd", n.logDir, n.Bin.Containerd, "--config", path)
	if err := n.containerd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := n.ctr("version"); err == nil {
			return nil
		}
		if !n.containerd.Running() {
			return fmt.Errorf("containerd exited; log:\n%s", n.containerd.Log(4000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd not answering on %s after 30 s; log:\n%s", n.Socket, n.containerd.Log(4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (n *Node) startKubelet() error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	hport, err := FreePort()
	if err != nil {
		return err
	}
	n.healthz = fmt.Sprintf("http://127.0.0.1:%d/healthz", hport)
	n.kubeletCfg = filepath.Join(n.Dir, "kubelet", "config.yaml")
	n.kubeletPort, n.healthzPort = port, hport
	n.nodefsAvailable = defaultNodefsAvailable
	if err := n.writeKubeletConfig(); err != nil {
		return err
	}
	return n.StartKubelet()
}

// writeKubeletConfig writes the kubelet's configuration file.
func (n *Node) writeKubeletConfig() error {
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
# This node's own cgroup tree (StartNode made it), not the host's /kubepods.
cgroupRoot: %s
podLogsDir: %s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
address: 127.0.0.1
port: %d
healthzBindAddress: 127.0.0.1
healthzPort: %d
readOnlyPort: 0
staticPodPath: %s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
serializeImagePulls: false
# Faster status reports so the tests poll less; the semantics are the kubelet's own.
nodeStatusUpdateFrequency: 4s
syncFrequency: 5s
fileCheckFrequency: 2s
evictionPressureTransitionPeriod: 10s
# The host's disk is shared and may be 85-90 %% full: the default thresholds (imagefs.available
# 15 %%, nodefs.available 10 %%) would put this node under DiskPressure and evict every pod.
# Absolute thresholds make the node's health independent of the host's fill; image GC is off (the
# images are imported, not pulled again).
evictionHard:
  memory.available: 100Mi
  nodefs.available: %s
  nodefs.inodesFree: "1%%"
  imagefs.available: 512Mi
  imagefs.inodesFree: "1%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, n.CgroupRoot, n.PodLogsDir, n.Socket, n.kubeletPort, n.healthzPort, n.ManifestDir, n.nodefsAvailable)
	if n.runtimeRequestTimeout != "" {
		cfg += "runtimeRequestTimeout: " + n.runtimeRequestTimeout + "\n"
	}
	return os.WriteFile(n.kubeletCfg, []byte(cfg), 0o644)
}

// defaultNodefsAvailable is the kubelet's nodefs.available eviction threshold (see its config).
const defaultNodefsAvailable = "512Mi"

// StartKubelet starts (or restarts) the kubelet with the node's configuration.
func (n *Node) StartKubelet() error {
	n.kubelet = NewProcess("kubelet", n.logDir, n.Bin.Kubelet,
		"--config="+n.kubeletCfg,
		"--kubeconfig="+n.cluster.KubeconfigPath,
		"--root-dir="+filepath.Join(n.Dir, "kubelet"),
		"--cert-dir="+filepath.Join(n.Dir, "kubelet", "pki"),
		"--hostname-override="+n.Name,
		"--node-ip=127.0.0.1",
		"--v=1")
	if err := n.kubelet.Start(); err != nil {
		return err
	}
	return WaitHTTP(n.healthz, 90*time.Second, n.kubelet)
}

// StopKubelet stops the kubelet (seed S17); pods keep running in containerd.
func (n *Node) StopKubelet() error {
	if n.kubelet == nil {
		return nil
	}
	return n.kubelet.Stop()
}

// WaitReady waits until the Node reports Ready.
func (n *Node) WaitReady(ctx context.Context, timeout time.Duration) error {
	err := Poll(ctx, timeout, func() (bool, error) {
		if n.kubelet != nil && !n.kubelet.Running() {
			return false, fmt.Errorf("kubelet exited; log:\n%s", n.kubelet.Log(6000))
		}
		node, err := n.cluster.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not Ready: %w", n.Name, err)
	}
	return nil
}

// Versions reports the node's component versions as the Node object and the binaries say.
func (n *Node) Versions(ctx context.Context) map[string]string {
	v := map[string]string{"kubelet": KubeletVersion}
	if node, err := n.cluster.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{}); err == nil {
		v["kubelet"] = node.Status.NodeInfo.KubeletVersion
		v["containerRuntime"] = node.Status.NodeInfo.ContainerRuntimeVersion
		v["kernel"] = node.Status.NodeInfo.KernelVersion
	}
	if out, err := exec.Command(n.Bin.Runc, "--version").Output(); err == nil {
		v["runc"] = strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "runc version ")
	}
	return v
}

// cgroupMounts lists the host's cgroup hierarchies under /sys/fs/cgroup: each v1 controller's
// (and named ones such as name=systemd) and the unified v2 one, on a hybrid host like a pure
// v1 or v2 one.
func cgroupMounts() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		// "… mountpoint options … - fstype source superoptions"
		parts := strings.SplitN(line, " - ", 2)
		f := strings.Fields(parts[0])
		if len(parts) != 2 || len(f) < 5 {
			continue
		}
		fs := strings.Fields(parts[1])
		mp := unescapeMount(f[4])
		if len(fs) > 0 && (fs[0] == "cgroup" || fs[0] == "cgroup2") && strings.HasPrefix(mp, "/sys/fs/cgroup") {
			out = append(out, mp)
		}
	}
	return out
}

// createCgroupRoot makes the kubelet's cgroupRoot in every hierarchy (the kubelet requires it
// to exist in each v1 controller it uses). A new v1 cpuset starts with no CPUs or memory nodes:
// it gets its parent's. In a v2 hierarchy it hands its controllers down to the kubelet's tree.
func createCgroupRoot(name string) error {
	if !strings.HasPrefix(name, "/kubecause-") {
		return fmt.Errorf("refusing cgroup root %q", name)
	}
	mounts := cgroupMounts()
	if len(mounts) == 0 {
		return errors.New("no cgroup hierarchy mounted under /sys/fs/cgroup")
	}
	for _, mp := range mounts {
		dir := filepath.Join(mp, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return err
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			cur, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil || strings.TrimSpace(string(cur)) != "" {
				continue
			}
			parent, err := os.ReadFile(filepath.Join(mp, f))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, f), parent, 0o644); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
			}
		}
		if ctrls, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); err == nil {
			for _, c := range strings.Fields(string(ctrls)) {
				_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+c), 0o644)
			}
		}
	}
	return nil
}

// reservePodSubnet picks a /24 of podSubnetFormat that no interface of the host routes and no
// other node of a running test holds: the lock file stays locked (flock) for the node's life and
// is released by the kernel when the process ends, however it ends.
func reservePodSubnet() (string, *os.File, error) {
	routes, _ := exec.Command("ip", "-4", "route", "show").Output()
	start := make([]byte, 1)
	_, _ = rand.Read(start)
	for i := 0; i < 256; i++ {
		third := (int(start[0]) + i) % 256
		subnet := fmt.Sprintf(podSubnetFormat, third)
		if strings.Contains(string(routes), strings.TrimSuffix(subnet, "0/24")) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("kubecause-e2e-subnet-%d.lock", third)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return "", nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			continue
		}
		return subnet, f, nil
	}
	return "", nil, errors.New("every pod subnet of 198.18.0.0/16 is in use")
}
