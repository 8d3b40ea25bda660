package framework

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
