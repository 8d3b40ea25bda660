//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
	"github.com/kubecause/kubecause/exporter/causes"
)

// rootCauseEventTTL is the apiserver's --event-ttl of TestRealNodeRootCauseKept: longer than the
// kubelet's spam filter refill (one Event of an object per 5 minutes once its 25 are spent), so
// that the symptom Events that win a refill stay live, and short enough that the starved
// root-cause Event expires within minutes (1h by default: the same, an hour later).
const rootCauseEventTTL = 7 * time.Minute

// TestRealNodeRootCauseKept is issue 38's "root cause lost to the Event machinery" on a real node.
// A pod's image tag does not exist: the kubelet writes the root cause ("Failed to pull image ...
// not found", image_not_found) at each pull attempt and the symptoms ("Back-off pulling image",
// "Error: ImagePullBackOff", image_pull_backoff) at each sync in between, every ~10 s. Its Event
// spam filter (25 Events per object, then one per 5 minutes) is spent within minutes, by the
// symptoms; afterwards they win nearly every refill, and the root cause is not written again. The
// apiserver expires it after --event-ttl while the pod still fails with the symptom. The pod's
// alert must keep its cause and stay one notification: no second one naming the symptom (the
// rules before issue 38 gave one). After the fix (an image that exists) it resolves, once.
func TestRealNodeRootCauseKept(t *testing.T) {
	ctx := testContext(t)
	const ns, name = "real-rootcause", "report"
	s := startRealNodeStackWith(t, []string{ns}, realNodeOptions{apiServerArgs: map[string]string{"event-ttl": rootCauseEventTTL.String()}})
	spec := corev1.PodSpec{
		DNSPolicy:                     corev1.DNSDefault,
		TerminationGracePeriodSeconds: ptrTo(int64(1)),
		Containers: []corev1.Container{{Name: "main", Image: s.Registry.Addr + "/kubecause/testapp:no-such-tag",
			ImagePullPolicy: corev1.PullIfNotPresent}},
	}
	check(t, createIncidentDeployment(ctx, s, ns, name, spec))
	start := time.Now()

	root := waitRealEvent(t, s, ns, scenarios.RealEvent{Kind: "Pod", Object: "*", Reason: "Failed", Message: "not found"})
	pod := root.InvolvedObject.Name
	t.Logf("%s wrote %s %s on Pod/%s: %q", eventComponent(root), root.Type, root.Reason, pod, root.Message)
	if got := causes.Default().Classify(root.Reason, root.Message).Cause; got != "image_not_found" {
		t.Fatalf("the root-cause Event %q is %s, want image_not_found", root.Message, got)
	}
	match := map[string]string{"alertname": "KubecausePodImagePullFailing", "namespace": ns, "pod": pod}
	fired, err := s.Webhook.WaitFiring(alertTimeout, match)
	check(t, err)
	t.Logf("paged %s after the Deployment was created: %v", time.Since(start).Round(time.Second), fired)

	// The root-cause Event starved and expired while a symptom Event of the pod is live.
	var state []string
	err = framework.Poll(ctx, 25*time.Minute, func() (bool, error) {
		evs, err := s.Cluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		rootLive, symptomLive := false, false
		state = state[:0]
		for _, ev := range evs.Items {
			c := causes.Default().Classify(ev.Reason, ev.Message).Cause
			state = append(state, fmt.Sprintf("%s %s ×%d last %s: %s", ev.Reason, c, occurrences(ev), ev.LastTimestamp.Format("15:04:05"), ev.Message))
			rootLive = rootLive || c == "image_not_found"
			symptomLive = symptomLive || c == "image_pull_backoff"
		}
		return !rootLive && symptomLive, nil
	})
	if err != nil {
		sort.Strings(state)
		t.Fatalf("the root-cause Event of %s did not expire while a symptom Event lived: %v; its Events:\n%s", pod, err, strings.Join(state, "\n"))
	}
	expired := time.Now()
	sort.Strings(state)
	t.Logf("%s after the start the root-cause Event is gone, the pod still fails; its Events:\n%s", expired.Sub(start).Round(time.Second), strings.Join(state, "\n"))

	// Prometheus has seen the symptom alone for 4 minutes: longer than the rules' staleness
	// tolerance (2m: they read the root cause that long after it went), the alert's `for`, the
	// route's group interval and a few rule evaluations, so a second alert would have paged (the
	// rules before issue 38 paged one naming image_pull_backoff 2½ minutes after).
	symptomOnly := fmt.Sprintf(`absent_over_time(kubecause_object_events{namespace=%q, name=%q, cause="image_not_found"}[4m])
		and on () count(kubecause_object_events{namespace=%q, name=%q, cause="image_pull_backoff"}) > 0`, ns, pod, ns, pod)
	_, err = s.Prometheus.API.WaitFor(ctx, symptomOnly, 8*time.Minute, func(v framework.Vector) bool { return len(v) > 0 })
	check(t, err)
	// The alert still names the root cause.
	promValue(t, s, fmt.Sprintf(`count(ALERTS{alertname="KubecausePodImagePullFailing", alertstate="firing", namespace=%q, pod=%q, cause="image_not_found"})`, ns, pod), 1)
	checkOneAlertPaged(t, s, ns, "image_not_found")

	// The fix: an image that exists. The Deployment's new pod starts, the failing one is deleted,
	// and the alert resolves with one notification.
	d, err := s.Cluster.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	check(t, err)
	d.Spec.Template.Spec.Containers[0].Image = framework.TestappImage
	_, err = s.Cluster.Client.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
	check(t, err)
	fixed := time.Now()
	check(t, waitDeploymentsRunning(ctx, s, ns, []string{name}, 3*time.Minute))
	resolved, err := s.Webhook.WaitResolved(resolveTimeout, match)
	check(t, err)
	t.Logf("resolved %s after the fix: %v", time.Since(fixed).Round(time.Second), resolved)
	checkOneAlertPaged(t, s, ns, "image_not_found")
}

// checkOneAlertPaged checks what reached the pager for namespace ns: one alert, of cause, in one
// firing delivery (and at most one resolved).
func checkOneAlertPaged(t *testing.T, s *framework.Stack, ns, cause string) {
	t.Helper()
	alerts := map[string]string{}
	firing, resolved := 0, 0
	for _, d := range s.Webhook.Deliveries() {
		mine := false
		for _, a := range d.Alerts {
			if a.Labels["namespace"] != ns {
				continue
			}
			mine = true
			alerts[a.Fingerprint] = fmt.Sprintf("%s cause=%s", a.Labels["alertname"], a.Labels["cause"])
		}
		if !mine {
			continue
		}
		t.Logf("delivery: %v", d)
		if d.Status == "firing" {
			firing++
		} else {
			resolved++
		}
	}
	if len(alerts) != 1 || firing != 1 || resolved > 1 {
		t.Errorf("the pager got %d firing and %d resolved deliveries of %d alerts for %s, want one alert paged once: %v", firing, resolved, len(alerts), ns, alerts)
	}
	for _, a := range alerts {
		if !strings.HasSuffix(a, "cause="+cause) {
			t.Errorf("the pager got %s, want cause %s", a, cause)
		}
	}
}
