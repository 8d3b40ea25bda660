//go:build e2e

package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// Seed S7 (002_c88ccf11a5ff41e7): the istiod-remote endpoints must be the hosted istiod's pod
// IP on the mesh control-plane cluster and the -hosted-lb LoadBalancer IP on a workload
// cluster. Zero-config discovery, both roles, the wrong address of each, the alert and its
// resolution.
func TestS7IstiodRemoteEndpoints(t *testing.T) {
	const (
		ns     = "istio-system"
		podIP  = "10.244.1.5"
		lbIP   = "10.6.113.50"
		meshID = "mesh1"
	)
	for _, role := range []string{"control-plane", "workload"} {
		t.Run(role, func(t *testing.T) {
			ctx := testContext(t)
			s := startStack(t, framework.StackOptions{Namespaces: []string{ns}})
			must[*corev1.Service](t)(s.Objects.CreateService(ctx, ns, "istiod-remote", false, nil, 15012, 15017))
			right, wrong := lbIP, podIP
			lb := must[*corev1.Service](t)(s.Objects.CreateService(ctx, ns, "istiod-"+meshID+"-hosted-lb", true, map[string]string{"app": "istiod-" + meshID + "-hosted"}, 15012, 15017))
			must[*corev1.Service](t)(s.Objects.SetLoadBalancerIngress(ctx, lb, lbIP))
			if role == "control-plane" {
				right, wrong = podIP, lbIP
				must[*corev1.Service](t)(s.Objects.CreateService(ctx, ns, "istiod-"+meshID+"-hosted", false, map[string]string{"app": "istiod-" + meshID + "-hosted"}, 15012, 15017))
				p := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, ns, "istiod-"+meshID+"-hosted-5c9d8f7b6-x2k9p", framework.PodOptions{
					Node: "cp-worker-1", Image: "docker.m.daocloud.io/istio/pilot:1.24.2", Containers: []string{"discovery"},
					Labels: map[string]string{"app": "istiod-" + meshID + "-hosted"},
				}))
				must[*corev1.Pod](t)(s.Objects.SetRunning(ctx, p, podIP))
			}
			// The seed's failure: the other role's address.
			must[*discoveryv1.EndpointSlice](t)(s.Objects.ApplyEndpointSlice(ctx, ns, "istiod-remote", []string{wrong}, 15012, 15017))

			promValue(t, s, `max(kubecause_endpoints_discovery_info{check="istiod-remote",mesh_id="`+meshID+`",role="`+role+`"})`, 1)
			promValue(t, s, `max(kubecause_endpoints_match{namespace="istio-system",service="istiod-remote"})`, 0)
			promValue(t, s, `count(kubecause_endpoints_wrong_address{service="istiod-remote",address="`+wrong+`",problem="unexpected"})`, 2)
			match := map[string]string{"alertname": "KubecauseIstiodRemoteEndpointsMismatch"}
			got, err := s.Webhook.WaitFiring(alertTimeout, match)
			check(t, err)
			t.Logf("%s role, endpoints %s: webhook received %v", role, wrong, got)
			if len(got) != 1 || got[0].Labels["service"] != "istiod-remote" {
				t.Fatalf("want one alert for istio-system/istiod-remote, got %v", got)
			}
			if u := got[0].Annotations["runbook_url"]; !strings.Contains(u, "/kubecauseistiodremoteendpointsmismatch.md") {
				t.Errorf("runbook_url %q: want the kubecauseistiodremoteendpointsmismatch page", u)
			}

			// Fixed: the right address.
			must[*discoveryv1.EndpointSlice](t)(s.Objects.ApplyEndpointSlice(ctx, ns, "istiod-remote", []string{right}, 15012, 15017))
			promValue(t, s, `max(kubecause_endpoints_match{namespace="istio-system",service="istiod-remote"})`, 1)
			res, err := s.Webhook.WaitResolved(resolveTimeout, match)
			check(t, err)
			t.Logf("%s role, endpoints %s: webhook received %v", role, right, res)
		})
	}
}

// Istio is optional: on a cluster without istio-system, and on one where kubecause may read only
// Events (istio-system exists, holds an istiod-remote Service, and no Role lets kubecause in),
// kubecause runs, its endpoint check is off with one log line and no series, and no alert fires.
func TestIstioOptionalFiresNothing(t *testing.T) {
	eventsOnly := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}}}
	for _, tc := range []struct {
		name       string
		namespaces []string
		rules      []rbacv1.PolicyRule
		reason     string
	}{
		{"no istio-system", []string{"apps"}, nil, "no Service istio-system/istiod-remote"},
		{"istio-system forbidden", []string{"apps", "istio-system"}, eventsOnly, "may not list services in namespace istio-system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			s := startStack(t, framework.StackOptions{Namespaces: tc.namespaces, KubecauseRules: tc.rules})
			if tc.rules != nil {
				must[*corev1.Service](t)(s.Objects.CreateService(ctx, "istio-system", "istiod-remote", false, nil, 15012, 15017))
				must[*discoveryv1.EndpointSlice](t)(s.Objects.ApplyEndpointSlice(ctx, "istio-system", "istiod-remote", []string{"10.6.113.50"}, 15012, 15017))
			}
			firesNothing(ctx, t, s, tc.name)
			if v := promQuery(t, s, `count({__name__=~"kubecause_endpoints_.+"})`); len(v) != 0 {
				t.Errorf("endpoint check series exported: %s", v)
			}
			log, err := os.ReadFile(s.Kubecause[0].LogPath)
			check(t, err)
			off := regexp.MustCompile(`(?m)^.*check off.*$`).FindAll(log, -1)
			if len(off) != 1 || !strings.Contains(string(off[0]), tc.reason) {
				t.Errorf("want one 'check off' log line saying %q, got %q", tc.reason, off)
			}
			for _, l := range regexp.MustCompile(`(?mi)^.*level=(warn|error).*$`).FindAll(log, -1) {
				if strings.Contains(string(l), "endpoint") || strings.Contains(string(l), "istio-system") {
					t.Errorf("endpoint checks warned: %s", l)
				}
			}
			t.Logf("kubecause: %s", off)
		})
	}
}
