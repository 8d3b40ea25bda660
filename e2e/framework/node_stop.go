// The real node's teardown: what Stop removes, in which order, and what Leftovers checks is gone.

package framework

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// liveNodes are the nodes started and not yet stopped, for StopAllNodes.
var liveNodes sync.Map

// StopAllNodes stops every node still running (a test binary interrupted by Ctrl-C or SIGTERM
// calls it before exiting, so nothing is left behind).
func StopAllNodes() {
	liveNodes.Range(func(k, _ any) bool {
		k.(*Node).Stop()
		return true
	})
}

// Stop removes everything the node made, in an order that leaves nothing behind and takes
// seconds however many containers crash-loop: the kubelet stops (nothing restarts a container),
// every container and sandbox is killed at once through the node's cgroup tree, containerd stops
// and the shims are killed (the runtime's records live in Dir and go with it) and their sockets
// removed — the running shims' from the task bundles, the ones seed S14 killed from their ids
// (removeKilledShimSockets) —, then mounts under Dir, the sandboxes' network namespaces and the bridge, the container log links and the
// cgroup tree are removed. Safe on a partial node.
func (n *Node) Stop() {
	defer liveNodes.Delete(n)
	start := time.Now()
	defer func() { n.StopTime = time.Since(start) }()
	if n.kubelet != nil {
		_ = n.kubelet.Stop()
	}
	// A sandbox held by seed S15's plugin lets go (its waiting child ends within a second).
	if n.Dir != "" {
		_ = os.WriteFile(filepath.Join(n.Dir, "cni", "bin", slowCNIPlugin+".release"), nil, 0o644)
	}
	// Read before the runtime goes: the sandboxes' network namespaces, the shims.
	b := n.readBundles()
	if n.CgroupRoot != "" {
		killCgroupTree(n.CgroupRoot, 5*time.Second)
	}
	if n.containerd != nil {
		_ = n.containerd.Stop()
	}
	n.killShims(b.shimPIDs)
	for _, sock := range b.shimSockets {
		_ = os.Remove(sock)
	}
	n.KilledShimSockets = append(n.KilledShimSockets, n.removeKilledShimSockets(shimSocketDir)...)
	unmountUnder(n.Dir)
	n.removeNetwork(b.netns)
	n.removeLogLinks()
	if n.CgroupRoot != "" {
		removeCgroupRoot(n.CgroupRoot)
	}
	if n.subnetLock != nil {
		_ = n.subnetLock.Close()
		n.subnetLock = nil
	}
}

// Leftovers lists what of this node is still on the host after Stop (nothing, when Stop did
// its job): cgroups, mounts under Dir, network namespaces, the bridge, container log links,
// shim sockets (shimSocketLeftovers).
func (n *Node) Leftovers() []string {
	var out []string
	for _, mp := range cgroupMounts() {
		if n.CgroupRoot != "" && dirExists(filepath.Join(mp, n.CgroupRoot)) {
			out = append(out, "cgroup "+filepath.Join(mp, n.CgroupRoot))
		}
	}
	for _, mp := range mountsUnder(n.Dir) {
		out = append(out, "mount "+mp)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", n.Bridge)); err == nil {
		out = append(out, "bridge "+n.Bridge)
	}
	for _, ns := range n.seenNetns {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			out = append(out, "netns "+ns)
		}
	}
	for _, l := range n.logLinks() {
		out = append(out, "log link "+l)
	}
	return append(out, n.shimSocketLeftovers(shimSocketDir)...)
}

// shimSocketDir is where containerd's shims make their sockets (containerd 2.x as root: the
// shim manager's default socket_dir).
const shimSocketDir = "/run/containerd/s"

// criNamespace is the containerd namespace of the CRI's containers and sandboxes.
const criNamespace = "k8s.io"

// shimSocketPaths are the sockets a containerd 2.x runc shim for the task group id makes in dir
// under the containerd at address, in namespace ns: <dir>/<hex sha256 of "<address>/<ns>/<id>">
// and, when containerd logs at debug level, the same of ".../<id>/debug" (pkg/shim
// CreateSocketAddress). The address is in the name, so a socket of this name is this
// containerd's, never another's on the host.
func shimSocketPaths(dir, address, ns, id string) []string {
	p := filepath.Join(address, ns, id)
	return []string{
		filepath.Join(dir, fmt.Sprintf("%x", sha256.Sum256([]byte(p)))),
		filepath.Join(dir, fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Join(p, "debug"))))),
	}
}

