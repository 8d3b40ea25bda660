package endpointcheck

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubecause/kubecause/exporter/kube"
	"github.com/kubecause/kubecause/exporter/kube/kubefake"
)

const (
	ns     = "istio-system"
	meshID = "mesh1"
	podIP  = "10.244.1.5"  // the hosted istiod pod
	podIP2 = "10.244.2.9"  // the same pod after a restart
	lbIP   = "10.6.113.50" // metalLB address of istiod-mesh1-hosted-lb
	lbIP2  = "10.6.113.51" // the LB address after it changed
)

var hostedLabels = map[string]string{"app": "istiod", "istio.io/rev": "mesh1-hosted"}

func service(name string, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
			{Name: "tls-xds", Port: 15012}, {Name: "https-webhook", Port: 443},
		}},
	}
}

func lbService(name string, ips ...string) *corev1.Service {
	s := service(name, hostedLabels)
	s.Spec.Type = corev1.ServiceTypeLoadBalancer
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return s
}

func pod(name, ip string, lbls map[string]string, env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "x", Env: env}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}},
	}
}

// hostedPod is the pod of the Deployment istiod-mesh1-hosted.
func hostedPod(suffix, ip string) *corev1.Pod {
	return pod("istiod-mesh1-hosted-5d8f7c9b6-"+suffix, ip, hostedLabels)
}

func slice(svc string, ports []int32, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-static", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, p := range ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(fmt.Sprintf("p%d", p)), Port: ptr.To(p)})
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return s
}

//nolint:staticcheck // core/v1 Endpoints is what the fallback reads
func endpoints(svc string, ports []int32, addrs ...string) *corev1.Endpoints {
	e := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: ns}}
	ss := corev1.EndpointSubset{}
	for _, p := range ports {
		ss.Ports = append(ss.Ports, corev1.EndpointPort{Name: fmt.Sprintf("p%d", p), Port: p})
	}
	for _, a := range addrs {
		ss.Addresses = append(ss.Addresses, corev1.EndpointAddress{IP: a})
	}
	e.Subsets = []corev1.EndpointSubset{ss}
	return e
}

var istiodPorts = []int32{15012, 15017}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type harness struct {
	t    *testing.T
	c    *Checker
	logs *logBuffer
	ctx  context.Context
}

// start runs a Checker whose periodic re-evaluation is an hour away, so every change it reports
// must have come through a watch.
func start(t *testing.T, cfg *Config, local kubernetes.Interface, remote map[string]kubernetes.Interface, tune ...func(*Checker)) *harness {
	t.Helper()
	h := startNoWait(t, cfg, local, remote, tune...)
	h.waitFor("synced", h.c.Synced)
	return h
}

func startNoWait(t *testing.T, cfg *Config, local kubernetes.Interface, remote map[string]kubernetes.Interface, tune ...func(*Checker)) *harness {
	t.Helper()
	logs := &logBuffer{}
	remoteClients := map[string]kube.Client{}
	for name, cs := range remote {
		remoteClients[name] = kubefake.Client{Interface: cs}
	}
	c, err := New(cfg, kubefake.Client{Interface: local}, remoteClients, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.resync = time.Hour
	c.syncGrace = 10 * time.Second
	c.probeWait = 10 * time.Millisecond
	for _, f := range tune {
		f(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
	return &harness{t: t, c: c, logs: logs, ctx: ctx}
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var metricMeta = map[string][2]string{
	"kubecause_endpoints_match":                        {"gauge", "1 when the endpoints equal the expectation, 0 when they do not; absent while the state is unknown or error."},
	"kubecause_endpoints_state":                        {"gauge", "1 for the current state of the endpoint check (match, mismatch, unknown, error), 0 for the others."},
	"kubecause_endpoints_expected_addresses":           {"gauge", "Number of expected address:port pairs."},
	"kubecause_endpoints_actual_addresses":             {"gauge", "Number of ready address:port pairs found in the EndpointSlices (or Endpoints)."},
	"kubecause_endpoints_wrong_address":                {"gauge", "One series per wrong address:port (unexpected, missing, wrong_port), at most 20 per check."},
	"kubecause_endpoints_wrong_addresses":              {"gauge", "Number of wrong address:port pairs per problem, including those beyond the series cap."},
	"kubecause_endpoints_address":                      {"gauge", "One series per address:port found in the endpoints (at most 20 per check), for comparisons across clusters."},
	"kubecause_endpoints_check_errors_total":           {"counter", "Evaluations of the endpoint check that could not be completed."},
	"kubecause_endpoints_last_check_timestamp_seconds": {"gauge", "Unix time of the last evaluation of the endpoint check."},
	"kubecause_endpoints_discovery_info":               {"gauge", "What auto-discovery of the mspider hosted mesh found."},
}

// exposition turns sample lines into the text format CollectAndCompare wants, and returns the
// metric names named in them plus extra (names expected to be absent).
func exposition(samples string, absent ...string) (string, []string) {
	byName := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(samples), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		byName[name] = append(byName[name], line)
	}
	names := append([]string(nil), absent...)
	var b strings.Builder
	for name, lines := range byName {
		names = append(names, name)
		m := metricMeta[name]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s\n", name, m[1], name, m[0], strings.Join(lines, "\n"))
	}
	sort.Strings(names)
	return b.String(), names
}

// expectMetrics waits until the listed metrics equal samples exactly (and the absent ones have no
// series at all).
func (h *harness) expectMetrics(samples string, absent ...string) {
	h.t.Helper()
	text, names := exposition(samples, absent...)
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err = testutil.CollectAndCompare(h.c, strings.NewReader(text), names...); err == nil {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("metrics never matched:\n%v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle waits for n more evaluations (to show that something stays as it is).
func (h *harness) settle(n int64) {
	h.t.Helper()
	target := h.c.evals.Load() + n
	h.c.kick()
	h.waitFor("evaluations", func() bool {
		if h.c.evals.Load() >= target {
			return true
		}
		h.c.kick()
		return false
	})
}

func newClient(objs ...runtime.Object) *fake.Clientset { return fake.NewClientset(objs...) }

// collectText renders the Checker's metrics through a pedantic registry (which also checks that
// Collect is consistent with Describe).
func collectText(h *harness) string {
	h.t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(h.c); err != nil {
		h.t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		h.t.Fatalf("gather: %v", err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			h.t.Fatal(err)
		}
	}
	return b.String()
}

func (c *Checker) errorCount(check string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errorsTotal[check]
}
