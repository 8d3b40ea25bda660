package events

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
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
