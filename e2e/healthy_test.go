//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestHealthyClusterFiresNothing: running pods with the kubelet's Normal Events, a bound PVC
// and a LoadBalancer with an address, evaluated by every rule for a while on Prometheus 2 and
// on Prometheus 3: no alert reaches either pager and no Warning occurrence is counted.
func TestHealthyClusterFiresNothing(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps", "istio-system"}, Prometheus3: true, InhibitRules: true})
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	for _, name := range []string{"web-0", "web-1"} {
		p := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", name, framework.PodOptions{Node: "worker-1"}))
		p = must[*corev1.Pod](t)(s.Objects.SetRunning(ctx, p, "10.244.0.10"))
		for _, e := range [][2]string{{"Pulled", `Container image "registry.example/app:1.0" already present on machine`}, {"Created", "Created container main"}, {"Started", "Started container main"}} {
			must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(p), corev1.EventTypeNormal, e[0], e[1]))
		}
	}
	sc := "standard"
	pvc := must[*corev1.PersistentVolumeClaim](t)(s.Objects.CreatePVC(ctx, "apps", "data-web-0", &sc))
	must[*corev1.PersistentVolumeClaim](t)(s.Objects.SetPVCPhase(ctx, pvc, corev1.ClaimBound))
	svc := must[*corev1.Service](t)(s.Objects.CreateService(ctx, "istio-system", "istio-ingressgateway", true, map[string]string{"app": "istio-ingressgateway"}, 80, 443))
	must[*corev1.Service](t)(s.Objects.SetLoadBalancerIngress(ctx, svc, "10.6.10.201"))

	promValue(t, s, `count(kube_pod_status_phase{namespace="apps",phase="Running"} == 1)`, 2)
	alerts := firesNothing(ctx, t, s, "healthy cluster")
	for _, pg := range s.Pagers[1:] {
		if n := pg.Webhook.All(); len(n) != 0 {
			t.Errorf("healthy cluster: the %s pager received %v", pg, n)
		}
		held, err := pg.Prometheus.API.Alerts(ctx)
		check(t, err)
		for _, a := range held {
			t.Errorf("healthy cluster: %s holds %s alert %v", pg, a.State, a.Labels)
		}
	}
	v := promZero(t, s, `sum(kubecause_events_total{type="Warning"})`)
	// kubecause runs the GC at GOGC 25 unless GOGC is set (docs/performance.md).
	gogc := promQuery(t, s, `max(go_gc_gogc_percent{job="kubecause"})`)
	if len(gogc) != 1 || gogc[0].Value != 25 {
		t.Errorf("kubecause's GOGC %s, want 25", gogc)
	}
	t.Logf("healthy cluster: Warning occurrences %s, alerts received 0, prometheus alerts %d, kubecause's GOGC %s", v, alerts, gogc)
}
