package framework

import (
	"os"
	"path/filepath"
	"testing"
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