// killedShimIDs are the ids of the shims the node's ShimKillRuntimeHandler killed (seed S14).
func (n *Node) killedShimIDs() []string {
	return readKilledShimIDs(n.killedShimsFile())
}

// readKilledShimIDs reads a killedShimsFile: the ids, each once.
func readKilledShimIDs(path string) []string {
	b, _ := os.ReadFile(path)
	var ids []string
	for _, id := range strings.Fields(string(b)) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// removeKilledShimSockets removes from dir the sockets of the shims the node's
// ShimKillRuntimeHandler killed: a killed shim cannot remove its own, and containerd removes
// the task bundle that would name it after the failed start. Each is found exactly from the
// shim's id (shimSocketPaths) and removed only when no process serves it. It returns what it
// removed.
func (n *Node) removeKilledShimSockets(dir string) []string {
	if n.Dir == "" || n.Socket == "" {
		return nil
	}
	var socks []string
	for _, id := range n.killedShimIDs() {
		socks = append(socks, shimSocketPaths(dir, n.Socket, criNamespace, id)...)
	}
	removed := removeDeadSockets(socks)
	n.seenSockets = append(n.seenSockets, removed...)
	return removed
}

// removeDeadSockets removes each of paths that is a socket no process serves, and returns
// them; a served socket, anything else and a missing path are left alone.
func removeDeadSockets(paths []string) []string {
	served, err := boundSockets()
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range paths {
		if info, err := os.Lstat(p); err != nil || info.Mode()&os.ModeSocket == 0 || served[p] {
			continue
		}
		if os.Remove(p) == nil {
			out = append(out, p)
		}
	}
	return out
}

// shimSocketLeftovers are the shim sockets of this node still in dir: the ones its task
// bundles or its killed shims named (Stop removes them), and — a shim that died some other way
// leaves its socket where nothing names it — any socket in dir made since the node started
// that no process serves, except the killed shims' of the other nodes whose containerd still
// runs (runningNodeContainerdDirs: their own teardown removes them).
func (n *Node) shimSocketLeftovers(dir string) []string {
	others := otherNodesKilledShimSockets(dir, runningNodeContainerdDirs(), filepath.Join(n.Dir, "containerd"))
	var out []string
	for _, sock := range n.seenSockets {
		if _, err := os.Lstat(sock); err == nil {
			out = append(out, "shim socket "+sock)
		}
	}
	for _, sock := range staleShimSockets(dir, n.started) {
		if !slices.Contains(n.seenSockets, sock) && !others[sock] {
			out = append(out, "shim socket "+sock+" (no process serves it)")
		}
	}
	return out
}

// otherNodesKilledShimSockets are the sockets in dir of the shims killed by the S14 runc of the
// nodes whose containerd directories (<node>/containerd: config.toml, containerd.sock,
// killed-shims) are containerdDirs, but own's.
func otherNodesKilledShimSockets(dir string, containerdDirs []string, own string) map[string]bool {
	out := map[string]bool{}
	for _, c := range containerdDirs {
		if c == own {
			continue
		}
		for _, id := range readKilledShimIDs(filepath.Join(c, "killed-shims")) {
			for _, p := range shimSocketPaths(dir, filepath.Join(c, "containerd.sock"), criNamespace, id) {
				out[p] = true
			}
		}
	}
	return out
}

// runningNodeContainerdDirs are the directories of the configurations of the containerds
// running on the host as a node of this framework starts them (`containerd --config
// <node>/containerd/config.toml`): another real node, whose killed shims' sockets its own
// teardown removes.
func runningNodeContainerdDirs() []string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if len(args) != 3 || filepath.Base(args[0]) != "containerd" || args[1] != "--config" || filepath.Base(args[2]) != "config.toml" {
			continue
		}
		if d := filepath.Dir(args[2]); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// staleShimSockets are the sockets in dir changed at or after since that no process has bound
// (none is listed in /proc/net/unix).
func staleShimSockets(dir string, since time.Time) []string {
	if since.IsZero() {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	served, err := boundSockets()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.Mode()&os.ModeSocket == 0 || info.ModTime().Before(since) {
			continue
		}
		if p := filepath.Join(dir, e.Name()); !served[p] {
			out = append(out, p)
		}
	}
	return out
}

// boundSockets are the paths of the unix sockets some process holds — listening, or a
// connection it accepted on one — in this network namespace (/proc/net/unix: "Num RefCount
// Protocol Flags Type St Inode Path").
func boundSockets() (map[string]bool, error) {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 8 && strings.HasPrefix(f[7], "/") {
			out[strings.Join(f[7:], " ")] = true
		}
	}
	return out, nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// killShims kills the containerd shims started for this node: the PIDs its bundles name, and
// any process whose command line names this node's socket.
func (n *Node) killShims(pids []int) {
	for _, pid := range pids {
		if pid > 1 && strings.Contains(cmdline(pid), "containerd-shim") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(p), "%d", &pid); err != nil {
			continue
		}
		if cmd := cmdline(pid); strings.Contains(cmd, "containerd-shim") && strings.Contains(cmd, n.Socket) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) {
	for _, mp := range mountsUnder(dir) {
		_ = syscall.Unmount(mp, syscall.MNT_DETACH)
	}
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	return points
}

// unescapeMount undoes /proc/self/mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%o", &c); err == nil {
				b.WriteByte(byte(c))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// netnsDir is where the CNI (through containerd) pins the pods' network namespaces.
const netnsDir = "/var/run/netns"

// bundles is what Stop needs from containerd's task bundles (one per running container or
// sandbox): the sandboxes' network namespaces (a sandbox's OCI spec names the one the CRI made
// for it), the shims' PIDs and their sockets (a killed shim cannot remove its own).
type bundles struct {
	netns, shimSockets []string
	shimPIDs           []int
}

func (n *Node) readBundles() bundles {
	var b bundles
	dirs, _ := filepath.Glob(filepath.Join(n.Dir, "containerd", "state", "io.containerd.runtime.v2.task", "*", "*"))
	seen := map[string]bool{}
	for _, dir := range dirs {
		if data, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
			var spec struct {
				Linux struct {
					Namespaces []struct{ Type, Path string } `json:"namespaces"`
				} `json:"linux"`
			}
			if json.Unmarshal(data, &spec) == nil {
				for _, ns := range spec.Linux.Namespaces {
					if ns.Type == "network" && strings.HasPrefix(ns.Path, netnsDir+"/") && !seen[ns.Path] {
						seen[ns.Path] = true
						b.netns = append(b.netns, filepath.Base(ns.Path))
					}
				}
			}
		}
		if data, err := os.ReadFile(filepath.Join(dir, "shim.pid")); err == nil {
			var pid int
			if _, err := fmt.Sscanf(string(data), "%d", &pid); err == nil {
				b.shimPIDs = append(b.shimPIDs, pid)
			}
		}
		// "unix:///run/containerd/s/<hash>": only a socket in containerd's shim directory.
		if sock := shimSocket(dir); strings.HasPrefix(sock, "/run/containerd/s/") && !seen[sock] {
			seen[sock] = true
			b.shimSockets = append(b.shimSockets, sock)
		}
	}
	n.seenNetns = append(n.seenNetns, b.netns...)
	n.seenSockets = append(n.seenSockets, b.shimSockets...)
	return b
}

