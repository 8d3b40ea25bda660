//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestMain removes what a real node made (containers, mounts, network namespaces, the
// bridge, cgroups) when the run is interrupted: Ctrl-C or SIGTERM would otherwise end the
// process without running the tests' cleanups.
func TestMain(m *testing.M) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e: %s: stopping the real node(s) before exiting\n", s)
		framework.StopAllNodes()
		os.Exit(130)
	}()
	os.Exit(m.Run())
}
