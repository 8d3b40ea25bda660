package events

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/labels"

	"github.com/kubecause/kubecause/exporter/causes/corpus"
)

// realMessage is the message of the e2e real node (exporter/causes/testdata/real-node.yaml) that
// begins with prefix, byte for byte.
func realMessage(t *testing.T, prefix string) string {
	t.Helper()
	rn, err := corpus.LoadRealNode(filepath.Join("..", "causes", "testdata", "real-node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rn.Messages {
		if strings.HasPrefix(m.Message, prefix) {
			return m.Message
		}
	}
	t.Fatalf("no real-node message begins with %q", prefix)
	return ""
}

func podEvent(uid, pod, reason, message, host string) *corev1.Event {
	ev := kubeletEvent(uid, pod+".1", 1, reason, message)
	ev.InvolvedObject.Name = pod
	ev.Source.Host = host
	return ev
}

// The per-object view names each entry's target: the registry, the CNI plugin, the node; the
// series of the same object and cause with another target is another series.
func TestViewTarget(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Classifier = causes.Default() })
	h.sync()
	h.add(podEvent(uidA, "web-1", "Failed", realMessage(t, `Failed to pull image "127.0.0.1:34885/`), "node-1"))
	h.add(podEvent(uidB, "web-2", "FailedCreatePodSandBox", realMessage(t, `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "2ff8ac86`), "node-2"))
	nodeEv := kubeletEvent(uidC, "kubecause-node.1", 1, "NodeNotReady", realMessage(t, "Node kubecause-node status is now: NodeNotReady"))
	nodeEv.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "kubecause-node"}
	nodeEv.Source = corev1.EventSource{Component: "node-controller"} // no host: the Node is the target
	h.add(nodeEv)
	h.add(podEvent(uidD, "cfg-1", "FailedMount", msgS1, "node-1"))
	for _, c := range []struct{ name, cause, target string }{
		{"web-1", "image_auth_failed", "127.0.0.1:34885"},
		{"web-2", "cni_error", "bridge"},
		{"kubecause-node", "node_not_ready", "kubecause-node"},
		{"cfg-1", "configmap_not_found", ""},
	} {
		if v := h.value(viewEventsName, map[string]string{"name": c.name, "cause": c.cause, "target": c.target}); v != 1 {
			t.Errorf("kubecause_object_events{name=%q,cause=%q,target=%q} = %v, want 1", c.name, c.cause, c.target, v)
		}
	}
	ps := h.e.Problems()
	got := map[string]string{}
	for _, p := range ps {
		got[p.Name] = p.Target
	}
	if got["web-1"] != "127.0.0.1:34885" || got["web-2"] != "bridge" || got["kubecause-node"] != "kubecause-node" {
		t.Errorf("Problems targets %v", got)
	}
}

