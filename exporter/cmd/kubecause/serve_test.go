package main

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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
