package events

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// midScrape is a writer that runs during a scrape, once, after the first chunks of the view have
// been copied: the point where churn could make a chunked scrape repeat a series.
type midScrape struct {
	w    io.Writer
	once func()
}

func (m *midScrape) Write(p []byte) (int, error) {
	if m.once != nil {
		f := m.once
		m.once = nil
		f()
	}
	return m.w.Write(p)
}

// series returns the series lines of one family in a text exposition, by their label set, and
// fails on a series that appears twice (Prometheus rejects the second sample).
func series(t *testing.T, text, family string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, family+"{") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		id, value := line[:sp], line[sp+1:]
		if _, dup := out[id]; dup {
			t.Errorf("%s appears twice in one scrape", id)
		}
		out[id] = value
	}
	return out
}

// viewEvents are n kubelet Events, each the only live Event of its view entry.
func viewEvents(n int) []*corev1.Event {
	evs := make([]*corev1.Event, n)
	for i := range evs {
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod-%d.%x", i, i), 1, "FailedMount", msgS1)
		ev.InvolvedObject.Name = fmt.Sprintf("pod-%d", i)
		evs[i] = ev
	}
	return evs
}

// TestChunkedScrapeNeverRepeatsASeries: the view is copied a chunk at a time, so it changes under a
// scrape. An object whose only Event expires after its chunk was written and comes back (new
// Event, same object, reason and cause) must not be written a second time from the slot another
// expired entry left free further on.
func TestChunkedScrapeNeverRepeatsASeries(t *testing.T) {
	h := newHarness(t)
	h.sync()
	n := 10 * viewChunk
	evs := viewEvents(n)
	for _, ev := range evs {
		h.add(ev)
	}
	var buf bytes.Buffer
	w := &midScrape{w: &buf, once: func() {
		// Slot 0 was copied (the first write comes after the first chunk); the last slot was not.
		for _, ev := range []*corev1.Event{evs[0], evs[n-1]} {
			if err := h.src.Delete(ev); err != nil {
				t.Error(err)
			}
		}
		back := evs[0].DeepCopy()
		back.UID = types.UID(uid(n))
		back.Name = "pod-0.again"
		h.add(back)
	}}
	if err := h.e.WriteView(w); err != nil {
		t.Fatal(err)
	}
	if w.once != nil {
		t.Fatal("the scrape wrote nothing before its end; the test did not exercise churn")
	}
	got := series(t, buf.String(), viewEventsName)
	if len(got) < n-1 || len(got) > n {
		t.Errorf("scrape during churn has %d series of %s, want %d or %d", len(got), viewEventsName, n-1, n)
	}
	// The next scrape shows the view as it is: pod-0 back, pod-(n-1) gone.
	buf.Reset()
	if err := h.e.WriteView(&buf); err != nil {
		t.Fatal(err)
	}
	after := series(t, buf.String(), viewEventsName)
	if len(after) != n-1 {
		t.Errorf("after churn: %d series, want %d", len(after), n-1)
	}
	for id := range after {
		if strings.Contains(id, fmt.Sprintf(`name="pod-%d"`, n-1)) {
			t.Errorf("expired object still shown: %s", id)
		}
	}
	if !strings.Contains(buf.String(), `name="pod-0"`) {
		t.Error("pod-0, back with a new Event, is not shown")
	}
}

// TestStalledScrapeKeepsTheViewBounded: a scraper that stops reading holds its scrape open while
// the view is replaced many times over; the view never holds more slots than its cap, and the
// held scrape writes no series twice.
func TestStalledScrapeKeepsTheViewBounded(t *testing.T) {
	max := 4 * viewChunk
	h := newHarness(t, func(c *Config) { c.MaxObjectSeries = max })
	h.sync()
	evs := viewEvents(max)
	for _, ev := range evs {
		h.add(ev)
	}
	again := recreator(t, h, evs)
	var buf bytes.Buffer
	w := &midScrape{w: &buf, once: func() {
		for r := 0; r < 5; r++ {
			for i := range evs {
				again(i)
			}
		}
	}}
	if err := h.e.WriteView(w); err != nil {
		t.Fatal(err)
	}
	if w.once != nil {
		t.Fatal("the scrape wrote nothing before its end; the test did not exercise churn")
	}
	if got := len(h.e.view.entries); got > max {
		t.Errorf("view holds %d slots after churn during a stalled scrape, want at most %d", got, max)
	}
	series(t, buf.String(), viewEventsName)
	series(t, buf.String(), viewLastName)
	buf.Reset()
	if err := h.e.WriteView(&buf); err != nil {
		t.Fatal(err)
	}
	if got := len(series(t, buf.String(), viewEventsName)); got != max {
		t.Errorf("next scrape: %d series, want %d", got, max)
	}
}

