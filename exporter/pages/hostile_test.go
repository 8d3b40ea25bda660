package pages

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kubecause/kubecause/exporter/events"
)

func refused(g *Guard, handler, reason string) float64 {
	return testutil.ToFloat64(g.refused.WithLabelValues(handler, reason))
}

// A filter longer than MaxQueryBytes is refused before the view is read (400, counted); one of
// MaxQueryBytes is served.
func TestProblemsRefusesALongFilter(t *testing.T) {
	g := NewGuard()
	read := 0
	p := &Problems{Source: func() []events.Problem { read++; return bigView(10) }, Guard: g}
	resp, body := get(t, p, "/problems?format=json&q="+strings.Repeat("x", 1<<20), nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "256 bytes") || read != 0 {
		t.Errorf("1 MB filter: %d %q, view read %d times; want 400 naming the limit, view not read", resp.StatusCode, body, read)
	}
	if n := refused(g, HandlerPages, RefusedQueryTooLong); n != 1 {
		t.Errorf("kubecause_http_requests_refused_total{handler=pages,reason=query_too_long} = %g, want 1", n)
	}
	if resp, _ := get(t, p, "/problems?format=json&q="+strings.Repeat("x", MaxQueryBytes), nil); resp.StatusCode != http.StatusOK {
		t.Errorf("filter of %d bytes: %d, want 200", MaxQueryBytes, resp.StatusCode)
	}
}

// allocated is the bytes allocated by f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The cost of a filter does not grow with its length times the view: a filter of MaxQueryBytes
// that matches nothing allocates no more than a one-byte one that matches nothing. (It lower-cased
// the filter once per entry: 10,000 × 256 bytes more.)
func TestProblemsFilterCostDoesNotGrowWithTheView(t *testing.T) {
	view := bigView(10000)
	p := &Problems{Source: func() []events.Problem { return view }}
	serve := func(q string) func() {
		return func() {
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/problems?format=json&q="+q, nil))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"matched": 0`) {
				t.Fatalf("q=%.10s…: %d %.200s", q, rec.Code, rec.Body.String())
			}
		}
	}
	serve("Q")() // warm up
	short := allocated(serve("Q"))
	long := allocated(serve(strings.Repeat("Q", MaxQueryBytes)))
	if long > short+64<<10 {
		t.Errorf("a %d-byte filter allocates %d bytes over 10,000 entries, a 1-byte one %d: the filter's cost grows with the view", MaxQueryBytes, long, short)
	}
	t.Logf("allocated per request over 10,000 entries: q of 1 byte %d bytes, of %d bytes %d bytes", short, MaxQueryBytes, long)
}

// A request whose client has gone (its context is done) stops reading the view and writes
// nothing, whether the client left before or while the view is read.
func TestProblemsStopsWhenTheClientIsGone(t *testing.T) {
	view := bigView(10000)
	for _, when := range []string{"before", "while reading the view"} {
		ctx, cancel := context.WithCancel(context.Background())
		if when == "before" {
			cancel()
		}
		p := &Problems{Source: func() []events.Problem { cancel(); return view }}
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/problems?q=worker", nil).WithContext(ctx))
		if rec.Body.Len() != 0 {
			t.Errorf("client gone %s: the page was still rendered (%d bytes)", when, rec.Body.Len())
		}
	}
}

// Limit refuses the request past its limit at once with 503 and counts it; a handler under another
// limit is unaffected; once a response ends, its slot serves again.
func TestLimitRefusesPastItsLimitAndCounts(t *testing.T) {
	g := NewGuard()
	const max = 3
	entered, release := make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = w.Write([]byte("page\n"))
	})
	pages := g.Limit(HandlerPages, max, slow)
	metrics := g.Limit(HandlerMetrics, 1, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics\n"))
	}))
	var wg sync.WaitGroup
	codes := make([]int, max)
	for i := range max {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := get(t, pages, "/problems", nil)
			codes[i] = resp.StatusCode
		}()
		<-entered
	}
	for i := range 5 {
		resp, body := get(t, pages, "/problems", nil)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("request %d past the limit: %d %q, want 503 with Retry-After", i, resp.StatusCode, body)
		}
	}
	if resp, body := get(t, metrics, "/metrics", nil); resp.StatusCode != http.StatusOK || body != "metrics\n" {
		t.Errorf("/metrics while the pages are at their limit: %d %q, want 200", resp.StatusCode, body)
	}
	if n := refused(g, HandlerPages, RefusedBusy); n != 5 {
		t.Errorf("refused pages = %g, want 5", n)
	}
	if n := refused(g, HandlerMetrics, RefusedBusy); n != 0 {
		t.Errorf("refused scrapes = %g, want 0", n)
	}
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d within the limit: %d, want 200", i, c)
		}
	}
	go func() { <-entered }()
	if resp, _ := get(t, pages, "/problems", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after the slots are free: %d, want 200", resp.StatusCode)
	}
}
