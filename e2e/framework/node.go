package framework

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Versions of the real node's components: the kubelet is built with the control plane, of its
// release (hack/deps/20-e2e-tools.sh), so it is never newer than its apiserver; containerd:
// Containerd2Version (hack/deps/26-containerd2.sh); runc and the CNI plugins: Debian packages.
const (
	KubeletVersion = KubeVersion
	// podSubnets is where each node's CNI bridge range comes from: a /24 of 198.18.0.0/15
	// (set aside for benchmarking test networks), picked at random so a bridge left behind by a
	// killed run cannot shadow the next run's routes. Pod IPs live only inside the network
	// namespaces the CNI creates for the test's pods, which get no default route.
	podSubnetFormat = "198.18.%d.0/24"
)

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

// Controllers are kube-controller-manager and kube-scheduler of the apiserver's release.
type Controllers struct {
	ControllerManager *Component
	Scheduler         *Component
}

// StartControllers runs kube-controller-manager (every controller, no cloud provider) and
// kube-scheduler against the cluster, on 127.0.0.1, and waits for their /healthz.
func StartControllers(b NodeBinaries, c *Cluster, logDir string) (*Controllers, error) {
	kcmPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	schedPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	kcm := NewProcess("kube-controller-manager", logDir, b.ControllerManager,
		"--kubeconfig="+c.KubeconfigPath,
		"--authentication-kubeconfig="+c.KubeconfigPath,
		"--authorization-kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", kcmPort),
		"--service-account-private-key-file="+filepath.Join(c.Dir, "apiserver", "sa-signer.key"),
		"--use-service-account-credentials=false",
		"--controllers=*",
		// NodeNotReady within seconds of the kubelet stopping (the default grace is 50 s).
		"--node-monitor-grace-period=20s",
		"--node-monitor-period=2s",
		"--v=1")
	sched := NewProcess("kube-scheduler", logDir, b.Scheduler,
		"--kubeconfig="+c.KubeconfigPath,
		"--authentication-kubeconfig="+c.KubeconfigPath,
		"--authorization-kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", schedPort),
		"--v=1")
	ctl := &Controllers{
		ControllerManager: &Component{Process: kcm, Addr: fmt.Sprintf("127.0.0.1:%d", kcmPort)},
		Scheduler:         &Component{Process: sched, Addr: fmt.Sprintf("127.0.0.1:%d", schedPort)},
	}
	for _, comp := range []*Component{ctl.ControllerManager, ctl.Scheduler} {
		if err := comp.Start(); err != nil {
			ctl.Stop()
			return nil, err
		}
	}
	for _, comp := range []*Component{ctl.ControllerManager, ctl.Scheduler} {
		if err := waitHTTPS("https://"+comp.Addr+"/healthz", 90*time.Second, comp.Process); err != nil {
			ctl.Stop()
			return nil, err
		}
	}
	return ctl, nil
}

// Stop stops both controllers.
func (c *Controllers) Stop() {
	if c == nil {
		return
	}
	for _, comp := range []*Component{c.Scheduler, c.ControllerManager} {
		if comp != nil {
			_ = comp.Stop()
		}
	}
}

// waitHTTPS polls a component's self-signed https endpoint until it answers 200.
func waitHTTPS(url string, timeout time.Duration, p *Process) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		// The components serve a self-signed certificate on 127.0.0.1; only /healthz is read.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	return waitURL(client, url, timeout, p, func(code int) bool { return code == http.StatusOK })
}

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

// LimitPodAddresses leaves the CNI one address to hand out, the highest of the subnet no pod
// holds, and returns it (seed S13: the next pod after it gets none).
func (n *Node) LimitPodAddresses() (string, error) {
	prefix := strings.TrimSuffix(n.PodSubnet, "0/24")
	for host := 254; host > 1; host-- {
		ip := fmt.Sprintf("%s%d", prefix, host)
		if _, err := os.Stat(filepath.Join(n.Dir, "cni", "ipam", cniNetwork, ip)); errors.Is(err, os.ErrNotExist) {
			return ip, n.writeCNIConfig(ip, ip)
		}
	}
	return "", fmt.Errorf("every address of %s is held", n.PodSubnet)
}

// RestorePodAddresses lets the CNI hand out the whole subnet again.
func (n *Node) RestorePodAddresses() error { return n.writeCNIConfig("", "") }

// slowCNIPlugin is the CNI plugin of seed S15, written into the node's own plugin directory
// (<Dir>/cni/bin, the second of containerd's bin_dirs) by SetSlowPodNetwork.
const slowCNIPlugin = "kubecause-slow"

