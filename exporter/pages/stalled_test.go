package pages

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
)

// msgS1 is the kubelet's message of seed S1 (exporter/causes/golden_test.go).
const msgS1 = `MountVolume.SetUp failed for volume "remote-kube-api-server" : configmap "mspider-mcpc-remote-kube-api-server" not found`

// viewEngine is an engine whose per-object view holds n entries (kubelet Events of seed S1's
// message on n pods): its /metrics text is about 2 MB.
func viewEngine(tb testing.TB, n int) *events.Engine {
	tb.Helper()
	e := events.New(events.Config{Classifier: causes.Default(), MaxObjectSeries: n})
	src := e.NewSource("all")
	_ = src.Replace(nil, "1")
	ts := metav1.NewTime(time.Now())
	for i := range n {
		ns := fmt.Sprintf("team-%d", i%50)
		_ = src.Add(&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d.%x", i, i), Namespace: ns, UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: fmt.Sprintf("workload-%d-7d9fc5b8c-x2k%d", i, i%97)},
			Reason:         "FailedMount", Message: msgS1, Type: corev1.EventTypeWarning,
			Source:         corev1.EventSource{Component: "kubelet", Host: fmt.Sprintf("worker-%d", i%20)},
			FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
		})
	}
	if got := len(e.Problems()); got != n {
		tb.Fatalf("view holds %d entries, want %d", got, n)
	}
	return e
}

// writing counts the handlers inside a Write of their response: a handler whose reader does not
// read stays there.
type writing struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w writing) Write(p []byte) (int, error) {
	w.n.Add(1)
	defer w.n.Add(-1)
	return w.ResponseWriter.Write(p)
}

// stalledReaders serves /metrics of a 10,000-entry view on 127.0.0.1 (limited to limit responses
// at once, 0: no limit) to n clients that send their request with a 4 KiB receive buffer and never
// read. Once every response in flight is blocked writing, it returns the heap and stacks held
// beyond what the server held before the clients came, and how many requests were refused.
func stalledReaders(tb testing.TB, n, limit int) (held int64, refusedN float64) {
	tb.Helper()
	e := viewEngine(tb, 10000)
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collectors()...)
	g := NewGuard()
	var inWrite atomic.Int64
	var h http.Handler = events.Handler(reg, e, promhttp.HandlerOpts{})
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner.ServeHTTP(writing{w, &inWrite}, r) })
	inFlight := n
	if limit > 0 {
		h = g.Limit(HandlerMetrics, limit, h)
		inFlight = min(n, limit)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 10 * time.Minute}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	base := inUse()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: kubecause\r\n\r\n")); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for inWrite.Load() != int64(inFlight) || refused(g, HandlerMetrics, RefusedBusy) != float64(n-inFlight) {
		if ctx.Err() != nil {
			tb.Fatalf("%d of %d responses blocked writing, %g refused, want %d and %d", inWrite.Load(), inFlight,
				refused(g, HandlerMetrics, RefusedBusy), inFlight, n-inFlight)
		}
		time.Sleep(10 * time.Millisecond) // polling: the condition is other goroutines' progress
	}
	return inUse() - base, refused(g, HandlerMetrics, RefusedBusy)
}

// inUse is the heap and goroutine stacks in use after a collection.
func inUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// With 1,000 clients that request /metrics and never read, at most --web.max-requests responses
// are in flight: the others are refused (503, counted) and the memory held is that of 40 stalled
// responses plus 1,000 idle connections, not of 1,000 responses.
func TestStalledReadersAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 connections")
	}
	const n, limit = 1000, 40
	held, refusedN := stalledReaders(t, n, limit)
	if refusedN != n-limit {
		t.Errorf("refused %g, want %d", refusedN, n-limit)
	}
	// A stalled response holds a piece of the view (64 KiB) and the connection's buffers; an idle
	// connection its reader and goroutine. Both at most four times what was measured
	// (docs/performance.md, "Hostile clients").
	if bound := int64(limit*1<<20 + n*64<<10); held > bound {
		t.Errorf("%d clients that never read hold %d KiB, want at most %d KiB", n, held>>10, bound>>10)
	}
	t.Logf("%d stalled readers, limit %d: %d refused, %d KiB held (%d KiB per client)", n, limit, int(refusedN), held>>10, held/n>>10)
}

// BenchmarkStalledReaders measures the memory 1,000 stalled readers of /metrics hold, without a
// limit (as before --web.max-requests) and with the default one (docs/performance.md).
func BenchmarkStalledReaders(b *testing.B) {
	for _, limit := range []int{0, 40} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			var held int64
			for range b.N {
				held, _ = stalledReaders(b, 1000, limit)
			}
			b.ReportMetric(float64(held)/(1<<20), "MiB_held")
		})
	}
}
