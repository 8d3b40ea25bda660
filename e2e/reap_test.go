//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestKilledTestLeavesNoControlPlane: a test process killed before its cleanup (a -timeout, a
// CI job cancelled, SIGKILL) takes its etcd and kube-apiserver with it; they used to keep
// running, holding memory and ports until someone found them.
func TestKilledTestLeavesNoControlPlane(t *testing.T) {
	if os.Getenv("KUBECAUSE_REAP_CHILD") != "" {
		t.Skip("runs only as the parent of the process it kills")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperControlPlaneChild$", "-test.v")
	cmd.Env = append(os.Environ(), "KUBECAUSE_REAP_CHILD="+t.TempDir())
	out, err := cmd.StdoutPipe()
	check(t, err)
	cmd.Stderr = os.Stderr
	check(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	// The child prints the pids of its control plane once it is up.
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f, ok := strings.CutPrefix(sc.Text(), "control plane pids:"); ok {
			for _, s := range strings.Fields(f) {
				pids = append(pids, must[int](t)(strconv.Atoi(s)))
			}
			break
		}
	}
	if len(pids) != 2 {
		t.Fatalf("the child reported control plane pids %v, want etcd's and kube-apiserver's", pids)
	}
	for _, p := range pids {
		if !alive(p) {
			t.Fatalf("pid %d is not running before the kill", p)
		}
	}
	check(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	err = framework.Poll(context.Background(), 30*time.Second, func() (bool, error) {
		for _, p := range pids {
			if alive(p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		for _, p := range pids {
			if alive(p) {
				t.Errorf("pid %d (%s) still runs after its test was killed", p, cmdline(p))
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}
}

// TestHelperControlPlaneChild is the process TestKilledTestLeavesNoControlPlane kills: it starts
// a control plane, prints its pids and waits to be killed.
func TestHelperControlPlaneChild(t *testing.T) {
	dir := os.Getenv("KUBECAUSE_REAP_CHILD")
	if dir == "" {
		t.Skip("started by TestKilledTestLeavesNoControlPlane")
	}
	c, err := framework.StartCluster(filepath.Join(dir, "cluster"), framework.ClusterOptions{})
	check(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	var pids []string
	for _, p := range children(os.Getpid()) {
		pids = append(pids, strconv.Itoa(p))
	}
	fmt.Printf("control plane pids: %s\n", strings.Join(pids, " "))
	<-testContext(t).Done() // killed before this returns
}

// children returns the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	f := strings.Fields(rest)
	return len(f) > 0 && f[0] != "Z"
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " ")
}
