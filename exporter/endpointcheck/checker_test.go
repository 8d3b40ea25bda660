package endpointcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubecause/kubecause/exporter/kube/kubefake"
)

// sample renders one sample line with its labels sorted.
func sample(name string, v float64, kv ...string) string {
	type pair struct{ k, v string }
	var ps []pair
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, pair{kv[i], kv[i+1]})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].k < ps[j].k })
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s=%q", p.k, p.v))
	}
	return fmt.Sprintf("%s{%s} %g\n", name, strings.Join(parts, ","), v)
}

// target is a checked Service.
type target struct{ check, namespace, service string }

var istiodRemote = target{DiscoveredCheck, ns, DefaultService}

func (t target) kv(extra ...string) []string {
	return append([]string{"check", t.check, "namespace", t.namespace, "service", t.service}, extra...)
}

func (t target) state(st string) string {
	var b strings.Builder
	for _, s := range states {
		v := 0.0
		if s == st {
			v = 1
		}
		b.WriteString(sample("kubecause_endpoints_state", v, t.kv("state", s)...))
	}
	if st == StateMatch || st == StateMismatch {
		v := 0.0
		if st == StateMatch {
			v = 1
		}
		b.WriteString(sample("kubecause_endpoints_match", v, t.kv()...))
	}
	return b.String()
}

func (t target) counts(expected, actual int) string {
	out := sample("kubecause_endpoints_actual_addresses", float64(actual), t.kv()...)
	if expected >= 0 {
		out += sample("kubecause_endpoints_expected_addresses", float64(expected), t.kv()...)
	}
	return out
}

func (t target) wrong(addr, port, problem string) string {
	return sample("kubecause_endpoints_wrong_address", 1, t.kv("address", addr, "port", port, "problem", problem)...)
}

func (t target) wrongCounts(unexpected, missing, wrongPort int) string {
	return sample("kubecause_endpoints_wrong_addresses", float64(unexpected), t.kv("problem", ProblemUnexpected)...) +
		sample("kubecause_endpoints_wrong_addresses", float64(missing), t.kv("problem", ProblemMissing)...) +
		sample("kubecause_endpoints_wrong_addresses", float64(wrongPort), t.kv("problem", ProblemWrongPort)...)
}

func (t target) addrs(addrPorts ...string) string {
	var b strings.Builder
	for _, ap := range addrPorts {
		a, p, _ := strings.Cut(ap, ":")
		b.WriteString(sample("kubecause_endpoints_address", 1, t.kv("address", a, "port", p)...))
	}
	return b.String()
}

func errorsTotal(check string, v float64) string {
	return sample("kubecause_endpoints_check_errors_total", v, "check", check)
}

func discoveryInfo(role, source string) string {
	return sample("kubecause_endpoints_discovery_info", 1, "check", DiscoveredCheck, "mesh_id", meshID, "role", role, "source", source)
}

// controlPlane is a mesh control-plane cluster that is also joined to the mesh as a workload
// cluster (seed 002): the hosted istiod, its Service, its LoadBalancer Service (metalLB), and the
// selector-less istiod-remote Service.
func controlPlane(extra ...runtime.Object) []runtime.Object {
	return append([]runtime.Object{
		service(DefaultService, nil),
		service("istiod-mesh1-hosted", hostedLabels),
		lbService("istiod-mesh1-hosted-lb", lbIP),
		hostedPod("x7k2p", podIP),
		pod("istio-ingressgateway-b8b597c59-7gnwr", "10.244.0.17", map[string]string{"app": "istio-ingressgateway"},
			corev1.EnvVar{Name: meshIDEnv, Value: meshID}),
	}, extra...)
}

// workload is a cluster joined to the mesh: only istiod-remote and a gateway.
func workload(extra ...runtime.Object) []runtime.Object {
	return append([]runtime.Object{
		service(DefaultService, nil),
		pod("istio-ingressgateway-b8b597c59-7gnwr", "10.244.0.17", map[string]string{"app": "istio-ingressgateway"},
			corev1.EnvVar{Name: meshIDEnv, Value: meshID}),
	}, extra...)
}

