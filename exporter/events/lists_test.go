package events

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// streamList feeds objs to the source the way client-go's reflector reads a streamed (WatchList)
// list (handleListWatch): the watch's initial events, each ADDED, pass through the source's
// stream and go into a temporary store that applies the source's transformer, until the bookmark
// that ends them; then the store's content goes to Replace. It returns what the store held.
func (h *harness) streamList(objs ...interface{}) []interface{} {
	h.t.Helper()
	events := make([]watch.Event, 0, len(objs))
	for _, o := range objs {
		events = append(events, watch.Event{Type: watch.Added, Object: o.(runtime.Object)})
	}
	return h.streamEvents(events...)
}

// streamEvents is streamList with the initial events given (ADDED, MODIFIED or DELETED).
func (h *harness) streamEvents(events ...watch.Event) []interface{} {
	h.t.Helper()
	fw := watch.NewFakeWithChanSize(len(events)+1, false)
	for _, ev := range events {
		fw.Action(ev.Type, ev.Object)
	}
	fw.Action(watch.Bookmark, &corev1.Event{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "10",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	w := h.src.stream(fw, true, nil)
	defer w.Stop()
	tmp := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.WithTransformer(h.src.Transformer()))
	for ev := range w.ResultChan() {
		var err error
		switch ev.Type {
		case watch.Added:
			err = tmp.Add(ev.Object)
		case watch.Modified:
			err = tmp.Update(ev.Object)
		case watch.Deleted:
			err = tmp.Delete(ev.Object)
		}
		if err != nil {
			h.t.Fatal(err)
		}
		if ev.Type == watch.Bookmark {
			break
		}
	}
	held := tmp.List()
	if err := h.src.Replace(held, "10"); err != nil {
		h.t.Fatal(err)
	}
	return held
}

// TestStreamedListHoldsNoEvents: while a streamed list arrives, the reflector's temporary store
// holds one stand-in, whatever the number of Events (before, a placeholder and a namespace/name
// key per Event: ~150 bytes each at 1,000,000, BenchmarkMillion), and no Event object.
func TestStreamedListHoldsNoEvents(t *testing.T) {
	h := newHarness(t)
	var objs []interface{}
	for i := range 100 {
		objs = append(objs, kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("pod.%d", i), 40, "FailedMount", msgS1))
	}
	held := h.streamList(append(objs, schedulerEvent(uidB, 12))...)
	if len(held) != 1 {
		t.Fatalf("the reflector's store held %d items for 101 Events, want 1", len(held))
	}
	for _, o := range held {
		if _, ok := o.(*corev1.Event); ok {
			t.Fatalf("the reflector's store kept an Event object while the list streamed: %T", o)
		}
	}
	if !h.e.Synced() || h.e.Tracked() != 101 {
		t.Fatalf("synced %v, tracked %d; want synced with 101 Events", h.e.Synced(), h.e.Tracked())
	}
	if got := h.sum("kubecause_events_total"); got != 0 {
		t.Fatalf("the first list counted %v occurrences, want 0 (a baseline)", got)
	}
}

