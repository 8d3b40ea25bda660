package events

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// nsPodEvent is a kubelet FailedMount Event of pod ns/pod.
func nsPodEvent(i int, ns, pod string) *corev1.Event {
	ev := kubeletEvent(uid(i), fmt.Sprintf("%s.%d", pod, i), 1, "FailedMount", msgS1)
	ev.Namespace, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = ns, ns, pod
	return ev
}

// TestFloodLeavesOtherNamespacesVisible: issue 42. One user's two namespaces write 10,000 Warning
// Events about 10,000 pods and fill the view (the default cap); then a pod of another namespace
// fails to mount. Its problem must be in the view — kubecause_object_events (what alerts read),
// Problems (/problems) — and count in kubecause_objects_affected_total (the pod-start SLI), while
// the flood goes on. Before, it was counted in kubecause_events_total only: the view refused every
// new entry and none of the flood's ever yielded.
func TestFloodLeavesOtherNamespacesVisible(t *testing.T) {
	h := newHarness(t)
	h.sync()
	const flood = 10000
	i := 0
	for ; i < flood; i++ {
		h.add(nsPodEvent(i, fmt.Sprintf("tenant-%d", i%2), fmt.Sprintf("job-%d", i)))
	}
	if got := h.value("kubecause_series", map[string]string{"metric": "kubecause_object_events"}); got != flood {
		t.Fatalf("view holds %v entries after the flood, want the cap %d", got, flood)
	}
	h.add(nsPodEvent(1<<20, "shop", "web-0"))
	// The flood goes on: its new entries take nothing from shop.
	for ; i < flood+500; i++ {
		h.add(nsPodEvent(i, fmt.Sprintf("tenant-%d", i%2), fmt.Sprintf("job-%d", i)))
	}
	web := map[string]string{"namespace": "shop", "name": "web-0", "cause": "configmap_not_found"}
	if got := h.value("kubecause_object_events", web); got != 1 {
		t.Errorf("kubecause_object_events{namespace=shop,name=web-0} = %v, want 1", got)
	}
	found := false
	for _, p := range h.e.Problems() {
		found = found || p.Namespace == "shop" && p.Name == "web-0"
	}
	if !found {
		t.Error("shop/web-0 is not among the live problems (/problems)")
	}
	if got := h.value("kubecause_objects_affected_total", map[string]string{"namespace": "shop"}); got != 1 {
		t.Errorf("kubecause_objects_affected_total{namespace=shop} = %v, want 1", got)
	}
	if got := h.value("kubecause_series", map[string]string{"metric": "kubecause_object_events"}); got != flood {
		t.Errorf("view holds %v entries, want the cap %d", got, flood)
	}
	if got := h.value("kubecause_object_events_evicted_total", nil); got != 1 {
		t.Errorf("kubecause_object_events_evicted_total = %v, want 1 (the flood's entry that made room for shop's)", got)
	}
	if got := h.value("kubecause_series_dropped_total", map[string]string{"metric": "kubecause_object_events"}); got != 500 {
		t.Errorf("kubecause_series_dropped_total{metric=kubecause_object_events} = %v, want 500 (the flood's Events after the cap)", got)
	}
	checkView(t, h.e)
}

// TestViewEvictionKeepsItsAccounts: many namespaces of every size against a small cap, Events
// appearing, repeating, moving to another cause and expiring in a random order, entries evicted
// and their Events coming back: after each step every live Event is counted in exactly one entry
// (or is a ghost of an evicted one, or refused), the entries' counts add up, and the namespaces'
// lists and sizes are those of the entries.
func TestViewEvictionKeepsItsAccounts(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxObjectSeries = 12 })
	h.sync()
	r := rand.New(rand.NewPCG(42, 42))
	live := map[int]*corev1.Event{}
	evictions := 0.0
	for step := range 20000 {
		i := r.IntN(200)
		ev := live[i]
		switch {
		case ev == nil:
			// Namespace ns-0 writes about half of the Events, ns-1 a quarter, …
			ns := 0
			for ns < 6 && r.IntN(2) == 0 {
				ns++
			}
			ev = nsPodEvent(step, fmt.Sprintf("ns-%d", ns), fmt.Sprintf("pod-%d", r.IntN(8)))
			live[i] = ev
			h.add(ev)
		case r.IntN(3) == 0:
			if err := h.src.Delete(ev); err != nil {
				t.Fatal(err)
			}
			delete(live, i)
		default:
			ev = ev.DeepCopy()
			ev.Count++
			if r.IntN(4) == 0 {
				ev.Message = msgDisk // another cause: another entry
				ev.Reason = "FailedCreatePodSandBox"
			}
			live[i] = ev
			h.update(ev)
		}
		checkView(t, h.e)
		if t.Failed() {
			t.Fatalf("at step %d", step)
		}
	}
	evictions = h.value("kubecause_object_events_evicted_total", nil)
	if evictions == 0 {
		t.Fatal("no entry was evicted: the test proves nothing")
	}
	t.Logf("%v evictions", evictions)
}

// checkView checks the view's accounts against the engine's live Events.
func checkView(t *testing.T, e *Engine) {
	t.Helper()
	v := e.view
	events := make([]int32, len(v.entries))
	ghosts := make([]int32, len(v.entries))
	occ := make([]int64, len(v.entries))
	e.events.each(func(_ uidKey, tr tracked) bool {
		if tr.view >= 0 {
			if v.live(tr.view, tr.vgen) {
				events[tr.view]++
				occ[tr.view] += int64(tr.count)
			} else {
				ghosts[tr.view]++
			}
		}
		return true
	})
	perNS := map[string]int32{}
	for i := range v.entries {
		en := &v.entries[i]
		if en.events != events[i] || en.occ != occ[i] || en.ghosts != ghosts[i] {
			t.Errorf("slot %d: events %d occ %d ghosts %d, its Events say %d, %d, %d", i, en.events, en.occ, en.ghosts, events[i], occ[i], ghosts[i])
		}
		if en.events > 0 {
			perNS[en.key.namespace]++
			if j, ok := v.idx[en.key]; !ok || j != int32(i) {
				t.Errorf("slot %d not indexed", i)
			}
		}
	}
	if len(v.idx) > v.max {
		t.Errorf("%d entries, cap %d", len(v.idx), v.max)
	}
	var largest int32
	for ns, n := range perNS {
		largest = max(largest, n)
		u := v.ns[ns]
		if u == nil || u.n != n {
			t.Errorf("namespace %s: %d entries, the view counts %v", ns, n, u)
			continue
		}
		seen := int32(0)
		for j, prev := u.lru, int32(noEntry); j != noEntry; prev, j = j, v.entries[j].newer {
			if v.entries[j].key.namespace != ns || v.entries[j].older != prev {
				t.Errorf("namespace %s: list broken at slot %d", ns, j)
				break
			}
			seen++
		}
		if seen != n {
			t.Errorf("namespace %s: %d entries listed, %d in the view", ns, seen, n)
		}
		found := false
		for w := v.byCount[n]; w != nil; w = w.next {
			found = found || w == u
		}
		if !found {
			t.Errorf("namespace %s not among those with %d entries", ns, n)
		}
	}
	if len(v.ns) != len(perNS) || v.largest != largest {
		t.Errorf("view has %d namespaces, largest %d; its entries have %d, largest %d", len(v.ns), v.largest, len(perNS), largest)
	}
}
