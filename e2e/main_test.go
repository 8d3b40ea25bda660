//go:build e2e

// Package e2e runs the whole chain on this machine — a real kube-apiserver with etcd,
// kube-state-metrics, the kubecause binary, Prometheus with the mixin's rules, Alertmanager —
// and checks what a user would: exact metric values, the alerts a pager receives, and that
// they resolve. Run with hack/e2e.sh (make e2e).
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubecause/kubecause/e2e/framework"
)

// startStack starts the stack for one test; everything is stopped at the end of the test, and
// on failure the components' logs are printed and the work directory is kept.
func startStack(t *testing.T, o framework.StackOptions) *framework.Stack {
	t.Helper()
	dir, err := os.MkdirTemp("", "kubecause-e2e-"+strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	o.WorkDir = dir
	o.Logf = t.Logf
	s, err := framework.StartStack(context.Background(), o)
	if err != nil {
		t.Fatalf("starting the stack (work dir %s): %v", dir, err)
	}
	t.Logf("stack up in %s (work dir %s)", s.StartupTime.Round(time.Millisecond), dir)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("component logs:\n%s", s.Logs(6000))
			if a, err := s.Prometheus.API.Alerts(context.Background()); err == nil {
				t.Logf("prometheus alerts at failure: %+v", a)
			}
			t.Logf("webhook notifications at failure: %v", s.Webhook.All())
		}
		s.Stop()
		if t.Failed() || os.Getenv("KUBECAUSE_E2E_KEEP") != "" {
			t.Logf("work dir kept: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return s
}

// testContext is cancelled when the test ends.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// must fails the test on err.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sel renders a PromQL selector body from label pairs.
func sel(metric string, labels map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(labels) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return metric + "{" + strings.Join(parts, ",") + "}"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