// slowCNIScript is slowCNIPlugin: a chained plugin whose ADD does not finish. It marks that an
// ADD started (<plugin>.held), then a child process that holds the plugin's stdout waits until
// the test creates <plugin>.release (or 10 minutes pass), as a plugin's helper stuck on a slow
// network call would: when the runtime's request context ends it kills the plugin, but its
// exec keeps waiting for the output pipe, which the child holds, so the sandbox and its name stay
// reserved. Released, the ADD fails (CNI error code 11, try again later). DEL and CHECK succeed.
const slowCNIScript = `#!/bin/sh
# kubecause e2e, seed S15: a CNI plugin slower than the kubelet's runtime request timeout.
case "$CNI_COMMAND" in
VERSION) echo '{"cniVersion":"0.4.0","supportedVersions":["0.3.0","0.3.1","0.4.0"]}'; exit 0 ;;
ADD) ;;
*) cat >/dev/null; exit 0 ;;
esac
cat >/dev/null
touch "$0.held"
(i=0; while [ ! -e "$0.release" ] && [ $i -lt 600 ]; do sleep 1; i=$((i+1)); done)
echo '{"cniVersion":"0.4.0","code":11,"msg":"kubecause-slow: released by the test"}'
exit 1
`

// SetSlowPodNetwork on: puts slowCNIPlugin last in the node's CNI chain and restarts the kubelet
// with runtimeRequestTimeout 10s (RunPodSandbox gets twice that), so every new sandbox's network
// setup outlives the kubelet's request and the kubelet's retry meets the name the runtime still
// holds (seed S15). Off: the chain without it, held ADDs released, the default timeout.
func (n *Node) SetSlowPodNetwork(ctx context.Context, on bool) error {
	plugin := filepath.Join(n.Dir, "cni", "bin", slowCNIPlugin)
	if on {
		_ = os.Remove(plugin + ".release")
		_ = os.Remove(plugin + ".held")
		if err := os.WriteFile(plugin, []byte(slowCNIScript), 0o755); err != nil {
			return err
		}
	}
	n.slowCNI = on
	if err := n.RestorePodAddresses(); err != nil {
		return err
	}
	timeout := ""
	if on {
		timeout = "10s"
	} else if err := os.WriteFile(plugin+".release", nil, 0o644); err != nil {
		return err
	}
	if err := n.StopKubelet(); err != nil {
		return err
	}
	n.runtimeRequestTimeout = timeout
	if err := n.writeKubeletConfig(); err != nil {
		return err
	}
	if err := n.StartKubelet(); err != nil {
		return err
	}
	return n.WaitReady(ctx, 120*time.Second)
}

