// Real-node scenarios of the service mesh: sidecar readiness (S6), istiod-remote endpoints (S7).

package scenarios

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubecause/kubecause/e2e/framework"
)

// S6: a sidecar whose readiness endpoint never listens, probed as Istio's proxy is
// (HTTP GET :15021/healthz/ready), beside an application whose own readiness port is closed.
func realS6() Scenario {
	const ns, sidecar, app = "real-s6", "sidecar-not-ready", "app-port-closed"
	probe := func(port int32, path string) *corev1.Probe {
		h := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}
		if path != "" {
			h = corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
		}
		return &corev1.Probe{ProbeHandler: h, PeriodSeconds: 1, FailureThreshold: 1}
	}
	return Scenario{
		ID: "S6", Title: "readiness probes refused (sidecar and application)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := createPod(ctx, s, pod(ns, sidecar, func(p *corev1.Pod) {
				p.Spec.Containers[0].Args = []string{"-listen=:8080"}
				p.Spec.Containers[0].ReadinessProbe = probe(15021, "/healthz/ready")
			})); err != nil {
				return err
			}
			return createPod(ctx, s, pod(ns, app, func(p *corev1.Pod) {
				p.Spec.Containers[0].Args = []string{"-listen=:8080"}
				p.Spec.Containers[0].ReadinessProbe = probe(9090, "")
			}))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := deletePod(ctx, s, ns, sidecar); err != nil {
				return err
			}
			return deletePod(ctx, s, ns, app)
		},
		Expect: []RealEvent{
			{Kind: "Pod", Object: sidecar, Reason: "Unhealthy", Cause: "istio_sidecar_not_ready"},
			{Kind: "Pod", Object: app, Reason: "Unhealthy", Cause: "readiness_probe_connection_refused"},
		},
		Alerts: []ExpectedAlert{podAlert("KubecausePodProbeFailing", ns, app, "readiness_probe_connection_refused")},
	}
}

// S7 with the EndpointSlice controller: on the mesh control-plane cluster the istiod-remote
// endpoints must be the hosted istiod's pod IP. Broken: istiod-remote has no selector and a
// static address (a TEST-NET-1 address, never contacted: the check compares, it does not dial).
// Fixed as a user would: the Service selects the hosted istiod and the EndpointSlice controller
// writes its real pod IP.
func realS7() Scenario {
	const (
		ns     = "istio-system"
		meshID = "mesh1"
		hosted = "istiod-" + meshID + "-hosted"
		remote = "istiod-remote"
		wrong  = "192.0.2.10"
	)
	sel := map[string]string{"app": hosted}
	return Scenario{
		ID: "S7", Title: "istiod-remote endpoints: a static address instead of the hosted istiod's pod IP", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			tmpl := pod(ns, "", func(p *corev1.Pod) { p.Spec.Containers[0].Args = []string{"-listen=:15012"} })
			if err := createDeployment(ctx, s, ns, hosted, 1, tmpl.Spec); err != nil {
				return err
			}
			if _, err := s.Objects.CreateService(ctx, ns, hosted, false, sel, 15012, 15017); err != nil {
				return err
			}
			if _, err := s.Objects.CreateService(ctx, ns, remote, false, nil, 15012, 15017); err != nil {
				return err
			}
			_, err := s.Objects.ApplyEndpointSlice(ctx, ns, remote, []string{wrong}, 15012, 15017)
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			slices := s.Cluster.Client.DiscoveryV1().EndpointSlices(ns)
			list, err := slices.List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + remote})
			if err != nil {
				return err
			}
			for _, es := range list.Items {
				if es.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" {
					if err := slices.Delete(ctx, es.Name, metav1.DeleteOptions{}); err != nil {
						return err
					}
				}
			}
			svc, err := s.Cluster.Client.CoreV1().Services(ns).Get(ctx, remote, metav1.GetOptions{})
			if err != nil {
				return err
			}
			svc.Spec.Selector = sel
			_, err = s.Cluster.Client.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
			return err
		},
		Alerts: []ExpectedAlert{{Name: "KubecauseIstiodRemoteEndpointsMismatch", Labels: map[string]string{"namespace": ns, "service": remote},
			Runbook: "kubecauseistiodremoteendpointsmismatch.md"}},
		Queries: []PromExpect{
			{Expr: `max(kubecause_endpoints_discovery_info{check="istiod-remote",mesh_id="` + meshID + `",role="control-plane"})`, Want: 1},
			{Expr: `max(kubecause_endpoints_match{namespace="istio-system",service="istiod-remote"})`, Want: 0},
			{Expr: `count(kubecause_endpoints_wrong_address{service="istiod-remote",address="` + wrong + `",problem="unexpected"})`, Want: 2},
		},
		Fixed: []PromExpect{
			{Expr: `max(kubecause_endpoints_match{namespace="istio-system",service="istiod-remote"})`, Want: 1},
			// The address kubecause now sees is the pod's, written by the EndpointSlice controller.
			{Expr: `count(kubecause_endpoints_wrong_address{service="istiod-remote"}) or vector(0)`, Want: 0},
		},
	}
}
