package events

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/exporter/causes"
)

// classify is a stand-in for the cause table: the tests here are about counting, not causes.
func classify(reason, message string) (string, string) {
	switch {
	case strings.Contains(message, "not found"):
		return "configmap_not_found", "volume.configmap_not_found"
	case strings.Contains(message, "no space left"):
		return "disk_full", "sandbox.disk_full"
	case reason == "FailedScheduling":
		return "scheduling_insufficient_resources", "scheduling.insufficient"
	}
	return "unknown", ""
}

// testTable is the stand-in as a Classifier; calls, when set, counts Classify calls.
type testTable struct{ calls *int }

func (t testTable) Classify(reason, message string) causes.Result {
	if t.calls != nil {
		*t.calls++
	}
	cause, rule := classify(reason, message)
	// disk_full is about the node, as in the built-in table.
	return causes.Result{Cause: cause, Rule: rule, TargetNode: cause == "disk_full"}
}

func (testTable) Outcomes() []causes.Result {
	return []causes.Result{{Cause: "configmap_not_found", Rule: "volume.configmap_not_found"},
		{Cause: "disk_full", Rule: "sandbox.disk_full"},
		{Cause: "scheduling_insufficient_resources", Rule: "scheduling.insufficient"}, {Cause: "unknown"}}
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

type harness struct {
	t   *testing.T
	e   *Engine
	src *Source
	reg *prometheus.Registry
	now time.Time
}

func newHarness(t *testing.T, mutate ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, now: t0}
	cfg := Config{Classifier: testTable{}, Now: func() time.Time { return h.now }}
	for _, f := range mutate {
		f(&cfg)
	}
	h.e = New(cfg)
	h.src = h.e.NewSource("all")
	h.reg = prometheus.NewPedanticRegistry()
	h.reg.MustRegister(h.e.Collectors()...)
	return h
}

// kubeletEvent is a core/v1 Event as the kubelet's recorder writes it.
func kubeletEvent(uid, name string, count int32, reason, message string) *corev1.Event {
	ts := metav1.NewTime(t0)
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "istio-system", UID: types.UID(uid)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "istio-system", Name: "mspider-mcpc-ckube-remote-0"},
		Reason:         reason,
		Message:        message,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          count,
		Type:           corev1.EventTypeWarning,
	}
}

// schedulerEvent is an events.k8s.io/v1 Event as seen through core/v1: count 0, no source, eventTime,
// reportingController, and a series once it repeats.
func schedulerEvent(uid string, series int32) *corev1.Event {
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "etcd-0.18a2b3c4d5e6f708", Namespace: "mesh", UID: types.UID(uid)},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Namespace: "mesh", Name: "etcd-0"},
		Reason:              "FailedScheduling",
		Message:             "0/3 nodes are available: 3 Insufficient cpu.",
		Type:                corev1.EventTypeWarning,
		EventTime:           metav1.NewMicroTime(t0),
		ReportingController: "default-scheduler",
		ReportingInstance:   "default-scheduler-master-1",
		Action:              "Scheduling",
	}
	if series > 0 {
		ev.Series = &corev1.EventSeries{Count: series, LastObservedTime: metav1.NewMicroTime(t0.Add(time.Minute))}
	}
	return ev
}

const (
	uidA  = "0f3c2a9e-4b1d-4c8e-9a7f-1d2e3f405162"
	uidB  = "1a2b3c4d-5e6f-4a8b-9c0d-e1f2a3b4c5d6"
	uidC  = "2b3c4d5e-6f70-4b9c-8d1e-f2a3b4c5d6e7"
	uidD  = "3c4d5e6f-7081-4cad-9e2f-a3b4c5d6e7f8"
	msgS1 = `MountVolume.SetUp failed for volume "remote-kube-api-server" : configmap "mspider-mcpc-remote-kube-api-server" not found`
)

func (h *harness) sync(objs ...interface{}) {
	h.t.Helper()
	if err := h.src.Replace(objs, "1"); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) add(ev *corev1.Event) {
	h.t.Helper()
	if err := h.src.Add(ev); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) update(ev *corev1.Event) {
	h.t.Helper()
	if err := h.src.Update(ev); err != nil {
		h.t.Fatal(err)
	}
}

// scrape fetches /metrics as Prometheus would and parses it; a scrape must never fail.
func (h *harness) scrape() map[string]*dto.MetricFamily {
	h.t.Helper()
	rec := httptest.NewRecorder()
	Handler(h.reg, h.e, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		h.t.Fatalf("scrape failed: %d %s", rec.Code, rec.Body.String())
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		h.t.Fatalf("scrape does not parse: %v", err)
	}
	return mfs
}

// value returns the value of the series of metric name whose labels include want; -1 if absent.
func (h *harness) value(name string, want map[string]string) float64 {
	h.t.Helper()
	for _, mf := range h.scrape() {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue metric
				}
			}
			return sampleValue(mf, m)
		}
	}
	return -1
}

func sampleValue(mf *dto.MetricFamily, m *dto.Metric) float64 {
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	}
	return 0
}

func (h *harness) occurrences(cause string) float64 {
	return h.value("kubecause_events_total", map[string]string{"cause": cause})
}

func (h *harness) expect(cause string, want float64) {
	h.t.Helper()
	if got := h.occurrences(cause); got != want {
		h.t.Fatalf("kubecause_events_total{cause=%q} = %v, want %v", cause, got, want)
	}
}

func sumCounter(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	c.Collect(ch)
	close(ch)
	var sum float64
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		sum += d.GetCounter().GetValue()
	}
	return sum
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