// TestStreamedListDeletionAndRetry: an Event deleted before the streamed list ends is forgotten;
// a streamed list that breaks off and is begun again forgets the Events only the broken one had,
// and a list read after it (a LIST fallback) as well.
func TestStreamedListDeletionAndRetry(t *testing.T) {
	h := newHarness(t)
	h.sync(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1), kubeletEvent(uidB, "pod.b", 1, "FailedMount", msgS1))
	// A relist: C arrives and is deleted before the list ends; B is gone; A went 1 → 3.
	c := func() *corev1.Event { return kubeletEvent(uidC, "pod.c", 1, "FailedMount", msgS1) }
	h.streamEvents(watch.Event{Type: watch.Added, Object: kubeletEvent(uidA, "pod.a", 3, "FailedMount", msgS1)},
		watch.Event{Type: watch.Added, Object: c()}, watch.Event{Type: watch.Deleted, Object: c()})
	if got := h.e.Tracked(); got != 1 {
		t.Fatalf("tracked %d after the relist, want 1 (A; B gone, C deleted before the list ended)", got)
	}
	h.expect("configmap_not_found", 3) // A's 2 since, C's 1 (created in the gap)
	// A streamed list breaks off after D (its bookmark never comes), another begins and has A only.
	d := kubeletEvent(uidD, "pod.d", 1, "FailedMount", msgS1)
	fw := watch.NewFakeWithChanSize(1, false)
	fw.Add(d)
	w := h.src.stream(fw, true, nil)
	<-w.ResultChan()
	w.Stop()
	h.streamList(kubeletEvent(uidA, "pod.a", 3, "FailedMount", msgS1))
	if got := h.e.Tracked(); got != 1 {
		t.Fatalf("tracked %d, want 1: D, read only by the broken stream, is gone", got)
	}
	// Broken again after E; then a paged LIST (the reflector's fallback) without E.
	fw = watch.NewFakeWithChanSize(1, false)
	fw.Add(kubeletEvent("00000000-0000-4000-8000-00000000000e", "pod.e", 1, "FailedMount", msgS1))
	w = h.src.stream(fw, true, nil)
	<-w.ResultChan()
	w.Stop()
	h.sync(kubeletEvent(uidA, "pod.a", 3, "FailedMount", msgS1))
	if got := h.e.Tracked(); got != 1 {
		t.Fatalf("tracked %d, want 1: E, read only by the broken stream, is gone after the LIST fallback", got)
	}
	h.expect("configmap_not_found", 5) // D and E, each created in a gap
}

// The streamed path counts exactly as the listed path: baseline first, diff on relists.
func TestStreamedListIsBaselineThenDiffed(t *testing.T) {
	h := newHarness(t)
	h.streamList(kubeletEvent(uidA, "pod.1", 2, "FailedMount", msgS1), kubeletEvent(uidB, "pod.2", 1, "FailedMount", msgS1))
	if got := h.occurrences("configmap_not_found"); got > 0 {
		t.Fatalf("baseline counted: %v", got)
	}
	if got := h.value("kubecause_object_events", map[string]string{"name": "mspider-mcpc-ckube-remote-0"}); got != 3 {
		t.Fatalf("object view = %v, want 3", got)
	}
	// Watch expired; while away A went 2 → 6, B expired, C was created.
	h.streamList(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1), schedulerEvent(uidC, 0))
	h.expect("configmap_not_found", 4)
	h.expect("scheduling_insufficient_resources", 1)
	if got := h.e.Tracked(); got != 2 {
		t.Fatalf("tracked = %d, want 2 (B forgotten)", got)
	}
	h.streamList(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1), schedulerEvent(uidC, 0))
	h.expect("configmap_not_found", 4)
	h.expect("scheduling_insufficient_resources", 1)
	// Invalid and unwanted Events in a streamed list are reported once and not tracked.
	noReason := kubeletEvent(uidB, "pod.3", 1, "", msgS1)
	normal := kubeletEvent(uidB, "pod.4", 1, "Pulled", "ok")
	normal.Type = corev1.EventTypeNormal
	h.streamList(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1), schedulerEvent(uidC, 0), noReason, normal)
	if got := h.value("kubecause_events_invalid_total", map[string]string{"problem": "no_reason"}); got != 1 {
		t.Fatalf("invalid{no_reason} = %v, want 1", got)
	}
	if got := h.e.Tracked(); got != 2 {
		t.Fatalf("tracked = %d, want 2", got)
	}
}

