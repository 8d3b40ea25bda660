package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
)

// TestHealthListenerServesOnlyHealth: the plain-HTTP health listener answers /healthz always,
// /readyz once synced, and nothing else: no metrics, no landing page, no profiling.
func TestHealthListenerServesOnlyHealth(t *testing.T) {
	var synced atomic.Bool
	srv := httptest.NewServer(healthMux(synced.Load))
	t.Cleanup(srv.Close)
	get := func(path string) int {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	if code := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the initial list = %d, want 503", code)
	}
	synced.Store(true)
	if code := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once synced = %d, want 200", code)
	}
	for _, path := range []string{"/", "/metrics", "/debug/pprof/", "/healthz/x", "/readyz/", "/runbooks/", "/problems"} {
		if code := get(path); code != http.StatusNotFound {
			t.Errorf("%s on the health listener = %d, want 404", path, code)
		}
	}
}

// goneWriter is the response of a scraper that gave up: every write fails as on a closed
// connection.
type goneWriter struct{ header http.Header }

func (w *goneWriter) Header() http.Header { return w.header }
func (w *goneWriter) WriteHeader(int)     {}
func (w *goneWriter) Write([]byte) (int, error) {
	return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
}

// TestScrapeGivenUpLogsOnce: a scraper that gives up (its timeout passed) while kubecause gathers
// is at most one ERROR line (promhttp's first failed write, when its part of the response passes
// a piece of the spool) and an aborted response, whatever the number of families. With promhttp's
// Timeout, its http.TimeoutHandler answered 503 at once and the gathering went on into a buffer
// that failed every write: one ERROR per family, 61 for kubecause's registry.
func TestScrapeGivenUpLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	engine := events.New(events.Config{Classifier: causes.Default(), MaxSeries: 100, MaxObjectSeries: 100, MaxTargets: 10, Logger: logger})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(engine.Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the scraper is gone
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(ctx)
	req.Header.Set("Accept-Encoding", "gzip")
	aborted := func() (aborted bool) {
		defer func() { aborted = recover() == http.ErrAbortHandler }()
		metricsHandler(reg, engine, logger).ServeHTTP(&goneWriter{header: http.Header{}}, req)
		return false
	}()
	if n := strings.Count(logs.String(), "level=ERROR"); n > 1 || !aborted {
		t.Errorf("a scrape of %d families given up: %d ERROR lines, aborted %v; want at most 1 line and aborted:\n%s", len(families), n, aborted, logs.String())
	}
}
