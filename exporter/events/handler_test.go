package events

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// stalledResponse is a scraper that sends its request and does not read: its first write blocks
// until release is closed.
type stalledResponse struct {
	header  http.Header
	writing chan struct{} // closed when the first write blocks
	release chan struct{}
	once    sync.Once
}

func newStalled() *stalledResponse {
	return &stalledResponse{header: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
}

func (s *stalledResponse) Header() http.Header { return s.header }
func (s *stalledResponse) WriteHeader(int)     {}
func (s *stalledResponse) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.writing) })
	<-s.release
	return len(p), nil
}

// gathered reads kubecause_events_total of a cause from the registry, not through the handler.
func gathered(t *testing.T, h *harness, cause string) float64 {
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "kubecause_events_total" {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "cause" && l.GetValue() == cause {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func withCount(ev *corev1.Event, n int32) *corev1.Event {
	c := ev.DeepCopy()
	c.Count = n
	return c
}

// A scrape that renders holds a turn; at most maxRendering scrapes render at once, and Events are
// counted meanwhile. A scrape whose reader does not read holds no turn: others complete.
func TestScrapesTakeTurns(t *testing.T) {
	defer func(n int) { maxRendering = n }(maxRendering)
	maxRendering = 1
	h := newHarness(t)
	h.sync()
	evs := viewEvents(4 * viewChunk) // well over spoolSize of text
	for _, ev := range evs {
		h.add(ev)
	}
	handler := Handler(h.reg, h.e, promhttp.HandlerOpts{})
	get := func(w http.ResponseWriter) { handler.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil)) }

	// A stalled reader: its scrape is blocked writing to the network.
	stalled := newStalled()
	stalledDone := make(chan struct{})
	go func() { defer close(stalledDone); get(stalled) }()
	<-stalled.writing
	// Others scrape completely meanwhile, and Events are counted.
	for i := 0; i < 3; i++ {
		rec := httptest.NewRecorder()
		get(rec)
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(rec.Body)
		if rec.Code != 200 || err != nil {
			t.Fatalf("scrape beside a stalled reader: %d, %v", rec.Code, err)
		}
		for _, name := range []string{viewEventsName, viewLastName} {
			if n := len(mfs[name].GetMetric()); n != len(evs) {
				t.Fatalf("scrape beside a stalled reader has %d series of %s, the view %d", n, name, len(evs))
			}
		}
		h.update(withCount(evs[i], 2))
	}
	if got := h.occurrences("configmap_not_found"); got != float64(len(evs)+3) {
		t.Fatalf("occurrences counted beside a stalled reader: %v, want %d", got, len(evs)+3)
	}

	// A scrape blocked while rendering (inside its turn): a second one waits for the turn instead
	// of rendering beside it, and Events are counted while both wait.
	var rendering, most atomic.Int32
	var first atomic.Bool
	inA, releaseA, beside := make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	afterViewChunk = func() {
		n := rendering.Add(1)
		defer rendering.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n > 1 {
			select {
			case beside <- struct{}{}:
			default:
			}
		}
		if first.CompareAndSwap(false, true) {
			close(inA)
			<-releaseA
		}
	}
	defer func() { afterViewChunk = nil }()
	waiting := make(chan struct{}, 1)
	waitingForTurn = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	defer func() { waitingForTurn = nil }()
	done := make(chan int, 2)
	go func() { rec := httptest.NewRecorder(); get(rec); done <- rec.Code }()
	<-inA
	go func() { rec := httptest.NewRecorder(); get(rec); done <- rec.Code }()
	select {
	case <-waiting: // the second scrape found the turn taken
	case <-beside:
		close(releaseA)
		t.Fatal("a second scrape rendered beside one that holds the turn")
	}
	if most.Load() > 1 {
		t.Fatalf("%d scrapes rendered at once, bound 1", most.Load())
	}
	// A scrape of families outside the view needs no turn.
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics?name[]=kubecause_events_total", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "kubecause_events_total{") {
		t.Fatalf("a scrape of kubecause_events_total while the turn is taken: %d", rec.Code)
	}
	h.update(withCount(evs[10], 3))
	if got := gathered(t, h, "configmap_not_found"); got != float64(len(evs)+5) {
		t.Fatalf("occurrences counted while a scrape renders: %v, want %d", got, len(evs)+5)
	}
	close(releaseA)
	for i := 0; i < 2; i++ {
		if code := <-done; code != 200 {
			t.Fatalf("scrape: %d", code)
		}
	}
	if most.Load() != 1 {
		t.Fatalf("%d scrapes rendered at once, bound 1", most.Load())
	}
	close(stalled.release)
	<-stalledDone
}
