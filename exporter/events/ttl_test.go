package events

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGapEstimateLearnsAShortTTL: on an apiserver with --event-ttl=20s, Events expire 20 s after
// their last occurrence. kubecause sees them deleted at that age, and a gap of 2 min loses the
// Events created in its first 100 s: the estimate is the rate before the gap × (gap − 20 s). (The
// TTL could only be raised from one hour: the estimate was 0.)
func TestGapEstimateLearnsAShortTTL(t *testing.T) {
	const ttl = 20
	h := newHarness(t)
	h.sync()
	var live []*corev1.Event
	emit := func(i int) {
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod.%d", i), 1, "FailedMount", msgS1)
		ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(h.now), metav1.NewTime(h.now)
		h.add(ev)
		live = append(live, ev)
	}
	// One new Event a second for a minute; each expires 20 s after it was written.
	for i := 1; i <= 60; i++ {
		h.now = t0.Add(time.Duration(i) * time.Second)
		emit(i)
		for len(live) > 0 && h.now.Sub(live[0].LastTimestamp.Time) >= ttl*time.Second {
			if err := h.src.Delete(live[0]); err != nil {
				t.Fatal(err)
			}
			live = live[1:]
		}
	}
	// Cut for 2 min: the Events of the gap's last 20 s are in the relist, the rest expired unseen.
	gapStart := h.now
	h.now = gapStart.Add(2 * time.Minute)
	var listed []interface{}
	for s := h.now.Add(-(ttl - 1) * time.Second); !s.After(h.now); s = s.Add(time.Second) {
		ev := kubeletEvent(uid(int(s.Unix())), fmt.Sprintf("gap.%d", s.Unix()), 1, "FailedMount", msgS1)
		ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(s), metav1.NewTime(s)
		listed = append(listed, ev)
	}
	h.sync(listed...)
	// 60 Events in the 60 s watched (the first list at t0, the last contact at t0+60 s).
	if got, want := h.value("kubecause_events_gap_estimated_lost_total", nil), 1.0*(120-ttl); got != want {
		t.Fatalf("estimate after a 2 min gap with a 20 s TTL = %v, want %v (1 Event/s × (120 s − 20 s))", got, want)
	}
}

// TestGapEstimateWithLateNotifications: a watch paused (or starved) at 60 s delivers what its
// connection held only when it resumes, 2 min later — two new Events written at 61 s and 62 s,
// and the deletion of two that expired at 20 s — and then relists (410 Gone). The gap began with
// the last write the watch delivered (62 s), not when the late notifications arrived: measured
// from their arrival it was 1 s and the estimate 0.
func TestGapEstimateWithLateNotifications(t *testing.T) {
	const ttl = 20
	h := newHarness(t)
	h.sync()
	var live []*corev1.Event
	write := func(i int) *corev1.Event {
		at := t0.Add(time.Duration(i) * time.Second)
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod.%d", i), 1, "FailedMount", msgS1)
		ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(at), metav1.NewTime(at)
		return ev
	}
	expire := func() {
		for len(live) > 0 && h.now.Sub(live[0].LastTimestamp.Time) >= ttl*time.Second {
			if err := h.src.Delete(live[0]); err != nil {
				t.Fatal(err)
			}
			live = live[1:]
		}
	}
	for i := 1; i <= 60; i++ { // one new Event a second, each expiring 20 s after it was written
		h.now = t0.Add(time.Duration(i) * time.Second)
		ev := write(i)
		h.add(ev)
		live = append(live, ev)
		expire()
	}
	// Resumed at 180 s: the held notifications arrive.
	h.now = t0.Add(180 * time.Second)
	for i := 61; i <= 62; i++ {
		ev := write(i)
		h.add(ev)
		live = append(live, ev)
	}
	for _, ev := range live[:2] {
		if err := h.src.Delete(ev); err != nil {
			t.Fatal(err)
		}
	}
	// The relist at 181 s finds the Events of the last 20 s.
	h.now = t0.Add(181 * time.Second)
	var listed []interface{}
	for i := 162; i <= 181; i++ {
		listed = append(listed, write(i))
	}
	h.sync(listed...)
	// 62 new Events in the 62 s watched; the gap from 62 s to 181 s, less the TTL.
	if got, want := h.value("kubecause_events_gap_estimated_lost_total", nil), 1.0*(181-62-ttl); got != want {
		t.Fatalf("estimate = %v, want %v (1 Event/s × (181 s − 62 s − 20 s))", got, want)
	}
}

