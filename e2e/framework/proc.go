// Package framework starts the real components of the end-to-end tests and the demo — a
// kube-apiserver with etcd (through controller-runtime's envtest), kube-state-metrics,
// kubecause, Prometheus and Alertmanager — as child processes on 127.0.0.1, and writes
// Kubernetes objects the way the kubelet and the scheduler do.
package framework

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process whose output goes to a log file.
type Process struct {
	Name    string
	Path    string
	Args    []string
	LogPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// NewProcess describes a process; its output is appended to <logDir>/<name>.log.
func NewProcess(name, logDir, path string, args ...string) *Process {
	return &Process{Name: name, Path: path, Args: args, LogPath: filepath.Join(logDir, name+".log")}
}

// Start starts the process. It is killed when the parent dies (Pdeathsig).
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s: already running", p.Name)
	}
	f, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "==== %s start: %s %s\n", time.Now().Format(time.RFC3339Nano), p.Path, strings.Join(p.Args, " "))
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	p.cmd, p.done, p.err = cmd, make(chan struct{}), nil
	done := p.done
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Running reports whether the process has been started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Exited returns a channel closed when the process exits (nil when never started).
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Stop sends SIGTERM, waits up to 15 s, then kills. Stopping a stopped process is a no-op.
func (p *Process) Stop() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	p.mu.Lock()
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	return nil
}

// Kill stops the process with SIGKILL (a crash, not a graceful shutdown).
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
	p.mu.Lock()
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
}

// Log returns the last max bytes of the process' log.
func (p *Process) Log(max int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	if max > 0 && len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddr returns "127.0.0.1:<free port>".
func FreeAddr() (string, error) {
	p, err := FreePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// WaitHTTP polls url until it answers 200, the process exits, or the timeout passes.
func WaitHTTP(url string, timeout time.Duration, p *Process) error {
	return waitURL(&http.Client{Timeout: 2 * time.Second}, url, timeout, p, func(code int) bool { return code == http.StatusOK })
}

// waitURL polls url with client until ok accepts its status, the process exits, or the
// timeout passes.
func waitURL(client *http.Client, url string, timeout time.Duration, p *Process, ok func(int) bool) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if p != nil && !p.Running() {
			return fmt.Errorf("%s exited while waiting for %s; log:\n%s", p.Name, url, p.Log(4000))
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if ok(resp.StatusCode) {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	if last == nil {
		last = errors.New("no attempt")
	}
	return fmt.Errorf("%s not ready after %s: %w", url, timeout, last)
}

// Pause stops the process with SIGSTOP until Resume: it holds its connections but reads nothing,
// as a process starved of CPU or cut off by a network partition would.
func (p *Process) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (p *Process) Resume() error { return p.signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("%s is not running", p.Name)
	}
	return cmd.Process.Signal(sig)
}
