package events

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the registry followed by the engine's per-object view, in the Prometheus text
// format (as kube-state-metrics does; the view is rendered without client_golang's Gather, see
// viewtext.go). Gzip is applied when the scraper accepts it. Like client_golang's handler, it
// serves only the families named by name[] query parameters when there are any
// (/metrics?name[]=kubecause_events_total), the view included. A scrape whose writes fail is
// aborted, never ended as if complete.
//
// Scrapes and event processing share the CPU and the engine's lock: at most maxRendering scrapes
// render and compress the view at once (the others wait for a turn, or until their scraper gives
// up), so that many concurrent scrapers can neither take every core from the engine nor queue on
// its lock ahead of it. The response is sent to the network in pieces between turns: a scraper
// that reads slowly, or not at all, holds no turn, no lock and at most one piece (spoolSize).
func Handler(g prometheus.Gatherer, e *Engine, opts promhttp.HandlerOpts) http.Handler {
	opts.EnableOpenMetrics = false
	opts.DisableCompression = true
	inner := promhttp.HandlerFor(g, opts)
	turns := make(chan struct{}, maxRendering)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sp := &spool{dst: w, done: r.Context().Done()}
		defer sp.release()
		r2 := r.Clone(r.Context())
		r2.Header.Set("Accept", "text/plain;version=0.0.4")
		r2.Header.Del("Accept-Encoding")
		var out io.Writer = sp
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzipPool.Get().(*gzip.Writer)
			gz.Reset(sp)
			defer func() {
				gz.Reset(io.Discard) // drop the reference to the response
				gzipPool.Put(gz)
			}()
			out = gz
		}
		rec := &capture{ResponseWriter: w, out: out}
		inner.ServeHTTP(rec, r2)
		if rec.status != 0 && rec.status != http.StatusOK {
			return
		}
		err := rec.err
		if err != nil {
			panic(http.ErrAbortHandler) // see below
		}
		if names := r.URL.Query()["name[]"]; viewWanted(names) {
			// The registry's part is bounded by the caps; the view's is what takes the CPU.
			if err = sp.flush(); err == nil {
				sp.turns = turns
				if !sp.acquire() {
					err = errGaveUp
				}
			}
			if err == nil {
				err = e.WriteView(out, names...)
			}
		}
		if gz, ok := out.(*gzip.Writer); ok && err == nil {
			err = gz.Close()
		}
		if err == nil {
			err = sp.flush()
		}
		if err != nil {
			// The reader failed or timed out: abort the connection, so the scraper sees a failed
			// scrape rather than a body that ends cleanly without part of the view.
			panic(http.ErrAbortHandler)
		}
	})
}

// maxRendering is how many scrapes render at once: half the cores, at least one (a variable so
// that tests can set it).
var maxRendering = max(1, runtime.GOMAXPROCS(0)/2)

// spoolSize is how much of a response is rendered before it is sent.
const spoolSize = 64 << 10

// spool collects a response while its scrape holds a turn (once turns is set) and sends it to the
// network without the turn, every spoolSize bytes.
type spool struct {
	dst   io.Writer
	turns chan struct{}
	done  <-chan struct{}
	buf   []byte
	held  bool
}

func (s *spool) acquire() bool {
	if s.turns == nil {
		return true // not rendering the view yet
	}
	if waitingForTurn != nil && len(s.turns) == cap(s.turns) {
		waitingForTurn()
	}
	select {
	case s.turns <- struct{}{}:
		s.held = true
		return true
	case <-s.done:
		return false
	}
}

func (s *spool) release() {
	if s.held {
		<-s.turns
		s.held = false
	}
}

func (s *spool) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	if len(s.buf) >= spoolSize {
		if err := s.flush(); err != nil {
			return 0, err
		}
		if !s.acquire() {
			return 0, errGaveUp
		}
	}
	return len(p), nil
}

// flush gives the turn back and sends what was rendered.
func (s *spool) flush() error {
	s.release()
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.dst.Write(s.buf)
	s.buf = s.buf[:0]
	return err
}

// waitingForTurn, when set (tests only), runs when a scrape finds every turn taken.
var waitingForTurn func()

var errGaveUp = errors.New("the scraper gave up while waiting for a turn to render")

// gzipPool holds gzip writers at BestSpeed: a /metrics body is megabytes of repetitive text,
// which level 1 compresses to within a few percent of the default level at several times the
// speed; the pool saves the compressor's state (~0.8 MB) per scrape. The writers are
// klauspost/compress's (as Prometheus uses): against the standard library's at the same level,
// a 50k-series scrape takes 34 instead of 48 ms and allocates 2.3 instead of 4.4 MB
// (docs/performance.md).
var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

// capture sends the inner handler's body to out (possibly gzip) and remembers its status and
// the first write error. After it, writes are dropped without an error: the scrape is aborted at
// the end, and promhttp logs the one error rather than one per family left (gzip repeats its
// first error to every later write).
type capture struct {
	http.ResponseWriter
	out    io.Writer
	status int
	err    error
}

func (c *capture) WriteHeader(code int) {
	c.status = code
	if code != http.StatusOK {
		// An error page goes out as it is, uncompressed.
		c.ResponseWriter.Header().Del("Content-Encoding")
		c.out = c.ResponseWriter
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(p []byte) (int, error) {
	if c.err != nil {
		return len(p), nil
	}
	n, err := c.out.Write(p)
	c.err = err
	return n, err
}
