package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unreachableKubeconfig points at 127.0.0.1:1, where nothing listens: the exporter starts and
// retries its watches.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// TestHangupIsLoggedAndIgnored: SIGHUP to a running exporter is logged and changes nothing; the
// process goes on until SIGTERM, then ends cleanly. (Go's default for SIGHUP ended it without a
// word.)
func TestHangupIsLoggedAndIgnored(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "KUBECAUSE_TEST_RUN_ARGS="+strings.Join([]string{
		"--kubeconfig=" + kc, "--web.listen-address=127.0.0.1:0", "--no-endpoint-checks.enabled", "--no-auto-gomemlimit"}, "\x1f"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	waitFor := func(what string) {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the process ended before logging %q", what)
				}
				if strings.Contains(l, what) {
					return
				}
			case <-timeout:
				t.Fatalf("no log line with %q within a minute", what)
			}
		}
	}
	waitFor("Listening on")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("SIGHUP received and ignored")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("the process is gone after SIGHUP: %v", err)
	}
	waitFor("shutting down")
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGHUP then SIGTERM: %v, want 0", err)
	}
}