// TestScrapeUnderChurnIsComplete: objects whose Events live through a scrape are all in it, in
// both families, however much of the rest of the view is replaced meanwhile — in a scrape held
// open by a slow reader and in every scrape after it.
func TestScrapeUnderChurnIsComplete(t *testing.T) {
	max := 4 * viewChunk
	h := newHarness(t, func(c *Config) { c.MaxObjectSeries = max })
	h.sync()
	evs := viewEvents(max)
	for _, ev := range evs {
		h.add(ev)
	}
	stable := max / 2 // pod-0 … pod-(stable-1) keep their Events; the others churn
	again := recreator(t, h, evs)
	churn := func() {
		for r := 0; r < 3; r++ {
			for i := stable; i < max; i++ {
				again(i)
			}
		}
	}
	complete := func(what, text string) {
		t.Helper()
		for _, family := range []string{viewEventsName, viewLastName} {
			got := series(t, text, family)
			for i := 0; i < stable; i++ {
				id := fmt.Sprintf(`%s{namespace="istio-system",kind="Pod",name="pod-%d",reason="FailedMount",cause="configmap_not_found",target=""}`, family, i)
				if _, ok := got[id]; !ok {
					t.Fatalf("%s: %s missing (%d series of %s written)", what, id, len(got), family)
				}
			}
		}
	}
	for scrape := 0; scrape < 3; scrape++ {
		var buf bytes.Buffer
		w := &midScrape{w: &buf, once: churn}
		if err := h.e.WriteView(w); err != nil {
			t.Fatal(err)
		}
		if w.once != nil {
			t.Fatal("the scrape wrote nothing before its end; the test did not exercise churn")
		}
		complete(fmt.Sprintf("scrape %d during churn", scrape), buf.String())
	}
	var buf bytes.Buffer
	if err := h.e.WriteView(&buf); err != nil {
		t.Fatal(err)
	}
	complete("quiet scrape", buf.String())
	if got := len(series(t, buf.String(), viewEventsName)); got != max {
		t.Errorf("quiet scrape: %d series, want %d", got, max)
	}
}

// failingResponse is a client gone or past the write timeout: every write fails.
type failingResponse struct{ header http.Header }

func (f *failingResponse) Header() http.Header       { return f.header }
func (f *failingResponse) WriteHeader(int)           {}
func (f *failingResponse) Write([]byte) (int, error) { return 0, errors.New("i/o timeout") }

// TestFailedScrapeIsAborted: when the response cannot be written, the handler aborts the
// connection (http.ErrAbortHandler) rather than end the response as if it were complete.
func TestFailedScrapeIsAborted(t *testing.T) {
	h := newHarness(t)
	h.sync()
	for _, ev := range viewEvents(2 * viewChunk) {
		h.add(ev)
	}
	defer func() {
		if r := recover(); r != http.ErrAbortHandler {
			t.Fatalf("a scrape whose writes fail ended with %v, want the http.ErrAbortHandler panic", r)
		}
	}()
	Handler(h.reg, h.e, promhttp.HandlerOpts{}).ServeHTTP(&failingResponse{header: http.Header{}}, httptest.NewRequest("GET", "/metrics", nil))
}

// recreator returns a function that expires Event i of evs and brings its object back with a new
// Event (a new UID), as the recorder does once an Event's TTL passed.
func recreator(t *testing.T, h *harness, evs []*corev1.Event) func(i int) {
	next := len(evs)
	return func(i int) {
		if err := h.src.Delete(evs[i]); err != nil {
			t.Error(err)
		}
		ev := evs[i].DeepCopy()
		ev.UID = types.UID(uid(next))
		next++
		h.add(ev)
		evs[i] = ev
	}
}

// TestFailedScrapeLogsOnce: a scraper that goes away (its timeout) while the registry's families
// are sent is one error line, not one per family still to send (a hundred lines per scrape
// aborted by a slow Prometheus).
func TestFailedScrapeLogsOnce(t *testing.T) {
	h := newHarness(t)
	h.sync()
	for _, ev := range viewEvents(2 * viewChunk) {
		h.add(ev)
	}
	var logged bytes.Buffer
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: log.New(&logged, "", 0)}
	// Enough families that the registry's part alone passes a spool's worth of text, compressed
	// too (label values that do not compress).
	reg := prometheus.NewPedanticRegistry()
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: fmt.Sprintf("family_%d_total", i), Help: "A family."}, []string{"l"})
		for range 12 {
			c.WithLabelValues(fmt.Sprintf("%016x%016x%016x", rnd.Uint64(), rnd.Uint64(), rnd.Uint64())).Inc()
		}
		reg.MustRegister(c)
	}
	for _, gzip := range []bool{false, true} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip") // as Prometheus asks
		}
		func() {
			defer func() {
				if r := recover(); r != http.ErrAbortHandler {
					t.Errorf("gzip %v: a scrape whose writes fail ended with %v, want the http.ErrAbortHandler panic", gzip, r)
				}
			}()
			Handler(prometheus.Gatherers{reg, h.reg}, h.e, opts).ServeHTTP(&failingResponse{header: http.Header{}}, req)
		}()
		if n := strings.Count(logged.String(), "\n"); n != 1 {
			t.Errorf("gzip %v: a scrape whose client went away logged %d lines, want 1:\n%s", gzip, n, logged.String())
		}
		logged.Reset()
	}
}
