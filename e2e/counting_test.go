//go:build e2e

package e2e

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
)

// TestCountingSemantics writes Events the ways the two recorders really do and checks every
// step's exact effect on kubecause_events_total in Prometheus (docs/metrics.md):
// the kubelet spam filter's jump, an update that changes no count, the aggregate "(combined
// from similar events)" Event, an expired Event re-created under its name with its accumulated
// count, and kube-scheduler's events.k8s.io series; then the scheduling alert.
func TestCountingSemantics(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"}})
	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", "worker-7d9c6b5f4-kx2lp", framework.PodOptions{Node: "node-a"}))
	must[*corev1.Pod](t)(s.Objects.SetRunningNotReady(ctx, pod, "10.244.2.9"))
	kubelet := framework.Kubelet(s.Cluster.Client, "node-a")
	probe := `sum(kubecause_events_total{namespace="apps",reason="Unhealthy",cause="readiness_probe_http_status"})`

	ev := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "Unhealthy", `Readiness probe failed: HTTP probe failed with statuscode: 503`))
	promValue(t, s, probe, 1)
	// Spam filter: 25 occurrences held back, the next write carries count 26.
	check(t, ev.SetCount(ctx, 26))
	promValue(t, s, probe, 26)
	// An update that changes no count (a label added) adds nothing.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"e2e": "touched"}}})
	_, err := s.Cluster.Client.CoreV1().Events("apps").Patch(ctx, ev.Event.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	check(t, err)
	// Aggregation: a new Event with the prefixed message, same reason and cause: +1.
	must[*framework.CoreEvent](t)(kubelet.EmitCombined(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "Unhealthy", `Readiness probe failed: HTTP probe failed with statuscode: 500`))
	promValue(t, s, probe, 27)
	// Expired (deleted) and re-created under the same name with the accumulated count 30: the
	// 4 occurrences since the count kubecause last saw (26), not 30 and not 1.
	check(t, ev.Delete(ctx))
	check(t, ev.Recreate(ctx, 4))
	promValue(t, s, probe, 31)
	t.Logf("core/v1: 1 → spam-filter jump to 26 (+25) → no-count update (+0) → combined (+1) → expired, re-created with count %d (+4) = 31", ev.Count())

	// kube-scheduler through events.k8s.io: create (+1), series 2 (+1), series flushed at 5 (+3).
	pending := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", "batch-0", framework.PodOptions{}))
	must[*corev1.Pod](t)(s.Objects.SetUnschedulable(ctx, pending, `0/3 nodes are available: 3 Insufficient cpu.`))
	sched := framework.Scheduler(s.Cluster.Client)
	sev := must[*framework.SeriesEvent](t)(sched.Emit(ctx, framework.PodRef(pending), corev1.EventTypeWarning, "FailedScheduling",
		`0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`))
	sq := `sum(kubecause_events_total{namespace="apps",reason="FailedScheduling",cause="scheduling_insufficient_resources",component="default-scheduler"})`
	promValue(t, s, sq, 1)
	check(t, sev.SetSeries(ctx, 2))
	promValue(t, s, sq, 2)
	check(t, sev.SetSeries(ctx, 5))
	promValue(t, s, sq, 5)
	t.Logf("events.k8s.io: create (+1), series 2 (+1), series 5 (+3) = 5")

	match := map[string]string{"alertname": "KubecausePodUnschedulable", "namespace": "apps", "pod": "batch-0", "cause": "scheduling_insufficient_resources"}
	got, err := s.Webhook.WaitFiring(alertTimeout, match)
	check(t, err)
	t.Logf("webhook received: %v", got)
	a := scenarios.ExpectedAlert{Name: "KubecausePodUnschedulable", Runbook: "kubecausepodunschedulable.md#scheduling_insufficient_resources"}
	if !a.RunbookOK(got[0].Annotations["runbook_url"]) {
		t.Errorf("runbook_url %q, want …/%s", got[0].Annotations["runbook_url"], a.Runbook)
	}
}