// Distinct targets are capped: past --object-view.max-targets an entry gets target="_overflow",
// each such live Event is counted once in kubecause_series_dropped_total, and once a target
// leaves the view the next one takes its place.
func TestViewTargetCap(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxTargets = 2 })
	h.sync()
	disk := "no space left on device"
	evs := []*corev1.Event{
		podEvent(uidA, "a", "FailedCreatePodSandBox", disk, "node-a"),
		podEvent(uidB, "b", "FailedCreatePodSandBox", disk, "node-b"),
		podEvent(uidC, "c", "FailedCreatePodSandBox", disk, "node-c"),
	}
	for _, ev := range evs {
		h.add(ev)
	}
	dropped := map[string]string{"metric": "kubecause_object_events_target"}
	if v := h.value(viewEventsName, map[string]string{"name": "c", "target": "_overflow"}); v != 1 {
		t.Fatalf("third target: kubecause_object_events{name=c,target=_overflow} = %v, want 1", v)
	}
	if v := h.value("kubecause_series_dropped_total", dropped); v != 1 {
		t.Errorf("dropped = %v, want 1", v)
	}
	if v := h.value("kubecause_series", dropped); v != 2 {
		t.Errorf("kubecause_series{metric=kubecause_object_events_target} = %v, want 2", v)
	}
	// An update of the overflowed Event is not counted again, and its entry stays.
	evs[2] = evs[2].DeepCopy()
	evs[2].Count = 2
	h.update(evs[2])
	if v := h.value("kubecause_series_dropped_total", dropped); v != 1 {
		t.Errorf("after an update: dropped = %v, want 1", v)
	}
	if v := h.value(viewEventsName, map[string]string{"name": "c", "target": "_overflow"}); v != 2 {
		t.Errorf("after an update: kubecause_object_events{name=c,target=_overflow} = %v, want 2", v)
	}
	// node-a's only Event expires: node-c takes its place at its next update.
	if err := h.src.Delete(evs[0]); err != nil {
		t.Fatal(err)
	}
	evs[2] = evs[2].DeepCopy()
	evs[2].Count = 3
	h.update(evs[2])
	if v := h.value(viewEventsName, map[string]string{"name": "c", "target": "node-c"}); v != 3 {
		t.Errorf("after room was made: kubecause_object_events{name=c,target=node-c} = %v, want 3", v)
	}
	if v := h.value(viewEventsName, map[string]string{"target": "_overflow"}); v != -1 {
		t.Errorf("the overflow series is still there (%v)", v)
	}
	if v := h.value("kubecause_series", dropped); v != 2 {
		t.Errorf("kubecause_series{metric=kubecause_object_events_target} = %v, want 2", v)
	}
	// Three objects began to show disk_full; c changing its target is no new one.
	if v := h.value("kubecause_objects_affected_total", map[string]string{"cause": "disk_full"}); v != 3 {
		t.Errorf("kubecause_objects_affected_total{cause=disk_full} = %v, want 3", v)
	}
}

// A target is a label value like any other: valid UTF-8, at most labels.MaxBytes, and never the
// message it was read from.
func TestViewTargetSanitised(t *testing.T) {
	h := newHarness(t)
	h.sync()
	host := strings.Repeat("n", 200) + "\xff"
	h.add(podEvent(uidA, "a", "FailedCreatePodSandBox", "no space left on device", host))
	ps := h.e.Problems()
	if len(ps) != 1 {
		t.Fatalf("%d problems", len(ps))
	}
	if got := ps[0].Target; got != labels.Value(host) || !utf8.ValidString(got) || len(got) > labels.MaxBytes {
		t.Errorf("target %q (%d bytes), want labels.Value of the host", got, len(got))
	}
	h.scrape() // parses
}

// The memo keeps a copy of a target read from a message, not the message.
func TestTargetNotSharingMessage(t *testing.T) {
	e := New(Config{Classifier: causes.Default()})
	msg := realMessage(t, `Failed to pull image "127.0.0.1:34885/`)
	c := e.classify("Failed", msg)
	if c.target != "127.0.0.1:34885" {
		t.Fatalf("target %q", c.target)
	}
	if strings.Contains(msg, c.target) && unsafeSameMemory(msg, c.target) {
		t.Error("the memoised target points into the message")
	}
}

// unsafeSameMemory reports whether sub's bytes lie inside s's.
func unsafeSameMemory(s, sub string) bool {
	if len(sub) == 0 {
		return false
	}
	b, p := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	return p >= b && p < b+uintptr(len(s))
}

// Targets come from messages anyone who can create a pod chooses (an image's registry; here the
// real-node message with its registry host varied): the memo's
// results stay bounded, and classification stays right after it starts over.
func TestClassifyMemoBoundedByTargets(t *testing.T) {
	e := New(Config{Classifier: causes.Default()})
	msg := realMessage(t, `Failed to pull image "127.0.0.1:34885/`)
	for i := range maxResults + 10 {
		host := fmt.Sprintf("registry-%d.example.com", i)
		c := e.classify("Failed", strings.ReplaceAll(msg, "127.0.0.1:34885", host))
		if c.cause != "image_auth_failed" || c.target != host {
			t.Fatalf("message %d: %+v, want image_auth_failed on %s", i, c, host)
		}
		if len(e.results) > maxResults || len(e.resultIdx) > maxResults {
			t.Fatalf("memo holds %d results, bound %d", len(e.results), maxResults)
		}
	}
}
