package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	cmd := exporterChild(t)
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

// sigIgnored reads from /proc whether process pid ignores signal sig (its SigIgn mask).
func sigIgnored(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m&(1<<(sig-1)) != 0
		}
	}
	t.Fatalf("no SigIgn in /proc/%d/status", pid)
	return false
}

// TestHangupIgnoredFromTheStart: SIGHUP is ignored from the first package initializer, before the
// Kubernetes libraries' and long before main, and a SIGHUP sent then does not end the process,
// which goes on to serve. Before, SIGHUP had Go's default action (exit) until main had set
// kubecause up, ~50 ms after exec.
func TestHangupIgnoredFromTheStart(t *testing.T) {
	cmd := exporterChild(t)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	// The test process ignores SIGHUP itself (it links package hangup), and an ignored signal
	// stays ignored across exec: the child must start with the default action, as under a shell.
	signal.Reset(syscall.SIGHUP)
	defer signal.Ignore(syscall.SIGHUP)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGHUP)
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	for !sigIgnored(t, cmd.Process.Pid, syscall.SIGHUP) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("SIGHUP not ignored 10 s after exec; output:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Microsecond) // polling the child's signal mask
	}
	ignoredAfter, before := time.Since(start), stderr.String()
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGHUP ignored %v after exec, sent then; output so far: %q", ignoredAfter.Round(10*time.Microsecond), before)
	for !strings.Contains(stderr.String(), "Listening on") {
		if time.Since(start) > time.Minute {
			t.Fatalf("not serving a minute after exec; output:\n%s", stderr.String())
		}
		if cmd.ProcessState != nil || !processAlive(cmd.Process.Pid) {
			t.Fatalf("the process ended after an early SIGHUP; output:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling its log
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after an early SIGHUP then SIGTERM: %v, want 0; output:\n%s", err, stderr.String())
	}
}

// processAlive says whether pid is running (not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// exporterChild is this test binary run as kubecause against an unreachable apiserver, serving on
// a free port of 127.0.0.1.
func exporterChild(t *testing.T) *exec.Cmd {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "KUBECAUSE_TEST_RUN_ARGS="+strings.Join([]string{
		"--kubeconfig=" + kc, "--web.listen-address=127.0.0.1:0", "--no-endpoint-checks.enabled", "--no-auto-gomemlimit"}, "\x1f"))
	return cmd
}
