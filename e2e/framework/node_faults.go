// The faults a real node's scenarios inject: pod addresses exhausted, a slow CNI plugin, a shim
// killed, full disks, registry schemes, disk pressure.

package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

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
