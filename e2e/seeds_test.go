//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestSeedScenarios plays every seed scenario with an Event or state signal into one cluster,
// as the kubelet, the controllers and the scheduler would write them, and checks per scenario:
// the exact occurrence counts in Prometheus, the alert the pager receives (labels and the
// runbook section of the cause), and that it resolves once the state is fixed.
func TestSeedScenarios(t *testing.T) {
	ctx := testContext(t)
	scenarios := framework.SeedScenarios()
	s := startStack(t, framework.StackOptions{Namespaces: framework.Namespaces(scenarios)})
	for _, sc := range scenarios {
		check(t, sc.Play(ctx, s))
	}
	for _, sc := range scenarios {
		t.Run(sc.ID+"/fires", func(t *testing.T) {
			t.Logf("%s: %s", sc.ID, sc.Title)
			for _, o := range sc.Occurrences {
				promValue(t, s, o.Selector(), o.Count)
			}
			expectAlertsFire(t, s, sc.Alerts)
		})
	}
	for _, sc := range scenarios {
		check(t, sc.Fix(ctx, s))
	}
	for _, sc := range scenarios {
		t.Run(sc.ID+"/resolves", func(t *testing.T) {
			for _, a := range sc.Alerts {
				got, err := s.Webhook.WaitResolved(resolveTimeout, a.Match())
				check(t, err)
				t.Logf("%s: %v", sc.ID, got)
			}
		})
	}
	summary := map[string]int{}
	for _, n := range s.Webhook.All() {
		summary[fmt.Sprintf("%s %s", n.Labels["alertname"], n.Status)]++
	}
	t.Logf("all notifications by alert and status: %v", summary)
}
