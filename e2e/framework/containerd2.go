package framework

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The real node's containerd 2.x (docs/e2e.md, "Runtimes"): the binaries of
// hack/deps/26-containerd2.sh (Containerd2Dir), started by startContainerd with
// containerdConfigV3, under the kubelet of KubeletVersion (1.36 and newer need containerd 2.x).
const (
	// Containerd2Version is the containerd release hack/deps/26-containerd2.sh builds.
	Containerd2Version = "v2.4.2"
	// CrunRuntimeHandler is the runtime handler (and RuntimeClass name) that runs pods with
	// crun instead of runc. On a host with cgroup v1 controllers and any controller left on the
	// cgroup v2 hierarchy (hybrid), crun refuses every container; see docs/e2e.md.
	CrunRuntimeHandler = "crun"
)

// Containerd2Dir is where hack/deps/26-containerd2.sh caches containerd, containerd-shim-runc-v2
// and ctr of Containerd2Version.
func Containerd2Dir() string {
	return filepath.Join(CacheDir(), "containerd-"+Containerd2Version, "bin")
}

// containerdV3Params are the paths a containerd 2.x configuration of the node names.
type containerdV3Params struct {
	Root, State, Socket, Opt string
	SandboxImage             string
	// Shim is containerd-shim-runc-v2 of the same release, named by its path in every runtime
	// handler: containerd looks for a shim on its PATH first, where Debian's 1.6 shim may be.
	Shim string
	// Runc and RuncRoot are runc and its state directory; SmallDiskRuncRoot is the state
	// directory of the handler SmallDiskRuntimeHandler (seed S10).
	Runc, RuncRoot, SmallDiskRuncRoot string
	// ShimKiller and ShimKillRoot are the runc of the handler ShimKillRuntimeHandler (seed S14,
	// shimKillScript) and its state directory; no such handler when ShimKiller is empty.
	ShimKiller, ShimKillRoot string
	// Crun and CrunRoot: crun and its state directory; no crun handler when Crun is empty.
	Crun, CrunRoot string
	// CNIBinDirs are where containerd looks for CNI plugins, in order: the host's, then the
	// node's own (the plugins a test writes, seed S15).
	CNIBinDirs    []string
	CNIConfDir    string
	RegistryHosts string
}

// containerdV3Params are the node's paths, the same directories as its containerd 1.6 uses,
// with the shim and crun given (crun may be "").
func (n *Node) containerdV3Params(sandboxImage, shim, crun string) containerdV3Params {
	c := filepath.Join(n.Dir, "containerd")
	p := containerdV3Params{
		Root: filepath.Join(c, "root"), State: filepath.Join(c, "state"),
		Socket: n.Socket, Opt: filepath.Join(c, "opt"),
		SandboxImage: sandboxImage, Shim: shim,
		Runc: n.Bin.Runc, RuncRoot: filepath.Join(c, "runc"),
		SmallDiskRuncRoot: filepath.Join(n.SmallDiskDir, "runc"),
		CNIBinDirs:        []string{n.Bin.CNIDir, filepath.Join(n.Dir, "cni", "bin")},
		CNIConfDir:        filepath.Join(n.Dir, "cni", "net.d"),
		RegistryHosts:     n.RegistryHosts,
		ShimKiller:        filepath.Join(c, ShimKillRuntimeHandler), ShimKillRoot: filepath.Join(c, ShimKillRuntimeHandler+"-state"),
	}
	if crun != "" {
		p.Crun, p.CrunRoot = crun, filepath.Join(c, "crun")
	}
	return p
}

// containerdConfigV3 is the node's containerd configuration in version 3, the version of
// containerd 2.0 and later (2.4 reads it too, migrating it to its version 4 with a warning in its
// log). The CRI plugin of 1.6 is three plugins in 2.x: cri.v1.images (snapshotter, sandbox image,
// registry hosts), cri.v1.runtime (runtimes, CNI, restrict_oom_score_adj) and grpc.v1.cri
// (streaming server).
func containerdConfigV3(p containerdV3Params) string {
	var b strings.Builder
	fmt.Fprintf(&b, `version = 3
root = %q
state = %q

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

# NRI (on by default in 2.x) would serve /var/run/nri/nri.sock, one path for every containerd
# on the host and left behind when it stops; no NRI plugin runs here.
[plugins."io.containerd.nri.v1.nri"]
  disable = true

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %q
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = %q

[plugins."io.containerd.cri.v1.runtime"]
  # The sandbox of the tests cannot lower oom_score_adj (no CAP_SYS_RESOURCE).
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
`, p.Root, p.State, p.Socket, p.Socket+".ttrpc", p.Opt, p.SandboxImage, p.RegistryHosts)
	handler := func(name, comment, binary, root string) {
		fmt.Fprintf(&b, `    # %s
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.%[2]s]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = %[3]q
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.%[2]s.options]
        BinaryName = %[4]q
        Root = %[5]q
`, comment, name, p.Shim, binary, root)
	}
	handler("runc", "runc, its state beside containerd's, not in the host's /run/containerd/runc.", p.Runc, p.RuncRoot)
	handler(SmallDiskRuntimeHandler, "Seed S10: a runc whose state root is a full filesystem (SmallDiskDir).", p.Runc, p.SmallDiskRuncRoot)
	if p.ShimKiller != "" {
		handler(ShimKillRuntimeHandler, "Seed S14: a runc that kills its shim when asked to create a container.", p.ShimKiller, p.ShimKillRoot)
	}
	if p.Crun != "" {
		handler(CrunRuntimeHandler, "crun, for pods of the RuntimeClass "+CrunRuntimeHandler+".", p.Crun, p.CrunRoot)
	}
	dirs := make([]string, len(p.CNIBinDirs))
	for i, d := range p.CNIBinDirs {
		dirs[i] = fmt.Sprintf("%q", d)
	}
	fmt.Fprintf(&b, `  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%s]
    conf_dir = %q

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
`, strings.Join(dirs, ", "), p.CNIConfDir)
	return b.String()
}