// shimSocket is the path of the shim's socket a task bundle records: containerd 2.x writes it
// in bootstrap.json ({"version":2,"address":"unix:///run/containerd/s/<hash>","protocol":"ttrpc"}),
// containerd 1.x in a file "address". "" when neither names one.
func shimSocket(bundle string) string {
	var addr string
	if data, err := os.ReadFile(filepath.Join(bundle, "bootstrap.json")); err == nil {
		var p struct {
			Address string `json:"address"`
		}
		if json.Unmarshal(data, &p) == nil {
			addr = p.Address
		}
	} else if data, err := os.ReadFile(filepath.Join(bundle, "address")); err == nil {
		addr = strings.TrimSpace(string(data))
	}
	return strings.TrimPrefix(addr, "unix://")
}

// removeNetwork deletes this node's network namespaces — the ones its sandboxes used, and any
// whose eth0 hangs on this node's bridge — then the bridge.
func (n *Node) removeNetwork(known []string) {
	ip := firstExecutable("ip")
	if ip == "" {
		return
	}
	del := map[string]bool{}
	for _, ns := range known {
		del[ns] = true
	}
	if out, err := exec.Command(ip, "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && strings.HasPrefix(f[0], "cni-") && n.netnsOnBridge(f[0]) {
				del[f[0]] = true
			}
		}
	}
	for ns := range del {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			_ = exec.Command(ip, "netns", "del", ns).Run()
			n.seenNetns = append(n.seenNetns, ns)
		}
	}
	_ = exec.Command(ip, "link", "del", n.Bridge).Run()
}

