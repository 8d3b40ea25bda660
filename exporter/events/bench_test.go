package events

import (
	"fmt"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func uid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// liveEvents makes n kubelet-style Events over n/eventsPerPod pods in 50 namespaces.
func liveEvents(n, eventsPerPod int) []interface{} {
	reasons := []struct{ reason, msg string }{
		{"FailedMount", msgS1},
		{"FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod \"x\": Error response from daemon: mkdir /var/lib/docker/aufs/mnt/1f09: no space left on device"},
		{"BackOff", "Back-off restarting failed container"},
		{"Unhealthy", "Readiness probe failed: Get \"http://10.244.0.17:15021/healthz/ready\": dial tcp 10.244.0.17:15021: connect: connection refused"},
	}
	out := make([]interface{}, n)
	for i := 0; i < n; i++ {
		r := reasons[i%len(reasons)]
		pod := i / eventsPerPod
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod-%d.%x", pod, i), 1, r.reason, r.msg)
		ev.InvolvedObject.Namespace = fmt.Sprintf("team-%d", pod%50)
		ev.InvolvedObject.Name = fmt.Sprintf("workload-%d-7d9fc5b8c-x2k%d", pod, pod%97)
		ev.Namespace = ev.InvolvedObject.Namespace
		out[i] = ev
	}
	return out
}

func benchEngine() *Engine {
	return New(Config{Classifier: testTable{}, MaxSeries: 1 << 20, MaxObjectSeries: 1 << 20})
}

// BenchmarkStatePerEvent measures what the engine keeps per live Event: heap after the list is
// applied minus heap before, divided by the number of Events (the Event objects themselves are
// released), the per-object view included: uncapped (view=all, one entry per pod and reason), and
// at the default cap of 10,000 entries (view=10000) (docs/performance.md).
func BenchmarkStatePerEvent(b *testing.B) {
	for _, tc := range []struct{ n, perPod, view int }{{10000, 4, 0}, {100000, 4, 0}, {100000, 1, 0}, {100000, 1, 10000}} {
		name := fmt.Sprintf("events=%d/per_pod=%d/view=all", tc.n, tc.perPod)
		if tc.view > 0 {
			name = fmt.Sprintf("events=%d/per_pod=%d/view=%d", tc.n, tc.perPod, tc.view)
		}
		b.Run(name, func(b *testing.B) {
			var perEvent float64
			for i := 0; i < b.N; i++ {
				list := liveEvents(tc.n, tc.perPod)
				// base is measured without the list; after, the list is released but what the engine
				// retains of it (label strings of the per-object view) is counted.
				list = nil
				base := heap()
				list = liveEvents(tc.n, tc.perPod)
				e := benchEngine()
				if tc.view > 0 {
					e = New(Config{Classifier: testTable{}, MaxSeries: 1 << 20, MaxObjectSeries: tc.view})
				}
				s := e.NewSource("all")
				_ = s.Replace(list, "1")
				list = nil
				after := heap()
				perEvent = (float64(after) - float64(base)) / float64(tc.n)
				runtime.KeepAlive(e)
			}
			b.ReportMetric(perEvent, "B/event")
		})
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkUpdate is the hot path: one count PATCH of a live Event (classify + count + view).
func BenchmarkUpdate(b *testing.B) {
	const n = 10000
	list := liveEvents(n, 4)
	e := benchEngine()
	s := e.NewSource("all")
	_ = s.Replace(list, "1")
	evs := make([]*corev1.Event, n)
	for i := range evs {
		evs[i] = list[i].(*corev1.Event)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := evs[i%n]
		ev.Count++
		_ = s.Update(ev)
	}
}

// BenchmarkAdd is a new Event created while watching.
func BenchmarkAdd(b *testing.B) {
	e := benchEngine()
	s := e.NewSource("all")
	_ = s.Replace(nil, "1")
	ev := kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev.UID = types.UID(uid(i))
		_ = s.Add(ev)
		if i%4096 == 4095 { // keep the state bounded like TTL expiry does
			b.StopTimer()
			e = benchEngine()
			s = e.NewSource("all")
			_ = s.Replace(nil, "1")
			b.StartTimer()
		}
	}
}

// BenchmarkScrape renders /metrics with the per-object view holding 50k series (plus the
// aggregate counters): target ≤ 100 ms per scrape.
func BenchmarkScrape(b *testing.B) {
	e := benchEngine()
	s := e.NewSource("all")
	_ = s.Replace(nil, "1")
	for _, obj := range liveEvents(50000, 1) {
		_ = s.Add(obj)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collectors()...)
	h := Handler(reg, e, promhttp.HandlerOpts{})
	// identity: the text as rendered; gzip: as Prometheus asks for it (Accept-Encoding: gzip).
	for _, enc := range []string{"identity", "gzip"} {
		b.Run("encoding="+enc, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "/metrics", nil)
				req.Header.Set("Accept-Encoding", enc)
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("scrape: %d", rec.Code)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}