// SlowPodNetworkHeld says whether slowCNIPlugin has been asked for a pod's network (an ADD
// started since SetSlowPodNetwork(ctx, true)).
func (n *Node) SlowPodNetworkHeld() bool {
	_, err := os.Stat(filepath.Join(n.Dir, "cni", "bin", slowCNIPlugin+".held"))
	return err == nil
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

// The runtime handler (and the RuntimeClass of seed S14) whose runc is shimKillScript.
const (
	ShimKillRuntimeHandler = "runc-kill-shim"
	ShimKillRuntimeClass   = "kill-shim"
)

// shimKillScript is the runc of ShimKillRuntimeHandler (@RUNC@: the real runc's path; @KILLED@:
// the node's killedShimsFile): asked to create a container, it kills its parent, the containerd
// shim that is creating the pod's sandbox (as the OOM killer or a crash would); every other
// command goes to runc. It first appends the container's id (runc's last argument; for a
// sandbox, the id of its shim) to @KILLED@, from which Stop finds the socket the killed shim
// leaves in /run/containerd/s: nothing after the kill runs, as the shim starts runc with a
// parent-death signal (SIGKILL).
const shimKillScript = `#!/bin/sh
# kubecause e2e, seed S14: the shim dies while it creates a sandbox.
for a in "$@"; do
	if [ "$a" = create ]; then
		eval "id=\${$#}"
		echo "$id" >> '@KILLED@'
		kill -9 "$PPID"
		exit 1
	fi
done
exec '@RUNC@' "$@"
`

// shimKiller is shimKillScript for the runc at runc, recording into killed.
func shimKiller(runc, killed string) string {
	return strings.NewReplacer("@RUNC@", runc, "@KILLED@", killed).Replace(shimKillScript)
}

// killedShimsFile is where the node's ShimKillRuntimeHandler records the ids of the shims it
// killed, one a line.
func (n *Node) killedShimsFile() string {
	return filepath.Join(n.Dir, "containerd", "killed-shims")
}

// The runtime handler (and the RuntimeClass of seed S10) whose data directory is SmallDiskDir.
const (
	SmallDiskRuntimeHandler = "runc-small-disk"
	SmallDiskRuntimeClass   = "small-disk"
)

// FillSmallDisk mounts a full 1 MiB tmpfs on SmallDiskDir, so the runtime handler
// SmallDiskRuntimeHandler has no space left (seed S10). The machine's own disks are untouched.
func (n *Node) FillSmallDisk() error {
	return fillTmpfs(n.SmallDiskDir, filepath.Join("runc", "k8s.io"))
}

// FreeSmallDisk unmounts SmallDiskDir's tmpfs.
func (n *Node) FreeSmallDisk() error { return unmount(n.SmallDiskDir) }

// ingestDir is where containerd's content store writes every blob a pull fetches before it
// commits it.
func (n *Node) ingestDir() string {
	return filepath.Join(n.Dir, "containerd", "root", "io.containerd.content.v1.content", "ingest")
}

// FillContentStore mounts a full 1 MiB tmpfs on containerd's ingest directory: the next pull of
// anything the node lacks fails with no space left on device, as on a full /var/lib/containerd
// (seed S10). Images already on the node, and the machine's own disks, are untouched.
func (n *Node) FillContentStore() error { return fillTmpfs(n.ingestDir(), "") }

// FreeContentStore unmounts the ingest directory's tmpfs.
func (n *Node) FreeContentStore() error { return unmount(n.ingestDir()) }

// fillTmpfs mounts a 1 MiB tmpfs on dir, makes keep (a directory the user of dir needs, when
// not empty) and fills the rest, so any further write there fails with ENOSPC.
func fillTmpfs(dir, keep string) error {
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=1m,mode=0755"); err != nil {
		return fmt.Errorf("mounting a tmpfs on %s: %w", dir, err)
	}
	if keep != "" {
		if err := os.MkdirAll(filepath.Join(dir, keep), 0o711); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for i := 0; i < 64; i++ {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
	return fmt.Errorf("%s: 4 MiB written to a 1 MiB tmpfs without ENOSPC", dir)
}

func unmount(dir string) error {
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting %s: %w", dir, err)
	}
	return nil
}

// TrustRegistry makes containerd reach host ("127.0.0.1:port") over plain HTTP.
func (n *Node) TrustRegistry(host string) error { return n.registryScheme(host, "http") }

// ExpectTLSRegistry makes containerd reach host over HTTPS, as it does for every registry
// not on the loopback and not configured as insecure.
func (n *Node) ExpectTLSRegistry(host string) error { return n.registryScheme(host, "https") }

// registryScheme writes host's hosts.toml: containerd reaches it with scheme.
func (n *Node) registryScheme(host, scheme string) error {
	dir := filepath.Join(n.RegistryHosts, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	url := scheme + "://" + host
	conf := fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", url, url)
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(conf), 0o644)
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

// SetDiskPressure restarts the kubelet with a nodefs.available eviction threshold 4 GiB above
// what the kubelet's filesystem has free, so the kubelet reports DiskPressure and evicts pods as
// on a full disk (seed S18) while nothing is written to the machine's disks. Off restores the
// threshold and re-imports the node's images, which image garbage collection under the pressure
// may have removed.
func (n *Node) SetDiskPressure(ctx context.Context, on bool) error {
	if !on {
		// While the kubelet is stopped, so no garbage collection removes them again.
		return n.restartWithNodefsAvailable(ctx, defaultNodefsAvailable, n.importImages)
	}
	free, err := n.nodefsFree()
	if err != nil {
		return err
	}
	return n.restartWithNodefsAvailable(ctx, fmt.Sprintf("%dGi", free>>30+4), nil)
}

// SetDiskHeadroom restarts the kubelet with a nodefs.available eviction threshold headroom bytes
// below what its filesystem has free: a pod that writes more crosses it while running, and the
// kubelet's eviction manager evicts the pod using the most disk, as when a disk fills up under
// running pods (seed S18). SetDiskPressure(false) restores the threshold.
func (n *Node) SetDiskHeadroom(ctx context.Context, headroom uint64) error {
	free, err := n.nodefsFree()
	if err != nil {
		return err
	}
	if free < headroom+1<<30 {
		return fmt.Errorf("%s: %d MiB free, too little to set a threshold %d MiB below it", n.Dir, free>>20, headroom>>20)
	}
	return n.restartWithNodefsAvailable(ctx, fmt.Sprintf("%dMi", (free-headroom)>>20), nil)
}

// nodefsFree is what the kubelet's filesystem has free for unprivileged use, as the kubelet
// counts nodefs.available.
func (n *Node) nodefsFree() (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Join(n.Dir, "kubelet"), &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// restartWithNodefsAvailable restarts the kubelet with the nodefs.available threshold, running
// stopped (when not nil) while it is down.
func (n *Node) restartWithNodefsAvailable(ctx context.Context, threshold string, stopped func() error) error {
	if err := n.StopKubelet(); err != nil {
		return err
	}
	if stopped != nil {
		if err := stopped(); err != nil {
			return err
		}
	}
	n.nodefsAvailable = threshold
	if err := n.writeKubeletConfig(); err != nil {
		return err
	}
	if err := n.StartKubelet(); err != nil {
		return err
	}
	return n.WaitReady(ctx, 120*time.Second)
}

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
