package events

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubecause/kubecause/exporter/kube"
)

// scriptedClient answers lists with an empty list and each watch with the next of watches, then
// with a streamed list (WatchList) of no Event that stays open; it records the calls.
type scriptedClient struct {
	mu      sync.Mutex
	watches []func() (watch.Interface, error)
	calls   []string
}

func (c *scriptedClient) List(_ context.Context, _ kube.Resource, _ string, opts metav1.ListOptions) (runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "list rv="+opts.ResourceVersion)
	return &corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}, nil
}

// initialEventsEnd is a streamed list of no Event: the bookmark that ends the initial events.
func initialEventsEnd() *watch.FakeWatcher {
	w := watch.NewFakeWithChanSize(2, false)
	w.Action(watch.Bookmark, &corev1.Event{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "10",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	return w
}

func (c *scriptedClient) Watch(_ context.Context, _ kube.Resource, _ string, opts metav1.ListOptions) (watch.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("watch rv=%s initial=%v", opts.ResourceVersion, opts.SendInitialEvents != nil))
	if len(c.watches) == 0 {
		return initialEventsEnd(), nil
	}
	next := c.watches[0]
	c.watches = c.watches[1:]
	return next()
}

func (c *scriptedClient) done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.watches) == 0
}

// TestExpiredWatchIsNoError: a watch refused because its resource version is too old (the watch
// cache's wording), and one ended by an ERROR notification of the same 410 (etcd's wording after a
// compaction), are routine: logged at debug level, not counted in kubecause_watch_errors_total,
// kubecause_watch_up stays 1. A forbidden watch is an error.
func TestExpiredWatchIsNoError(t *testing.T) {
	h := newHarness(t)
	h.e.cfg.Now = time.Now
	c := &scriptedClient{watches: []func() (watch.Interface, error){
		// The list streams, then the stream ends with an ERROR notification of 410 (wording of
		// k8s.io/apiserver pkg/storage/etcd3/errors.go, after a compaction).
		func() (watch.Interface, error) {
			w := initialEventsEnd()
			st := apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old.").ErrStatus
			w.Error(&st)
			return w, nil
		},
		// The watch is refused with 410 (wording of k8s.io/apiserver
		// pkg/storage/cacher/watch_cache_history.go).
		func() (watch.Interface, error) {
			return nil, apierrors.NewResourceExpired("too old resource version: 10 (15)")
		},
		func() (watch.Interface, error) {
			return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "",
				fmt.Errorf(`User "system:serviceaccount:monitoring:kubecause" cannot watch resource "events" in API group "" at the cluster scope`))
		},
	}}
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	src := h.e.NewSource("all")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); src.Watch(ctx, c, "", "type=Warning", logger) }()
	deadline := time.Now().Add(time.Minute)
	for !c.done() || h.value("kubecause_watch_up", nil) != 1 { // the scripted watches, then one that stays open
		if time.Now().After(deadline) {
			t.Fatalf("watch calls: %q", c.calls)
		}
		time.Sleep(10 * time.Millisecond) // polling: the reflector's backoff runs on its own clock
	}
	cancel()
	<-done
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if got := h.value("kubecause_watch_errors_total", nil); got != 1 {
		t.Errorf("kubecause_watch_errors_total = %v, want 1 (the forbidden watch only)\nlog:\n%s", got, out)
	}
	if n := strings.Count(out, "level=ERROR"); n != 1 || !strings.Contains(out, "cannot watch resource") {
		t.Errorf("%d ERROR lines, want 1 (the forbidden watch):\n%s", n, out)
	}
	if n := strings.Count(out, `level=DEBUG msg="Event watch expired; relisting"`); n != 2 {
		t.Errorf("%d debug lines of an expired watch, want 2:\n%s", n, out)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestWatchStreamsTheInitialList: through client-go's reflector, a streamed list (WatchList) is
// read by the source's stream as it arrives — the reflector accepts the stand-ins it gets instead
// of the Events and resumes from their resource version — and the watch goes on after it.
func TestWatchStreamsTheInitialList(t *testing.T) {
	h := newHarness(t)
	h.e.cfg.Now = time.Now
	fw := watch.NewFakeWithChanSize(8, false)
	c := &scriptedClient{watches: []func() (watch.Interface, error){func() (watch.Interface, error) { return fw, nil }}}
	a := kubeletEvent(uidA, "pod.a", 2, "FailedMount", msgS1)
	a.ResourceVersion = "5"
	b := schedulerEvent(uidB, 3)
	b.ResourceVersion = "6"
	fw.Add(a)
	fw.Add(b)
	fw.Action(watch.Bookmark, &corev1.Event{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "10",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.src.Watch(ctx, c, "", "", h.e.cfg.Logger) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(time.Minute)
	for !h.e.Synced() {
		if time.Now().After(deadline) {
			t.Fatalf("not synced; watch calls: %q", c.calls)
		}
		time.Sleep(10 * time.Millisecond) // polling: the reflector runs on its own goroutine
	}
	if got := h.e.Tracked(); got != 2 {
		t.Fatalf("tracked %d after the streamed list, want 2", got)
	}
	if got := h.sum("kubecause_events_total"); got != 0 {
		t.Fatalf("the first list counted %v, want 0 (a baseline)", got)
	}
	a = kubeletEvent(uidA, "pod.a", 5, "FailedMount", msgS1)
	a.ResourceVersion = "11"
	fw.Modify(a)
	for h.occurrences("configmap_not_found") != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the update after the list was not counted: %v", h.occurrences("configmap_not_found"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.calls) == 0 || c.calls[0] != "watch rv= initial=true" {
		t.Fatalf("watch calls %q: want a streamed list first", c.calls)
	}
}

// TestExpiredStreamClosesQuietly: a watch that ends with a 410 ERROR notification is stopped by
// its reader (the reflector), and client-go's stream watcher, reading the body being closed, may
// report "unable to decode an event from the watch stream" on the way out (a third of the
// expiries logged an ERROR against a real kube-apiserver). Through client-go's REST client and a
// 127.0.0.1 server that sends the 410 and holds the stream open, as kube-apiserver's watch does,
// over HTTP/2 as kube-apiserver serves it, the 410 is reported as such and what follows only as
// the stream's closing, each time.
func TestExpiredStreamClosesQuietly(t *testing.T) {
	gone := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
		`"message":"The resourceVersion for the provided watch is too old.","reason":"Expired","code":410}}` + "\n"
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, gone)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv.EnableHTTP2 = true // as kube-apiserver serves its clients
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	client, err := kube.New(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	src := h.e.NewSource("all")
	closings := 0
	for i := range 30 {
		w, err := client.Watch(context.Background(), kube.Events, "", metav1.ListOptions{ResourceVersion: "10"})
		if err != nil {
			t.Fatal(err)
		}
		var errs []string
		sw := src.stream(w, false, func(st *metav1.Status, closing bool) {
			if closing {
				closings++
			} else {
				errs = append(errs, st.Message)
			}
		})
		for ev := range sw.ResultChan() {
			if ev.Type == watch.Error {
				sw.Stop() // as the reflector does on an ERROR notification
			}
		}
		if len(errs) != 1 || errs[0] != "The resourceVersion for the provided watch is too old." {
			t.Fatalf("expiry %d: errors reported %q, want only the 410", i, errs)
		}
	}
	t.Logf("30 expiries: %d reports of the stream's closing after the 410", closings)
}

// TestFrozenAPIServerIsAnError: an apiserver that accepts connections and never answers is a
// logged, counted watch error within kube.AnswerTimeout, and kubecause_watch_up is 0; before the
// timeout, kubecause waited on the first list for good, saying nothing.
func TestFrozenAPIServerIsAnError(t *testing.T) {
	defer func(d time.Duration) { kube.AnswerTimeout = d }(kube.AnswerTimeout)
	kube.AnswerTimeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // accepts, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	client, err := kube.New(&rest.Config{Host: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	src := h.e.NewSource("all")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); src.Watch(ctx, client, "", "type=Warning", logger) }()
	defer func() { cancel(); <-done }()
	start := time.Now()
	for h.value("kubecause_watch_errors_total", nil) < 1 {
		if time.Since(start) > time.Minute {
			t.Fatalf("no watch error counted after a minute against an apiserver that never answers")
		}
		time.Sleep(10 * time.Millisecond) // polling the counter
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "did not begin to answer within 200ms") {
		t.Errorf("the error is not logged as such:\n%s", out)
	}
	if up := h.value("kubecause_watch_up", nil); up != 0 {
		t.Errorf("kubecause_watch_up = %v, want 0", up)
	}
	t.Logf("first error counted after %v", time.Since(start).Round(time.Millisecond))
}