// A relist forgets exactly the Events of its source that it lacks, however many relists there
// have been (the mark of a list generation wraps after 255) and whichever way the list was read.
func TestRelistForgetsWhatItLacksAcrossManyRelists(t *testing.T) {
	h := newHarness(t)
	other := h.e.NewSource("other")
	// A streamed list empties the Event objects it reads (they become its stand-ins): a new one each time.
	keep := func() *corev1.Event { return kubeletEvent(uidA, "pod.keep", 1, "FailedMount", msgS1) }
	h.streamList(keep())
	if err := other.Replace([]interface{}{kubeletEvent(uidB, "pod.other", 1, "FailedMount", msgS1)}, "1"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i++ {
		gone := kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("pod.gone.%d", i), 1, "FailedMount", msgS1)
		h.add(gone)
		if got := h.e.Tracked(); got != 3 {
			t.Fatalf("relist %d: tracked %d before the relist, want 3", i, got)
		}
		if i%2 == 0 {
			h.streamList(keep())
		} else {
			h.sync(keep())
		}
		if got := h.e.Tracked(); got != 2 {
			t.Fatalf("relist %d: tracked %d, want 2 (the Event added since and not listed is gone; the other source's stays)", i, got)
		}
	}
	h.expect("configmap_not_found", 600)
}

// TestOnSyncedOnceEverySourceHasListed: the hook runs once, when the last source reads its first
// list; relists do not run it again.
func TestOnSyncedOnceEverySourceHasListed(t *testing.T) {
	calls := 0
	e := New(Config{Classifier: testTable{}, OnSynced: func() { calls++ }})
	warn, normal := e.NewSource("type=Warning"), e.NewSource("type=Normal,reason=BackOff")
	list := []interface{}{kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1)}
	steps := []struct {
		src  *Source
		want int
	}{{warn, 0}, {warn, 0}, {normal, 1}, {normal, 1}, {warn, 1}}
	for i, s := range steps {
		if err := s.src.Replace(list, "1"); err != nil {
			t.Fatal(err)
		}
		if calls != s.want {
			t.Fatalf("after list %d (%s): OnSynced ran %d times, want %d", i+1, s.src.name, calls, s.want)
		}
	}
}

// TestStreamedListAfterManyBrokenAttempts: the generations of streamed lists come round again
// after 254; past maxAttempts broken attempts the marks they left are cleared, so an Event read
// only by a broken attempt is still forgotten by the list that ends.
func TestStreamedListAfterManyBrokenAttempts(t *testing.T) {
	h := newHarness(t)
	keep := func() *corev1.Event { return kubeletEvent(uidA, "pod.keep", 1, "FailedMount", msgS1) }
	h.streamList(keep())
	for i := range 3*maxAttempts + 7 {
		fw := watch.NewFakeWithChanSize(1, false)
		fw.Add(kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("pod.broken.%d", i), 1, "FailedMount", msgS1))
		w := h.src.stream(fw, true, nil)
		<-w.ResultChan()
		w.Stop()
	}
	if got := h.e.Tracked(); got != 3*maxAttempts+8 {
		t.Fatalf("tracked %d while the lists broke off, want %d", got, 3*maxAttempts+8)
	}
	h.streamList(keep())
	if got := h.e.Tracked(); got != 1 {
		t.Fatalf("tracked %d after the list that ended, want 1: the Events read only by broken attempts are gone", got)
	}
}

func TestEventsPresentAtStartAreBaseline(t *testing.T) {
	h := newHarness(t)
	h.sync(kubeletEvent(uidA, "pod.1", 40, "FailedMount", msgS1), schedulerEvent(uidB, 12))
	if got := h.occurrences("configmap_not_found"); got > 0 {
		t.Fatalf("baseline counted: %v", got)
	}
	if got := h.value("kubecause_objects_affected_total", nil); got > 0 {
		t.Fatalf("baseline counted as newly affected: %v", got)
	}
	// Live problems present at start are still shown per object.
	if got := h.value("kubecause_object_events", map[string]string{"name": "mspider-mcpc-ckube-remote-0"}); got != 40 {
		t.Fatalf("object view = %v, want 40", got)
	}
	h.update(kubeletEvent(uidA, "pod.1", 43, "FailedMount", msgS1))
	h.update(schedulerEvent(uidB, 13))
	h.expect("configmap_not_found", 3)
	h.expect("scheduling_insufficient_resources", 1)
}

func TestRestartDoesNotJump(t *testing.T) {
	first := newHarness(t)
	first.sync()
	first.add(kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1))
	first.update(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1))
	first.expect("configmap_not_found", 6)
	// A new process sees the same Event in its first list: no occurrence, whatever its count.
	second := newHarness(t)
	second.sync(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1))
	if got := second.occurrences("configmap_not_found"); got > 0 {
		t.Fatalf("restart replayed history: %v", got)
	}
	second.update(kubeletEvent(uidA, "pod.1", 7, "FailedMount", msgS1))
	second.expect("configmap_not_found", 1)
}

