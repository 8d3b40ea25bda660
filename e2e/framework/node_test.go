package framework

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The shim's socket, which Stop removes (a killed shim cannot), as each containerd release
// records it in a task bundle: 2.x in bootstrap.json (written by core/runtime/v2's
// writeBootstrapParams), 1.x in a file "address".
func TestShimSocketFromBundle(t *testing.T) {
	for _, c := range []struct{ name, file, content, want string }{
		{"containerd 2.x", "bootstrap.json", `{"version":2,"address":"unix:///run/containerd/s/3f1c9a","protocol":"ttrpc"}`, "/run/containerd/s/3f1c9a"},
		{"containerd 1.x", "address", "unix:///run/containerd/s/8b0d2e\n", "/run/containerd/s/8b0d2e"},
		{"none", "config.json", "{}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := shimSocket(dir); got != c.want {
				t.Errorf("shimSocket = %q, want %q", got, c.want)
			}
		})
	}
}

// TestKubeVersionMatchesDeps: the framework looks for the control plane and the kubelet of the
// release the deps script builds, and the wrapper module requires that release of
// k8s.io/kubernetes and of every staging module it replaces (one tree for all four binaries).
func TestKubeVersionMatchesDeps(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if KubeletVersion != KubeVersion {
		t.Errorf("KubeletVersion %s, KubeVersion %s: one release for the node and its control plane", KubeletVersion, KubeVersion)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "deps", "20-e2e-tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^KUBE_VERSION=(\S+)$`).FindSubmatch(script); m == nil || string(m[1]) != KubeVersion {
		t.Errorf("hack/deps/20-e2e-tools.sh builds %q, the framework looks for %s", m, KubeVersion)
	}
	mod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "kubernetes", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (\S+)`).FindSubmatch(mod); m == nil || string(m[1]) != KubeVersion {
		t.Errorf("hack/tools/kubernetes/go.mod requires k8s.io/kubernetes %q, the framework looks for %s", m, KubeVersion)
	}
	staging := "v0." + strings.TrimPrefix(KubeVersion, "v1.")
	for _, m := range regexp.MustCompile(`(?m)^\s*(k8s\.io/\S+) => k8s\.io/\S+ (\S+)$`).FindAllSubmatch(mod, -1) {
		if string(m[2]) != staging {
			t.Errorf("hack/tools/kubernetes/go.mod replaces %s with %s, want %s (k8s.io/kubernetes %s)", m[1], m[2], staging, KubeVersion)
		}
	}
	for _, main := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"} {
		if _, err := os.Stat(filepath.Join(root, "hack", "tools", "kubernetes", "cmd", main, "main.go")); err != nil {
			t.Errorf("hack/tools/kubernetes builds no %s: %v", main, err)
		}
	}
}

// TestStaleShimSockets: a socket no process serves any more, made since the node started, is a
// leftover (a killed shim's, seed S14); one still served, or older than the node, is not.
func TestStaleShimSockets(t *testing.T) {
	dir := t.TempDir()
	since := time.Now().Add(-time.Second)
	listen := func(name string) *net.UnixListener {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		l.SetUnlinkOnClose(false)
		return l
	}
	served := listen("served")
	defer served.Close()
	listen("dead").Close()
	listen("old").Close()
	old := since.Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "old"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := staleShimSockets(dir, since)
	if want := []string{filepath.Join(dir, "dead")}; !slices.Equal(got, want) {
		t.Errorf("stale sockets %q, want %q", got, want)
	}
	if got := staleShimSockets(dir, time.Time{}); got != nil {
		t.Errorf("a node never started: %q", got)
	}
}

// TestShimSocketPaths: the name containerd 2.x gives a shim's socket, checked on the real node
// (containerd 2.4.2): the shim started with `-namespace k8s.io -id b5449ec3… -address
// <node>/containerd/containerd.sock` listened on /run/containerd/s/05dc1a91…; the second path is
// the debug socket's (pkg/shim CreateSocketAddress).
func TestShimSocketPaths(t *testing.T) {
	got := shimSocketPaths(shimSocketDir, "/tmp/kubecause-e2e-TestRealNode-1596034270/node/containerd/containerd.sock",
		criNamespace, "b5449ec30835922fa8949508715f2025361277d8d7314846ebd36e73c9713133")
	if want := "/run/containerd/s/05dc1a91e57ec6850588382d19aed0f25b7f2f956d3978a383dd9ce45221c701"; len(got) != 2 || got[0] != want {
		t.Fatalf("shim socket %q, want %q first", got, want)
	}
	if got[1] == got[0] || filepath.Dir(got[1]) != shimSocketDir {
		t.Errorf("debug socket %q", got[1])
	}
}

// listenUnix makes a socket at path that a process (this test) serves until closed; closing it
// leaves the file, as a killed shim does.
func listenUnix(t *testing.T, path string) *net.UnixListener {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	return l
}

// TestRemoveKilledShimSockets: Stop removes the socket of a shim seed S14 killed, found from
// its id; it leaves a socket a process still serves, one of an id it does not know and one
// older than the node; Leftovers then reports only the dead socket made since the node started
// that Stop did not remove.
func TestRemoveKilledShimSockets(t *testing.T) {
	// Short: a socket's path must fit in 108 bytes, and the names are 64 hex digits.
	root, err := os.MkdirTemp("", "kcs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	dir := filepath.Join(root, "s")
	n := &Node{Dir: filepath.Join(root, "node"), started: time.Now().Add(-time.Second)}
	n.Socket = filepath.Join(n.Dir, "containerd", "containerd.sock")
	for _, d := range []string{dir, filepath.Join(n.Dir, "containerd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(n.killedShimsFile(), []byte("killed\nserved\nkilled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	killed := shimSocketPaths(dir, n.Socket, criNamespace, "killed")[0]
	served := shimSocketPaths(dir, n.Socket, criNamespace, "served")[0]
	unknown := shimSocketPaths(dir, n.Socket, criNamespace, "unknown")[0]
	old := shimSocketPaths(dir, n.Socket, criNamespace, "old")[0]
	listenUnix(t, killed).Close()
	defer listenUnix(t, served).Close()
	listenUnix(t, unknown).Close()
	listenUnix(t, old).Close()
	before := n.started.Add(-time.Hour)
	if err := os.Chtimes(old, before, before); err != nil {
		t.Fatal(err)
	}

	if got, want := n.shimSocketLeftovers(dir), []string{"shim socket " + killed + " (no process serves it)", "shim socket " + unknown + " (no process serves it)"}; !sameSet(got, want) {
		t.Errorf("before: leftovers %q, want %q", got, want)
	}
	if got := n.removeKilledShimSockets(dir); !slices.Equal(got, []string{killed}) {
		t.Errorf("removed %q, want %q", got, killed)
	}
	for _, p := range []string{served, unknown, old} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
	if got, want := n.shimSocketLeftovers(dir), []string{"shim socket " + unknown + " (no process serves it)"}; !slices.Equal(got, want) {
		t.Errorf("after: leftovers %q, want %q", got, want)
	}
	if err := os.Remove(unknown); err != nil {
		t.Fatal(err)
	}
	if got := n.shimSocketLeftovers(dir); len(got) != 0 {
		t.Errorf("leftovers %q, want none", got)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestShimKillScript: the S14 runc records the container's id and kills its parent when asked
// to create; any other command goes to the real runc with its arguments unchanged.
func TestShimKillScript(t *testing.T) {
	dir := t.TempDir()
	runcArgs, killed := filepath.Join(dir, "runc-args"), filepath.Join(dir, "killed")
	runc := filepath.Join(dir, "runc")
	if err := os.WriteFile(runc, []byte("#!/bin/sh\necho \"$@\" > '"+runcArgs+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, ShimKillRuntimeHandler)
	if err := os.WriteFile(script, []byte(shimKiller(runc, killed)), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(script, "--root", "/r", "state", "abc").CombinedOutput(); err != nil {
		t.Fatalf("state: %v: %s", err, out)
	}
	if b, _ := os.ReadFile(runcArgs); string(b) != "--root /r state abc\n" {
		t.Errorf("runc got %q", b)
	}
	// The parent stands for the shim: killed, it does not reach its exit 7.
	parent := exec.Command("sh", "-c", `"$0" --root /r --log /l create --bundle /b --pid-file /p sandbox-1; exit 7`, script)
	err := parent.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("parent: %v, want killed by SIGKILL", err)
	}
	if b, _ := os.ReadFile(killed); string(b) != "sandbox-1\n" {
		t.Errorf("killed ids %q, want sandbox-1", b)
	}
	if b, _ := os.ReadFile(runcArgs); string(b) != "--root /r state abc\n" {
		t.Errorf("create went to runc: %q", b)
	}
}

// TestOtherNodesKilledShimSockets: the sockets of the shims another running node's S14 killed
// are that node's (its teardown removes them), so this node's leftover check skips them; its
// own killed shims are not among them.
func TestOtherNodesKilledShimSockets(t *testing.T) {
	root := t.TempDir()
	own, other := filepath.Join(root, "a", "containerd"), filepath.Join(root, "b", "containerd")
	for _, c := range []struct{ dir, ids string }{{own, "mine\n"}, {other, "theirs\ntheirs\n"}} {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, "killed-shims"), []byte(c.ids), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := otherNodesKilledShimSockets(shimSocketDir, []string{own, other}, own)
	want := shimSocketPaths(shimSocketDir, filepath.Join(other, "containerd.sock"), criNamespace, "theirs")
	if len(got) != len(want) || !got[want[0]] || !got[want[1]] {
		t.Errorf("other nodes' sockets %v, want %q", got, want)
	}
	if got := otherNodesKilledShimSockets(shimSocketDir, []string{own}, own); len(got) != 0 {
		t.Errorf("no other node: %v", got)
	}
}