// TestTTLIsTheTypicalAgeAtDeletion: the TTL is the apiserver's default, or the age of the oldest
// Event seen alive in a list, until 10 Events were seen deleted; then the 10th percentile of their
// ages at deletion. Events deleted by hand (younger) and Events whose etcd lease was renewed by a
// restart (older, and seen older alive in a relist) do not move it.
func TestTTLIsTheTypicalAgeAtDeletion(t *testing.T) {
	h := newHarness(t)
	if got := h.e.ttl.eventTTL(); got != 3600 {
		t.Fatalf("TTL before anything was seen = %d, want the default 3600", got)
	}
	aged := kubeletEvent(uid(1), "pod.1", 1, "FailedMount", msgS1)
	aged.LastTimestamp = metav1.NewTime(t0.Add(-2 * time.Hour))
	h.sync(aged)
	if got := h.e.ttl.eventTTL(); got != 7200 {
		t.Fatalf("TTL after a list showed an Event 2 h old = %d, want 7200", got)
	}
	// Events written at t0 and deleted at age: 20 expire at 5 min, 2 are deleted by hand at
	// 10 s, 6 live to 700 s (their lease renewed when etcd restarted).
	i := 10
	deleteAt := func(age time.Duration, n int) {
		for range n {
			i++
			ev := kubeletEvent(uid(i), fmt.Sprintf("pod.%d", i), 1, "FailedMount", msgS1)
			ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(t0), metav1.NewTime(t0)
			h.now = t0
			h.add(ev)
			h.now = t0.Add(age)
			if err := h.src.Delete(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	deleteAt(10*time.Second, 2)
	deleteAt(5*time.Minute, 7)
	if got := h.e.ttl.eventTTL(); got != 7200 {
		t.Fatalf("TTL after 9 deletions = %d, want still 7200 (too few to tell)", got)
	}
	deleteAt(5*time.Minute, 13)
	deleteAt(700*time.Second, 6)
	if got := h.e.ttl.eventTTL(); got != 300 {
		t.Fatalf("TTL after 20 expiries at 5 min, 2 hand deletions at 10 s and 6 renewed leases at 700 s = %d, want 300", got)
	}
	alive := kubeletEvent(uid(99), "pod.99", 1, "FailedMount", msgS1)
	alive.LastTimestamp = metav1.NewTime(h.now.Add(-11 * time.Minute))
	h.sync(alive)
	if got := h.e.ttl.eventTTL(); got != 300 {
		t.Fatalf("TTL after a relist showed an Event 11 min old (a renewed lease) = %d, want 300", got)
	}
}

// TestNamespaceDeletionsDoNotTeachTheTTL: issue 42's CI cluster, on the default 1 h TTL. The first
// list shows Events alive up to 38 min old; then 30 preview namespaces each get 20 Events and are
// deleted 15 s later, their Events with them (600 deletions at 15 s, none an expiry). Taken as
// expiries they made the TTL 15 s: a 98 s watch cut that lost nothing was estimated to have lost
// Events, and a restart 75 s later dropped its snapshot as too old.
func TestNamespaceDeletionsDoNotTeachTheTTL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	h := newHarness(t)
	inNamespace := func(i int, ns string, at time.Time) *corev1.Event {
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod.%d", i), 1, "FailedMount", msgS1)
		ev.Namespace, ev.InvolvedObject.Namespace = ns, ns
		ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(at), metav1.NewTime(at)
		return ev
	}
	var live []interface{}
	for m := 0; m <= 38; m++ {
		live = append(live, inNamespace(100000+m, "shop", t0.Add(-time.Duration(m)*time.Minute)))
	}
	h.sync(live...)
	snaps := OpenSnapshots(h.e, path, testIdentity, time.Minute, nil)
	i := 0
	for ns := range 30 {
		start := t0.Add(time.Duration(ns) * 20 * time.Second)
		var evs []*corev1.Event
		for range 20 {
			i++
			h.now = start
			ev := inNamespace(i, fmt.Sprintf("preview-%d", ns), start)
			h.add(ev)
			evs = append(evs, ev)
		}
		h.now = start.Add(15 * time.Second) // kubectl delete namespace preview-<ns>
		for _, ev := range evs {
			if err := h.src.Delete(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := h.e.ttl.eventTTL(); got < 38*60 {
		t.Errorf("TTL learnt = %d s, below the 38 min at which Events were seen alive", got)
	}
	// Restart 75 s after the snapshot: restored.
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	back, _ := restarted(t, path, testIdentity, h.now.Add(75*time.Second))
	if got := back.restores(RestoreRestored); got != 1 {
		t.Errorf("restores{result=restored} = %v, too_old = %v; want the 75 s old snapshot restored", got, back.restores(RestoreTooOld))
	}
	// A 98 s watch cut: the relist shows every Event alive, nothing expired unseen.
	h.now = h.now.Add(98 * time.Second)
	h.sync(live...)
	if got := h.value("kubecause_events_gap_estimated_lost_total", nil); got != 0 {
		t.Errorf("estimated lost after a 98 s cut on a 1 h TTL = %v, want 0", got)
	}
}

// TestGapEstimate: Events created and expired inside a watch gap leave nothing to count; their
// occurrences are estimated from the rate of new Events before the gap and the part of the gap
// longer than the Event TTL, learnt from the ages of the Events seen deleted.
func TestGapEstimate(t *testing.T) {
	h := newHarness(t)
	var old []interface{}
	for i := 100; i < 110; i++ {
		ev := kubeletEvent(uid(i), fmt.Sprintf("old.%d", i), 2, "FailedMount", msgS1)
		ev.LastTimestamp = metav1.NewTime(t0.Add(-90 * time.Minute))
		old = append(old, ev)
	}
	h.sync(old...)
	live := []interface{}{}
	for i := 1; i <= 10; i++ { // 10 new Events in 100 s
		h.now = t0.Add(time.Duration(i) * 10 * time.Second)
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod.%d", i), 1, "FailedMount", msgS1)
		ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(h.now), metav1.NewTime(h.now)
		h.add(ev)
		live = append(live, ev)
	}
	// The oldest Events expire: 90 min after their last occurrence plus the 100 s: the TTL.
	for _, ev := range old {
		if err := h.src.Delete(ev); err != nil {
			t.Fatal(err)
		}
	}
	estimate := func() float64 { return h.value("kubecause_events_gap_estimated_lost_total", nil) }
	// A gap shorter than the TTL: whatever was created in it is still there, nothing estimated.
	h.now = h.now.Add(30 * time.Minute)
	h.sync(live...)
	if got := estimate(); got != 0 {
		t.Fatalf("estimate after a gap shorter than the TTL = %v, want 0", got)
	}
	// The watch runs 100 s more with 10 new Events, then is cut for 3 h: the Events created in
	// its first 3 h − TTL expired before the relist, at 0.1 per second.
	for i := 11; i <= 20; i++ {
		h.now = h.now.Add(10 * time.Second)
		ev := kubeletEvent(uid(i), fmt.Sprintf("pod.%d", i), 1, "FailedMount", msgS1)
		ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(h.now), metav1.NewTime(h.now)
		h.add(ev)
	}
	ttl := 90*60 + 100
	h.now = h.now.Add(3 * time.Hour)
	h.sync()
	if got, want := estimate(), 0.1*float64(3*3600-ttl); got != want {
		t.Fatalf("estimate after a 3 h gap = %v, want %v (0.1 Events/s × (3 h − TTL %d s))", got, want, ttl)
	}
}