func TestRelistDiffsAgainstRememberedState(t *testing.T) {
	h := newHarness(t)
	h.sync(kubeletEvent(uidA, "pod.1", 2, "FailedMount", msgS1), kubeletEvent(uidB, "pod.2", 1, "FailedMount", msgS1))
	// Watch expired; while away A went 2 → 6, B expired, C was created.
	h.sync(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1), schedulerEvent(uidC, 0))
	h.expect("configmap_not_found", 4)
	h.expect("scheduling_insufficient_resources", 1)
	if got := h.value("kubecause_relists_total", nil); got != 1 {
		t.Fatalf("relists = %v", got)
	}
	if got := h.e.Tracked(); got != 2 {
		t.Fatalf("tracked = %d, want 2 (B forgotten)", got)
	}
	// The same list again (apiserver restart, nothing changed): nothing counted twice.
	h.sync(kubeletEvent(uidA, "pod.1", 6, "FailedMount", msgS1), schedulerEvent(uidC, 0))
	h.expect("configmap_not_found", 4)
	h.expect("scheduling_insufficient_resources", 1)
}

// TestRelistCountsEventsCreatedInTheGap: the watch is cut (410 Gone, apiserver restart) and the
// kubelet goes on writing. At the relist, an Event created in the gap adds all the occurrences it
// carries; an expired Event re-created in the gap with its old count (first occurrence before the
// gap, predecessor not seen) adds one, and the rest is reported as possibly lost.
func TestRelistCountsEventsCreatedInTheGap(t *testing.T) {
	h := newHarness(t)
	h.sync()
	a := kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1)
	h.add(a)
	h.expect("configmap_not_found", 1)
	// The watch breaks at t0; the relist comes five minutes later.
	h.now = t0.Add(5 * time.Minute)
	a3 := kubeletEvent(uidA, "pod.1", 3, "FailedMount", msgS1)
	created := kubeletEvent(uidB, "pod.2", 4, "FailedMount", msgS1) // first at t0+2m, repeated 3 times since
	created.FirstTimestamp = metav1.NewTime(t0.Add(2 * time.Minute))
	created.LastTimestamp = metav1.NewTime(t0.Add(4 * time.Minute))
	recreated := kubeletEvent(uidC, "pod.3", 5, "FailedMount", msgS1) // first occurrence 30 min before
	recreated.FirstTimestamp = metav1.NewTime(t0.Add(-30 * time.Minute))
	recreated.LastTimestamp = metav1.NewTime(t0.Add(3 * time.Minute))
	h.sync(a3, created, recreated)
	// 1 + (3-1) + 4 + 1
	h.expect("configmap_not_found", 8)
	if got := h.value("kubecause_events_possibly_lost_total", nil); got != 4 {
		t.Fatalf("kubecause_events_possibly_lost_total = %v, want 4 (the re-created Event's count beyond the one counted)", got)
	}
	// The same list again: nothing counted twice, nothing more lost.
	h.now = h.now.Add(time.Minute)
	h.sync(a3, created, recreated)
	h.expect("configmap_not_found", 8)
	if got := h.value("kubecause_events_possibly_lost_total", nil); got != 4 {
		t.Fatalf("possibly lost after an unchanged relist = %v, want 4", got)
	}
	// The watch is cut again and resumes from its resource version (an apiserver restart that kept
	// etcd): the Event created in the gap arrives as an ADD and adds its whole count.
	h.now = h.now.Add(3 * time.Minute)
	inGap := kubeletEvent("3c4d5e6f-7081-4cad-9e2f-a3b4c5d6e7f8", "pod.4", 3, "FailedMount", msgS1)
	inGap.FirstTimestamp = metav1.NewTime(h.now.Add(-time.Minute))
	h.add(inGap)
	h.expect("configmap_not_found", 11)
}
