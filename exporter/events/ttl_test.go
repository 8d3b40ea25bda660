package events

import (
	"fmt"
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

// A hand deletion of a young Event does not lower the TTL below the age of an Event seen expired,
// and an Event seen alive in a list at an age above it raises it.
func TestTTLIsTheOldestAgeSeen(t *testing.T) {
	h := newHarness(t)
	old := kubeletEvent(uidA, "pod.0", 1, "FailedMount", msgS1)
	old.LastTimestamp = metav1.NewTime(t0.Add(-5 * time.Minute))
	h.sync(old)
	if got := h.e.eventTTL(); got != 3600 {
		t.Fatalf("TTL before any deletion = %d, want the default 3600", got)
	}
	if err := h.src.Delete(old); err != nil { // expired at 5 min
		t.Fatal(err)
	}
	young := kubeletEvent(uidB, "pod.1", 1, "FailedMount", msgS1)
	young.LastTimestamp = metav1.NewTime(t0)
	h.add(young)
	h.now = t0.Add(10 * time.Second)
	if err := h.src.Delete(young); err != nil { // deleted by hand at 10 s
		t.Fatal(err)
	}
	if got := h.e.eventTTL(); got != 300 {
		t.Fatalf("TTL after an Event expired at 5 min and one deleted at 10 s = %d, want 300", got)
	}
	alive := kubeletEvent(uid(9), "pod.9", 1, "FailedMount", msgS1)
	alive.LastTimestamp = metav1.NewTime(h.now.Add(-7 * time.Minute))
	h.sync(alive)
	if got := h.e.eventTTL(); got != 420 {
		t.Fatalf("TTL after a relist showed an Event 7 min old = %d, want 420", got)
	}
}
