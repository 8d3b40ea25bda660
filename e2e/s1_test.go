//go:build e2e

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// Seed S1 (000_e2a90f380ae2fb0a): a hosted mesh is re-created before the control plane pushed
// its ConfigMap; the ckube-remote pod stays ContainerCreating and the kubelet repeats
// FailedMount. The whole chain: the kubelet's Event with count patches 1→3, kubecause restarted
// in the middle, the alert a pager gets with its runbook, and its resolution.
const (
	s1Message = `MountVolume.SetUp failed for volume "remote-kube-api-server" : configmap "mspider-mcpc-remote-kube-api-server" not found`
	s1Timeout = `Unable to attach or mount volumes: unmounted volumes=[remote-kube-api-server], unattached volumes=[remote-kube-api-server kube-api-access-7xk2p]: timed out waiting for the condition`
)

func TestS1ConfigMapNotFound(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"istio-system"}})
	const ns, podName = "istio-system", "mspider-mcpc-ckube-remote-6b8d7c9f5-m2x7q"

	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, ns, podName, framework.PodOptions{
		Node: "mesh-cp-worker-1", Image: "release.daocloud.io/mspider/ckube:v0.3.4",
		Containers: []string{"ckube-remote"},
		Volumes: []corev1.Volume{{Name: "remote-kube-api-server", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "mspider-mcpc-remote-kube-api-server"}},
		}}},
	}))
	pod = must[*corev1.Pod](t)(s.Objects.SetWaiting(ctx, pod, "ContainerCreating", ""))
	kubelet := framework.Kubelet(s.Cluster.Client, "mesh-cp-worker-1")

	total := sel("kubecause_events_total", map[string]string{"cause": "configmap_not_found", "reason": "FailedMount", "kind": "Pod", "namespace": ns})
	view := map[string]string{"namespace": ns, "kind": "Pod", "name": podName, "reason": "FailedMount", "cause": "configmap_not_found"}

	ev := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount", s1Message))
	promValue(t, s, total, 1)
	check(t, ev.Repeat(ctx, 1))
	check(t, ev.Repeat(ctx, 1))
	promValue(t, s, total, 3)
	promValue(t, s, sel("kubecause_object_events", view), 3)
	// The component label is the kubelet (source.component).
	promValue(t, s, `sum(kubecause_events_total{cause="configmap_not_found",component="kubelet",type="Warning"})`, 3)

	// Restart mid-stream: the live Event (count 3) is a baseline for the new process, so the
	// counter of the new process starts without it — no spurious increase.
	away := restartKubecause(t, s, 0)
	after := promZero(t, s, total)
	t.Logf("after restart (away %s): %s = %s (3 occurrences before the restart stay counted once)", away, total, after)
	// The per-object view is rebuilt from the live Events: still 3.
	promValue(t, s, sel("kubecause_object_events", view), 3)

	// The next occurrence counts once more: 3 before + 1 after = the Event's count of 4.
	check(t, ev.Repeat(ctx, 1))
	promValue(t, s, total, 1)
	promValue(t, s, sel("kubecause_object_events", view), 4)
	promValue(t, s, `max_over_time(`+total+`[10m])`, 3)
	t.Logf("occurrences counted across the restart: 3 + 1 = 4 = Event count %d", ev.Count())

	// The generic timeout message that follows is its own cause (a symptom), counted apart.
	must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount", s1Timeout))
	promValue(t, s, sel("kubecause_events_total", map[string]string{"cause": "mount_timeout", "reason": "FailedMount", "namespace": ns}), 1)

	// The pager gets KubecausePodVolumeFailing for this pod with the root cause (not the
	// timeout symptom) and the runbook section of that cause.
	match := map[string]string{"alertname": "KubecausePodVolumeFailing", "namespace": ns, "pod": podName}
	got, err := s.Webhook.WaitFiring(alertTimeout, match)
	check(t, err)
	t.Logf("webhook received: %v", got)
	if len(got) != 1 {
		t.Fatalf("want one firing KubecausePodVolumeFailing for %s, got %v", podName, got)
	}
	a := got[0]
	if a.Labels["cause"] != "configmap_not_found" || a.Labels["severity"] == "" {
		t.Errorf("alert labels %v: want cause=configmap_not_found and a severity", a.Labels)
	}
	if u := a.Annotations["runbook_url"]; !strings.HasSuffix(u, "/kubecausepodvolumefailing.md#configmap_not_found") {
		t.Errorf("runbook_url %q: want the configmap_not_found section of kubecausepodvolumefailing.md", u)
	}
	if !strings.Contains(a.Annotations["description"], podName) {
		t.Errorf("description %q does not name the pod", a.Annotations["description"])
	}

	// A restart while the alert fires must not flap it: the pager gets no resolved and no
	// second firing notification.
	before := len(s.Webhook.All())
	restartKubecause(t, s, 0)
	waitScrapes(t, s, "kubecause", 5)
	if flaps := s.Webhook.All()[before:]; len(flaps) != 0 {
		t.Fatalf("kubecause restart while %s fired: the pager received %v", match["alertname"], flaps)
	}
	t.Logf("kubecause restarted while the alert fired: no notification (no flap)")

	// Fixed (the ConfigMap was pushed, the pod started): the alert resolves while the Event
	// still exists.
	must[*corev1.Pod](t)(s.Objects.SetRunning(ctx, pod, "10.244.1.23"))
	res, err := s.Webhook.WaitResolved(resolveTimeout, match)
	check(t, err)
	t.Logf("webhook received: %v", res)
}
