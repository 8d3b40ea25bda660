package events

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events/eventstest"
)

// loadEvent is the n-th Event of e2e/load's generator as the apiserver returns it (its mix of
// eventstest's Warnings: the kubelet's nine times in ten, one in ten of those with the recorder's
// combined prefix, kube-scheduler's FailedScheduling one in ten; a random UID, the generator's
// namespaces, pods, names and nodes), decoded afresh: every string its own copy.
func loadEvent(r *rand.Rand, n int, created time.Time) *corev1.Event {
	ns := "ns-" + strconv.Itoa(n%50)
	u := uuid.UUID{}
	for i := range u {
		u[i] = byte(r.Uint32())
	}
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
	ts := metav1.NewTime(created)
	if r.IntN(10) == 0 {
		pod := fmt.Sprintf("pending-%d", n)
		return &corev1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod, created.UnixNano()+int64(n)), Namespace: ns, UID: types.UID(u.String()), ResourceVersion: strconv.Itoa(1000 + n), CreationTimestamp: ts},
			InvolvedObject:      corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod, UID: types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", n))},
			Reason:              "FailedScheduling",
			Message:             eventstest.SchedulerWarning,
			Type:                corev1.EventTypeWarning,
			EventTime:           metav1.NewMicroTime(created),
			ReportingController: "default-scheduler",
			ReportingInstance:   "default-scheduler-load",
			Action:              "Scheduling",
		}
	}
	pod := fmt.Sprintf("web-%d", n/4)
	m := eventstest.KubeletWarnings[r.IntN(len(eventstest.KubeletWarnings))]
	msg := m[1]
	if n%10 == 0 {
		msg = eventstest.CombinedPrefix + msg
	}
	node := fmt.Sprintf("node-%d", n%100)
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x%x", pod, created.UnixNano(), n%4), Namespace: ns, UID: types.UID(u.String()), ResourceVersion: strconv.Itoa(1000 + n), CreationTimestamp: ts},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod, UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", n/4))},
		Reason:              m[0],
		Message:             string([]byte(msg)),
		Source:              corev1.EventSource{Component: "kubelet", Host: node},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		Type:                corev1.EventTypeWarning,
		ReportingController: "kubelet",
		ReportingInstance:   node,
	}
}

// BenchmarkMillion is TestMillionEvents's start in process, with the real structures: N live
// Events of e2e/load's Warning mix streamed (WatchList) through the Source's stream into the
// reflector's temporary store with the Source's transform, as client-go's watchList does, into an
// engine with the default caps and the built-in cause table; then the list is applied (Replace)
// and a snapshot written. It reports, from runtime.ReadMemStats after two collections:
//
//	list-B/event   heap live at the end of the streamed list (engine + temporary store), per Event
//	state-B/event  heap kept once the list is applied and the temporary store dropped, per Event
//	snap-B/event   bytes allocated by one snapshot write (Snapshots.Write), per Event
//	snap-copy-locked-ms, snap-encode-locked-ms
//	               the engine's lock held to copy the snapshot's records (as Write did before)
//	               and to encode them (as Write does)
//
// MILLION_EVENTS sets N (default 1,000,000).
func BenchmarkMillion(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("MILLION_EVENTS")); err == nil && v > 0 {
		n = v
	}
	table := causes.Default()
	dir := b.TempDir()
	var listB, stateB, snapB, snapBytes, copyMS, encodeMS float64
	for i := 0; i < b.N; i++ {
		base := heap()
		e := New(Config{Classifier: table, NormalReasons: []string{"Killing"}})
		s := e.NewSource("all")
		snaps := OpenSnapshots(e, filepath.Join(dir, "snap"), "bench", time.Hour, nil)
		tmp := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.WithTransformer(s.Transformer()))
		r := rand.New(rand.NewPCG(uint64(i), 1))
		created := time.Now().Add(-time.Hour)
		ch := make(chan watch.Event, 64)
		go func() {
			for j := 0; j < n; j++ {
				ch <- watch.Event{Type: watch.Added, Object: loadEvent(r, j, created.Add(time.Duration(j)*time.Millisecond))}
			}
			ch <- watch.Event{Type: watch.Bookmark, Object: &corev1.Event{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1",
				Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}}
		}()
		w := s.stream(watch.NewProxyWatcher(ch), true, nil)
		// As client-go's handleListWatch: each initial Event into the temporary store, until the
		// bookmark that ends them.
		for ev := range w.ResultChan() {
			if ev.Type == watch.Bookmark {
				break
			}
			if err := tmp.Add(ev.Object); err != nil {
				b.Fatal(err)
			}
		}
		w.Stop()
		listB = float64(heap()-base) / float64(n)
		if err := s.Replace(tmp.List(), "1"); err != nil {
			b.Fatal(err)
		}
		tmp = nil
		stateB = float64(heap()-base) / float64(n)
		if f := os.Getenv("MILLION_HEAPPROFILE"); f != "" {
			w, err := os.Create(f)
			if err != nil {
				b.Fatal(err)
			}
			_ = pprof.WriteHeapProfile(w)
			_ = w.Close()
		}
		if got := e.Tracked(); got != n {
			b.Fatalf("tracked %d Events, want %d", got, n)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		size, err := snaps.Write()
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		snapB = float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
		snapBytes = float64(size)
		// The engine's lock is held while the snapshot is taken: before, a copy of the records
		// (takeSnapshot); now, their encoding (Write).
		e.mu.Lock()
		start := time.Now()
		_ = e.takeSnapshot("bench")
		copyMS = float64(time.Since(start).Microseconds()) / 1000
		start = time.Now()
		if _, err := e.takeSnapshotMeta("bench").EncodeWith(e.snapshotEventCount(), e.snapshotEvents); err != nil {
			b.Fatal(err)
		}
		encodeMS = float64(time.Since(start).Microseconds()) / 1000
		e.mu.Unlock()
		runtime.KeepAlive(e)
	}
	b.ReportMetric(listB, "list-B/event")
	b.ReportMetric(stateB, "state-B/event")
	b.ReportMetric(snapB, "snap-B/event")
	b.ReportMetric(snapBytes, "snap-file-B")
	b.ReportMetric(copyMS, "snap-copy-locked-ms")
	b.ReportMetric(encodeMS, "snap-encode-locked-ms")
}
