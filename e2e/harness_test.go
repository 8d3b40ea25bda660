//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestHarness proves the parts the other tests stand on, without kubecause: the apiserver
// accepts what the kubelet would write, kube-state-metrics reports it to Prometheus, and an
// alert on it travels Prometheus → Alertmanager → webhook, then resolves.
func TestHarness(t *testing.T) {
	ctx := testContext(t)
	rule := filepath.Join(t.TempDir(), "harness.yaml")
	check(t, os.WriteFile(rule, []byte(`groups:
- name: harness
  rules:
  - alert: HarnessContainerWaiting
    expr: max by (namespace, pod, reason) (kube_pod_container_status_waiting_reason{job="kube-state-metrics"}) == 1
    for: 1s
    labels: {severity: warning}
    annotations: {runbook_url: "https://example.invalid/{{ $labels.reason }}"}
`), 0o644))
	s := startStack(t, framework.StackOptions{Namespaces: []string{"harness"}, KubecauseReplicas: -1, RuleFiles: []string{rule}})

	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "harness", "app-0", framework.PodOptions{Node: "node-1"}))
	must[*corev1.Pod](t)(s.Objects.SetWaiting(ctx, pod, "ImagePullBackOff", `Back-off pulling image "registry.example/app:1.0"`))

	v, err := s.Prometheus.API.WaitValue(ctx, `kube_pod_container_status_waiting_reason{namespace="harness",pod="app-0",reason="ImagePullBackOff"}`, 1, 60*time.Second)
	check(t, err)
	t.Logf("kube-state-metrics via prometheus: %s", v)

	got, err := s.Webhook.WaitFiring(60*time.Second, map[string]string{"alertname": "HarnessContainerWaiting", "pod": "app-0"})
	check(t, err)
	if len(got) != 1 || got[0].Annotations["runbook_url"] != "https://example.invalid/ImagePullBackOff" {
		t.Fatalf("webhook got %v, want one alert with runbook_url https://example.invalid/ImagePullBackOff", got)
	}
	t.Logf("webhook received: %v", got)

	// The control plane restarts on the same etcd data, ports and certificates: objects survive
	// and clients reconnect.
	down, err := s.Cluster.RestartControlPlane(ctx)
	check(t, err)
	t.Logf("kube-apiserver and etcd restarted in %s", down.Round(time.Millisecond))
	must[*corev1.Pod](t)(s.Objects.SetRunning(ctx, pod, "10.244.0.17"))
	res, err := s.Webhook.WaitResolved(60*time.Second, map[string]string{"alertname": "HarnessContainerWaiting"})
	check(t, err)
	t.Logf("webhook received: %v", res)
}