func updateSlice(t *testing.T, h *harness, cs kubernetes.Interface, s *discoveryv1.EndpointSlice) {
	t.Helper()
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Update(h.ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Seed 002 / S7: the metalLB IP where the pod IP of the hosted istiod belongs — then fixed.
func TestControlPlaneMetalLBIPWherePodIPBelongs(t *testing.T) {
	cs := newClient(controlPlane(slice(DefaultService, istiodPorts, lbIP))...)
	h := start(t, nil, cs, nil)
	tg := istiodRemote
	h.expectMetrics(
		discoveryInfo(RoleControlPlane, SourceService) +
			tg.state(StateMismatch) + tg.counts(2, 2) +
			tg.wrong(lbIP, "15012", ProblemUnexpected) + tg.wrong(lbIP, "15017", ProblemUnexpected) +
			tg.wrong(podIP, "15012", ProblemMissing) + tg.wrong(podIP, "15017", ProblemMissing) +
			tg.wrongCounts(2, 2, 0) + tg.addrs(lbIP+":15012", lbIP+":15017") +
			errorsTotal(DiscoveredCheck, 0))
	if !strings.Contains(h.logs.String(), "hosted mesh found") || !strings.Contains(h.logs.String(), "mesh_id=mesh1") {
		t.Errorf("no discovery log line:\n%s", h.logs)
	}

	// Someone corrects the endpoints: the check follows the watch.
	updateSlice(t, h, cs, slice(DefaultService, istiodPorts, podIP))
	h.expectMetrics(tg.state(StateMatch)+tg.counts(2, 2)+tg.wrongCounts(0, 0, 0)+tg.addrs(podIP+":15012", podIP+":15017"),
		"kubecause_endpoints_wrong_address")
}

// The hosted istiod restarts with a new pod IP: mismatch until the endpoints follow, then match.
func TestControlPlanePodRestartedWithNewIP(t *testing.T) {
	cs := newClient(controlPlane(slice(DefaultService, istiodPorts, podIP))...)
	h := start(t, nil, cs, nil)
	tg := istiodRemote
	h.expectMetrics(tg.state(StateMatch)+tg.counts(2, 2)+tg.wrongCounts(0, 0, 0), "kubecause_endpoints_wrong_address")

	if err := cs.CoreV1().Pods(ns).Delete(h.ctx, hostedPod("x7k2p", "").Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(h.ctx, hostedPod("q9z4m", podIP2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectMetrics(tg.state(StateMismatch) + tg.counts(2, 2) +
		tg.wrong(podIP, "15012", ProblemUnexpected) + tg.wrong(podIP, "15017", ProblemUnexpected) +
		tg.wrong(podIP2, "15012", ProblemMissing) + tg.wrong(podIP2, "15017", ProblemMissing) +
		tg.wrongCounts(2, 2, 0))

	updateSlice(t, h, cs, slice(DefaultService, istiodPorts, podIP2))
	h.expectMetrics(tg.state(StateMatch)+tg.counts(2, 2)+tg.wrongCounts(0, 0, 0)+tg.addrs(podIP2+":15012", podIP2+":15017"),
		"kubecause_endpoints_wrong_address")
}

func TestControlPlaneMissingPort(t *testing.T) {
	cs := newClient(controlPlane(slice(DefaultService, []int32{15012}, podIP))...)
	h := start(t, nil, cs, nil)
	tg := istiodRemote
	h.expectMetrics(tg.state(StateMismatch) + tg.counts(2, 1) + tg.wrong(podIP, "15017", ProblemWrongPort) +
		tg.wrongCounts(0, 0, 1) + tg.addrs(podIP+":15012"))
}

func TestControlPlaneNoEndpointsAtAll(t *testing.T) {
	cs := newClient(controlPlane()...)
	h := start(t, nil, cs, nil)
	tg := istiodRemote
	h.expectMetrics(tg.state(StateMismatch)+tg.counts(2, 0)+
		tg.wrong(podIP, "15012", ProblemMissing)+tg.wrong(podIP, "15017", ProblemMissing)+tg.wrongCounts(0, 2, 0),
		"kubecause_endpoints_address")

	// Endpoints that exist but are not ready do not count either.
	s := slice(DefaultService, istiodPorts, podIP)
	s.Endpoints[0].Conditions.Ready = new(bool)
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(h.ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settle(2)
	h.expectMetrics(tg.state(StateMismatch)+tg.counts(2, 0), "kubecause_endpoints_address")
}

// The hosted istiod Service has no selector in some installations: its pods are found by name.
func TestControlPlaneFoundByPodName(t *testing.T) {
	cs := newClient(service(DefaultService, nil), hostedPod("x7k2p", podIP), slice(DefaultService, istiodPorts, podIP))
	h := start(t, nil, cs, nil)
	h.expectMetrics(discoveryInfo(RoleControlPlane, SourcePod) + istiodRemote.state(StateMatch))
}

func writeKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cp.kubeconfig")
	if err := os.WriteFile(p, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Workload cluster, LoadBalancer address read from the control-plane cluster through a second
// client: correct, stale after the LB address changed, and unknown while the LB has no address.
func TestWorkloadLoadBalancerFromControlPlaneCluster(t *testing.T) {
	local := newClient(workload(slice(DefaultService, istiodPorts, lbIP))...)
	cp := newClient(lbService("istiod-mesh1-hosted-lb", lbIP))
	cfg := &Config{
		Clusters:  []Cluster{{Name: "cp", Kubeconfig: writeKubeconfig(t)}},
		Discovery: Discovery{ControlPlaneCluster: "cp"},
	}
	h := start(t, cfg, local, map[string]kubernetes.Interface{"cp": cp})
	tg := istiodRemote
	h.expectMetrics(discoveryInfo(RoleWorkload, SourcePodEnv)+tg.state(StateMatch)+tg.counts(2, 2)+tg.wrongCounts(0, 0, 0),
		"kubecause_endpoints_wrong_address")

	// The LB got a new address; istiod-remote still points at the old one.
	if _, err := cp.CoreV1().Services(ns).UpdateStatus(h.ctx, lbService("istiod-mesh1-hosted-lb", lbIP2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectMetrics(tg.state(StateMismatch) + tg.counts(2, 2) +
		tg.wrong(lbIP, "15012", ProblemUnexpected) + tg.wrong(lbIP, "15017", ProblemUnexpected) +
		tg.wrong(lbIP2, "15012", ProblemMissing) + tg.wrong(lbIP2, "15017", ProblemMissing) + tg.wrongCounts(2, 2, 0))

	// The LB lost its address (no metalLB): the expectation is unknown — not a mismatch.
	if _, err := cp.CoreV1().Services(ns).UpdateStatus(h.ctx, lbService("istiod-mesh1-hosted-lb"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectMetrics(tg.state(StateUnknown)+tg.counts(-1, 2),
		"kubecause_endpoints_match", "kubecause_endpoints_wrong_address", "kubecause_endpoints_wrong_addresses",
		"kubecause_endpoints_expected_addresses")
	if !strings.Contains(h.logs.String(), "has no ingress address") {
		t.Errorf("the unknown state is not explained in the log:\n%s", h.logs)
	}
}

// Seed 000 / S3: the -hosted-lb Service never gets an address; a workload-role check against it
// (here declared explicitly, LB in the same cluster) is unknown, never mismatch.
func TestLoadBalancerWithoutAddressIsUnknown(t *testing.T) {
	cs := newClient(service(DefaultService, nil), lbService("istiod-mesh1-hosted-lb"), slice(DefaultService, istiodPorts, lbIP))
	cfg := &Config{Checks: []Check{{
		Name: "istiod-remote-lb", Namespace: ns, Service: DefaultService, Ports: istiodPorts,
		Expect: Expect{LoadBalancer: &LoadBalancerExpectation{Service: "istiod-mesh1-hosted-lb"}},
	}}}
	h := start(t, cfg, cs, nil)
	tg := target{"istiod-remote-lb", ns, DefaultService}
	h.expectMetrics(tg.state(StateUnknown)+tg.counts(-1, 2)+errorsTotal("istiod-remote-lb", 0),
		"kubecause_endpoints_match", "kubecause_endpoints_wrong_address", "kubecause_endpoints_discovery_info")

	// metalLB is installed and hands out the address the endpoints already hold.
	if _, err := cs.CoreV1().Services(ns).UpdateStatus(h.ctx, lbService("istiod-mesh1-hosted-lb", lbIP), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectMetrics(tg.state(StateMatch) + tg.counts(2, 2))
}

// Zero-config workload cluster without access to the control-plane cluster: presence and ports are
// checked here, the address comparison is left to PromQL (kubecause_endpoints_address).
func TestWorkloadZeroConfigChecksPresenceAndPorts(t *testing.T) {
	cs := newClient(workload(slice(DefaultService, istiodPorts, lbIP))...)
	h := start(t, nil, cs, nil)
	tg := istiodRemote
	h.expectMetrics(discoveryInfo(RoleWorkload, SourcePodEnv)+tg.state(StateMatch)+tg.counts(-1, 2)+
		tg.addrs(lbIP+":15012", lbIP+":15017")+tg.wrongCounts(0, 0, 0),
		"kubecause_endpoints_expected_addresses", "kubecause_endpoints_wrong_address")

	updateSlice(t, h, cs, slice(DefaultService, []int32{15012}, lbIP))
	h.expectMetrics(tg.state(StateMismatch) + tg.wrong(lbIP, "15017", ProblemWrongPort) + tg.wrongCounts(0, 0, 1))

	if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(h.ctx, DefaultService+"-static", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectMetrics(tg.state(StateMismatch)+tg.counts(-1, 0)+tg.wrongCounts(0, 0, 0),
		"kubecause_endpoints_wrong_address", "kubecause_endpoints_address")
}

func TestDiscoveryOffWhenNothingMspiderLike(t *testing.T) {
	cs := newClient(service("istiod", map[string]string{"app": "istiod"}), pod("istiod-7f9c-abcde", "10.1.1.1", nil))
	h := start(t, nil, cs, nil)
	h.settle(1)
	// More changes, more evaluations: still one log line.
	if _, err := cs.CoreV1().Pods(ns).Create(h.ctx, pod("other-1", "10.1.1.2", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settle(3)
	h.expectMetrics("", "kubecause_endpoints_discovery_info", "kubecause_endpoints_state", "kubecause_endpoints_check_errors_total")
	logs := h.logs.String()
	if n := strings.Count(logs, "check off"); n != 1 {
		t.Errorf("want exactly one 'check off' line, got %d:\n%s", n, logs)
	}
	if strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("discovery off must not warn:\n%s", logs)
	}

	// The mesh arrives later: discovery picks it up without a restart.
	for _, o := range controlPlane(slice(DefaultService, istiodPorts, podIP)) {
		var err error
		switch x := o.(type) {
		case *corev1.Service:
			_, err = cs.CoreV1().Services(ns).Create(h.ctx, x, metav1.CreateOptions{})
		case *corev1.Pod:
			_, err = cs.CoreV1().Pods(ns).Create(h.ctx, x, metav1.CreateOptions{})
		case *discoveryv1.EndpointSlice:
			_, err = cs.DiscoveryV1().EndpointSlices(ns).Create(h.ctx, x, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	h.expectMetrics(discoveryInfo(RoleControlPlane, SourceService) + istiodRemote.state(StateMatch))
}

func TestDiscoveryMeshIDAndRole(t *testing.T) {
	for _, tc := range []struct {
		name         string
		objs         []runtime.Object
		discovery    Discovery
		role, source string
		kind         string
	}{
		{"hosted Service", controlPlane(), Discovery{}, RoleControlPlane, SourceService, expService},
		{"LB Service only", []runtime.Object{service(DefaultService, nil), lbService("istiod-mesh1-hosted-lb", lbIP)}, Discovery{}, RoleWorkload, SourceService, expLB},
		{"hosted pod only", []runtime.Object{service(DefaultService, nil), hostedPod("x7k2p", podIP)}, Discovery{}, RoleControlPlane, SourcePod, expPodPrefix},
		{"gateway env", workload(), Discovery{}, RoleWorkload, SourcePodEnv, expExternal},
		{"config override", workload(), Discovery{MeshID: meshID, Role: RoleControlPlane}, RoleControlPlane, SourceConfig, expPodPrefix},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, &Config{Discovery: tc.discovery}, newClient(tc.objs...), nil)
			h.expectMetrics(discoveryInfo(tc.role, tc.source))
			h.c.mu.Lock()
			d := h.c.disc
			h.c.mu.Unlock()
			if d.spec.kind != tc.kind {
				t.Errorf("expectation kind = %s, want %s", d.spec.kind, tc.kind)
			}
		})
	}
}

func TestDiscoverySkipsServiceCoveredByConfig(t *testing.T) {
	cs := newClient(controlPlane(slice(DefaultService, istiodPorts, podIP))...)
	cfg := &Config{Checks: []Check{{Name: "mine", Namespace: ns, Service: DefaultService, Ports: istiodPorts,
		Expect: Expect{Addresses: []string{podIP}}}}}
	h := start(t, cfg, cs, nil)
	h.expectMetrics(target{"mine", ns, DefaultService}.state(StateMatch), "kubecause_endpoints_discovery_info")
	h.settle(1)
	if err := testutilCount(h, "kubecause_endpoints_state"); err != 4 {
		t.Errorf("want only the configured check's 4 state series, got %d", err)
	}
}

func testutilCount(h *harness, name string) int {
	n := 0
	for _, line := range strings.Split(collectText(h), "\n") {
		if strings.HasPrefix(line, name+"{") {
			n++
		}
	}
	return n
}

// Declarative checks: pods by label selector, pods behind another Service, static IPs.
func TestDeclarativeChecks(t *testing.T) {
	web := map[string]string{"app": "web"}
	cs := newClient(
		pod("web-1", "10.0.0.1", web), pod("web-2", "10.0.0.2", web), pod("db-1", "10.0.0.9", map[string]string{"app": "db"}),
		service("web", web),
		slice("web-mirror", []int32{8080}, "10.0.0.1", "10.0.0.2"),
		slice("web-static", []int32{8080}, "10.0.0.1"),
		slice("legacy", []int32{443}, "192.0.2.10", "192.0.2.11"),
	)
	cfg := &Config{Checks: []Check{
		{Name: "by-selector", Namespace: ns, Service: "web-mirror", Ports: []int32{8080}, Expect: Expect{Pods: &PodsExpectation{Selector: "app=web"}}},
		{Name: "by-service", Namespace: ns, Service: "web-static", Ports: []int32{8080}, Expect: Expect{Service: &ServiceExpectation{Name: "web"}}},
		{Name: "static", Namespace: ns, Service: "legacy", Expect: Expect{Addresses: []string{"192.0.2.10", "192.0.2.12"}}},
		{Name: "static-v2", Namespace: "other", Service: "legacy", Expect: Expect{Addresses: []string{"192.0.2.10"}}},
	}, Discovery: Discovery{Enabled: new(bool)}}
	h := start(t, cfg, cs, nil)
	sel, svc, st := target{"by-selector", ns, "web-mirror"}, target{"by-service", ns, "web-static"}, target{"static", ns, "legacy"}
	other := target{"static-v2", "other", "legacy"}
	h.expectMetrics(sel.state(StateMatch) + svc.state(StateMismatch) + st.state(StateMismatch) + other.state(StateMismatch) +
		svc.wrong("10.0.0.2", "8080", ProblemMissing) +
		st.wrong("192.0.2.11", "443", ProblemUnexpected) + st.wrong("192.0.2.12", "", ProblemMissing) +
		other.wrong("192.0.2.10", "", ProblemMissing))
	ns := h.c.Namespaces()
	if got := fmt.Sprint(ns); got != "map[local:map[istio-system:[endpointslices pods services] other:[endpointslices]]]" {
		t.Errorf("Namespaces() = %s", got)
	}
}

// The wrong-address series are capped per check; the per-problem counts still hold everything.
func TestWrongAddressesCapped(t *testing.T) {
	var addrs []string
	for i := range 30 {
		addrs = append(addrs, fmt.Sprintf("10.9.0.%d", i+10))
	}
	cs := newClient(slice("big", []int32{80}, addrs...))
	cfg := &Config{Checks: []Check{{Name: "big", Namespace: ns, Service: "big", Expect: Expect{Addresses: []string{"10.0.0.1"}}}},
		Discovery: Discovery{Enabled: new(bool)}}
	h := start(t, cfg, cs, nil)
	tg := target{"big", ns, "big"}
	h.expectMetrics(tg.state(StateMismatch) + tg.wrongCounts(30, 1, 0) + tg.counts(1, 30))
	if n := testutilCount(h, "kubecause_endpoints_wrong_address"); n != maxWrongSeries {
		t.Errorf("wrong_address series = %d, want %d", n, maxWrongSeries)
	}
	if n := testutilCount(h, "kubecause_endpoints_address"); n != maxWrongSeries {
		t.Errorf("address series = %d, want %d", n, maxWrongSeries)
	}
}

// Clusters without the EndpointSlice API (404) or RBAC without it (403) are read through
// core/v1 Endpoints; the EndpointSlice informer is never started.
func TestEndpointsFallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"not found", apierrors.NewNotFound(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "")},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "", fmt.Errorf("RBAC"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newClient(controlPlane(endpoints(DefaultService, istiodPorts, lbIP))...)
			cs.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			cs.PrependReactor("watch", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
				t.Error("EndpointSlices watched after the fallback")
				return true, nil, tc.err
			})
			h := start(t, nil, cs, nil)
			tg := istiodRemote
			h.expectMetrics(tg.state(StateMismatch) + tg.wrong(lbIP, "15012", ProblemUnexpected) + tg.wrong(podIP, "15017", ProblemMissing) +
				tg.wrong(lbIP, "15017", ProblemUnexpected) + tg.wrong(podIP, "15012", ProblemMissing))
			//nolint:staticcheck // the fallback reads core/v1 Endpoints
			if _, err := cs.CoreV1().Endpoints(ns).Update(h.ctx, endpoints(DefaultService, istiodPorts, podIP), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			h.expectMetrics(tg.state(StateMatch)+tg.counts(2, 2), "kubecause_endpoints_wrong_address")
			if !strings.Contains(h.logs.String(), "falling back to core/v1 Endpoints") {
				t.Errorf("fallback not logged:\n%s", h.logs)
			}
		})
	}
}

// A cluster that cannot be read: state error, errors counted, no match series.
func TestUnreadableClusterIsError(t *testing.T) {
	local := newClient(service(DefaultService, nil), slice(DefaultService, istiodPorts, lbIP))
	cp := newClient()
	cp.PrependReactor("list", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", fmt.Errorf("no RBAC"))
	})
	cfg := &Config{
		Clusters: []Cluster{{Name: "cp", Kubeconfig: writeKubeconfig(t)}},
		Checks: []Check{{Name: "remote-lb", Namespace: ns, Service: DefaultService, Ports: istiodPorts,
			Expect: Expect{LoadBalancer: &LoadBalancerExpectation{Cluster: "cp", Service: "istiod-mesh1-hosted-lb"}}}},
		Discovery: Discovery{Enabled: new(bool)},
	}
	h := startNoWait(t, cfg, local, map[string]kubernetes.Interface{"cp": cp}, func(c *Checker) {
		c.resync, c.syncGrace = 20*time.Millisecond, 50*time.Millisecond
	})
	c := h.c
	tg := target{"remote-lb", ns, DefaultService}
	h.expectMetrics(tg.state(StateError), "kubecause_endpoints_match", "kubecause_endpoints_actual_addresses")
	h.waitFor("errors counted", func() bool {
		return strings.Contains(collectText(h), `kubecause_endpoints_check_errors_total{check="remote-lb"} `) && c.errorCount("remote-lb") >= 2
	})
	if c.Synced() {
		t.Error("Synced() = true although a cluster cannot be listed")
	}
}

func TestNewRejectsMissingRemoteClient(t *testing.T) {
	cfg := &Config{Clusters: []Cluster{{Name: "cp", Kubeconfig: writeKubeconfig(t)}}}
	if _, err := New(cfg, kubefake.Client{Interface: newClient()}, nil, nil); err == nil || !strings.Contains(err.Error(), `"cp"`) {
		t.Errorf("err = %v", err)
	}
}

// Istio is optional: on a cluster without the discovery namespace, or where kubecause may not read
// it, discovery is off — one info line, no endpoint series, no error — and configured checks
// elsewhere still run.
func TestDiscoveryOffWithoutIstio(t *testing.T) {
	forbidden := func(resource string) k8stesting.ReactionFunc {
		return func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() != ns {
				return false, nil, nil
			}
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", fmt.Errorf("RBAC: access denied"))
		}
	}
	for _, tc := range []struct {
		name      string
		forbidden []string // resources kubecause may not list in istio-system
		wantLog   string
	}{
		{"no namespace", nil, "no Service istio-system/istiod-remote"},
		{"services forbidden", []string{"services", "pods", "endpointslices", "endpoints"}, "may not list services in namespace istio-system"},
		{"pods forbidden", []string{"pods"}, "may not list pods in namespace istio-system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Another namespace holds a configured check, so the Checker runs at all when discovery is off.
			web := slice("web", []int32{80}, "10.0.0.1")
			web.Namespace = "apps"
			cs := newClient(web)
			var watched []string
			var mu sync.Mutex
			for _, r := range tc.forbidden {
				cs.PrependReactor("list", r, forbidden(r))
				cs.PrependWatchReactor(r, func(a k8stesting.Action) (bool, watch.Interface, error) {
					if a.GetNamespace() == ns {
						mu.Lock()
						watched = append(watched, a.GetResource().Resource)
						mu.Unlock()
					}
					return false, nil, nil
				})
			}
			cfg := &Config{Checks: []Check{{Name: "web", Namespace: "apps", Service: "web", Expect: Expect{Addresses: []string{"10.0.0.1"}}}}}
			var skew atomic.Int64 // moves the Checker's clock past the sync grace
			h := start(t, cfg, cs, nil, func(c *Checker) {
				c.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
			})
			web1 := target{"web", "apps", "web"}
			h.expectMetrics(web1.state(StateMatch), "kubecause_endpoints_discovery_info")
			skew.Store(int64(time.Hour))
			h.settle(3)
			text := collectText(h)
			if strings.Contains(text, `check="istiod-remote"`) {
				t.Errorf("discovery off must export no series for istiod-remote:\n%s", text)
			}
			logs := h.logs.String()
			if n := strings.Count(logs, "check off"); n != 1 || !strings.Contains(logs, tc.wantLog) {
				t.Errorf("want exactly one 'check off' line with %q:\n%s", tc.wantLog, logs)
			}
			if strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
				t.Errorf("discovery off must not warn:\n%s", logs)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(watched) > 0 {
				t.Errorf("informers started in a forbidden namespace: %v", watched)
			}
		})
	}
}