// netnsOnBridge reports whether the namespace's eth0 peer is a port of this node's bridge.
func (n *Node) netnsOnBridge(ns string) bool {
	out, err := exec.Command("ip", "-n", ns, "-o", "link", "show", "eth0").Output()
	if err != nil {
		// No eth0: another node's sandbox being set up, or one of ours the bundles named.
		return false
	}
	// "2: eth0@if7: …": 7 is the host-side peer's index.
	s := string(out)
	i := strings.Index(s, "@if")
	if i < 0 {
		return false
	}
	var idx int
	if _, err := fmt.Sscanf(s[i+3:], "%d", &idx); err != nil {
		return false
	}
	master, err := os.Readlink(fmt.Sprintf("/sys/class/net/%s", ifaceByIndex(idx)) + "/master")
	return err == nil && filepath.Base(master) == n.Bridge
}

func ifaceByIndex(idx int) string {
	entries, _ := os.ReadDir("/sys/class/net")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", e.Name(), "ifindex"))
		if err == nil && strings.TrimSpace(string(b)) == fmt.Sprint(idx) {
			return e.Name()
		}
	}
	return ""
}

// legacyLogLinks is where the kubelet links every container's log, whatever its podLogsDir.
const legacyLogLinks = "/var/log/containers"

// logLinks lists the kubelet's links in /var/log/containers into this node's pod logs.
func (n *Node) logLinks() []string {
	entries, _ := os.ReadDir(legacyLogLinks)
	var out []string
	for _, e := range entries {
		p := filepath.Join(legacyLogLinks, e.Name())
		if t, err := os.Readlink(p); err == nil && strings.HasPrefix(t, n.PodLogsDir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// removeLogLinks removes the links a stopped kubelet could not remove itself.
func (n *Node) removeLogLinks() {
	if n.PodLogsDir == "" {
		return
	}
	for _, p := range n.logLinks() {
		_ = os.Remove(p)
	}
}

// cgroupTree lists the directories of the node's cgroup tree in every hierarchy, leaves first.
func cgroupTree(name string) []string {
	if !strings.HasPrefix(name, "/kubecause-") {
		return nil
	}
	var dirs []string
	for _, mp := range cgroupMounts() {
		_ = filepath.WalkDir(filepath.Join(mp, name), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	return dirs
}

// killCgroupTree sends SIGKILL to every process in the node's cgroup tree (its containers and
// sandboxes; nothing else lives there) and waits up to timeout until the tree is empty.
func killCgroupTree(name string, timeout time.Duration) {
	dirs := cgroupTree(name)
	deadline := time.Now().Add(timeout)
	for {
		alive := 0
		for _, d := range dirs {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				var pid int
				if _, err := fmt.Sscanf(f, "%d", &pid); err == nil && pid > 1 {
					alive++
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if alive == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// removeCgroupRoot kills what is left in the node's cgroup tree and removes the tree, leaves
// first, in every hierarchy. Nothing outside the tree is touched.
func removeCgroupRoot(name string) {
	killCgroupTree(name, 2*time.Second)
	dirs := cgroupTree(name)
	// A killed process leaves its cgroup when it is reaped: retry briefly.
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := 0
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
