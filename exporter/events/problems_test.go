package events

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/exporter/causes"
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

// controllerEvent is a core/v1 Event as a kube-controller-manager controller writes it: about the
// controller's own object (not a pod), source component only, no host.
func controllerEvent(uid, kind, name, component, reason, message string) *corev1.Event {
	ts := metav1.NewTime(t0)
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + ".18" + uid[:8], Namespace: "shop", UID: types.UID(uid)},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "shop", Name: name},
		Reason:         reason,
		Message:        message,
		Source:         corev1.EventSource{Component: component},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
		Type:           corev1.EventTypeWarning,
	}
}

// The workload controllers' Warning Events (issue 25) go through the engine like a pod's: the
// default type=Warning watch sees them, nothing drops them for their involved object's kind, the
// built-in table names their cause, and the per-object view (/problems, kubecause_object_events)
// shows the ReplicaSet, StatefulSet, DaemonSet or Job with it. Messages from the tuning corpus.
func TestControllerEventsCountedAndShown(t *testing.T) {
	if sel := WatchSelectors("type=Warning", nil, nil); len(sel) != 1 || sel[0] != "type=Warning" {
		t.Fatalf("default watch selectors %v: the controllers' Warning Events must need no extra watch", sel)
	}
	h := newHarness(t, func(c *Config) { c.Classifier = causes.Default() })
	h.sync()
	evs := []*corev1.Event{
		controllerEvent(uidA, "ReplicaSet", "web-6597bc46dc", "replicaset-controller", "FailedCreate",
			`Error creating: pods "web-6597bc46dc-2wm8j" is forbidden: exceeded quota: namespace-quota, requested: limits.cpu=1,limits.memory=2Gi, used: limits.cpu=6,limits.memory=12Gi, limited: limits.cpu=6,limits.memory=12Gi`),
		controllerEvent(uidB, "StatefulSet", "db", "statefulset-controller", "FailedCreate",
			`create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: error looking up service account shop/db: serviceaccount "db" not found`),
		controllerEvent(uidC, "Job", "report-28901234", "job-controller", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
		controllerEvent(uidD, "DaemonSet", "node-agent", "daemonset-controller", "FailedCreate",
			`Error creating: pods "node-agent-" is forbidden: no providers available to validate pod request`),
	}
	for _, ev := range evs {
		h.add(ev)
	}
	got := map[string]string{}
	for _, p := range h.e.Problems() {
		if p.Namespace != "shop" || p.Node != "" || p.Events != 1 || p.Occurrences != 1 {
			t.Errorf("problem %+v: want namespace shop, no node, 1 Event, 1 occurrence", p)
		}
		got[p.Kind+"/"+p.Name+" "+p.Reason] = p.Cause
	}
	want := map[string]string{
		"ReplicaSet/web-6597bc46dc FailedCreate":   "quota_exceeded",
		"StatefulSet/db FailedCreate":              "service_account_missing",
		"Job/report-28901234 BackoffLimitExceeded": "job_backoff_limit_exceeded",
		"DaemonSet/node-agent FailedCreate":        "pod_security_violation",
	}
	if !maps.Equal(got, want) {
		t.Errorf("Problems() = %v, want %v", got, want)
	}
	for _, c := range []struct{ kind, cause string }{
		{"ReplicaSet", "quota_exceeded"}, {"StatefulSet", "service_account_missing"},
		{"Job", "job_backoff_limit_exceeded"}, {"DaemonSet", "pod_security_violation"},
	} {
		if v := h.value("kubecause_events_total", map[string]string{"kind": c.kind, "cause": c.cause}); v != 1 {
			t.Errorf("kubecause_events_total{kind=%q, cause=%q} = %v, want 1", c.kind, c.cause, v)
		}
		if v := h.value(viewEventsName, map[string]string{"kind": c.kind, "cause": c.cause}); v != 1 {
			t.Errorf("%s{kind=%q, cause=%q} = %v, want 1", viewEventsName, c.kind, c.cause, v)
		}
	}
}
