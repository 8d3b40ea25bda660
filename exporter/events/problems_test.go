package events

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Problems is the per-object view as the scrape shows it: one entry per object, reason and cause,
// with its live Events, their occurrences and the newest one; an entry leaves with its last Event.
func TestProblemsSnapshot(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.now = t0.Add(2 * time.Minute)
	if got := h.e.Problems(); len(got) != 0 {
		t.Fatalf("empty view: %v", got)
	}
	a := kubeletEvent(uidA, "mspider-mcpc-ckube-remote-0.17a", 1, "FailedMount", msgS1)
	b := kubeletEvent(uidB, "mspider-mcpc-ckube-remote-0.17b", 1, "FailedMount", msgS1)
	b.LastTimestamp.Time = t0.Add(time.Minute)
	h.add(a)
	h.add(b)
	b = b.DeepCopy()
	b.Count = 4
	h.update(b)
	got := h.e.Problems()
	want := Problem{Namespace: "istio-system", Kind: "Pod", Name: "mspider-mcpc-ckube-remote-0", Node: "node-1", Reason: "FailedMount",
		Cause: "configmap_not_found", Events: 2, Occurrences: 5, LastSeen: t0.Add(time.Minute)}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("Problems() = %+v, want [%+v]", got, want)
	}
	if v := h.value(viewEventsName, map[string]string{"name": want.Name}); v != float64(want.Occurrences) {
		t.Errorf("the scrape shows %v occurrences, Problems %d", v, want.Occurrences)
	}
	for _, ev := range []any{a, b} {
		if err := h.src.Delete(ev); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.e.Problems(); len(got) != 0 {
		t.Errorf("after the Events expired: %+v", got)
	}
	// The scheduler names no node; a Node's problem is on the Node itself.
	h.add(schedulerEvent(uidC, 0))
	node := kubeletEvent(uidD, "kubecause-node.17d", 1, "NodeNotReady", "Node kubecause-node status is now: NodeNotReady")
	node.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "kubecause-node"}
	node.Source = corev1.EventSource{Component: "node-controller"}
	h.add(node)
	nodes := map[string]string{}
	for _, p := range h.e.Problems() {
		nodes[p.Kind+"/"+p.Name] = p.Node
	}
	if want := map[string]string{"Pod/etcd-0": "", "Node/kubecause-node": "kubecause-node"}; !maps.Equal(nodes, want) {
		t.Errorf("nodes %v, want %v", nodes, want)
	}
}

// BenchmarkProblems copies a full default-capped view (10,000 entries), under the engine's lock.
func BenchmarkProblems(b *testing.B) {
	h := newHarness(&testing.T{})
	h.sync()
	for _, ev := range viewEvents(10000) {
		if err := h.src.Add(ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(h.e.Problems()); n != 10000 {
			b.Fatalf("%d entries", n)
		}
	}
}
