package events

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/kube/kubefake"
	"github.com/kubecause/kubecause/exporter/labels"
)

func TestUpdateAddsCountDelta(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.add(kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1))
	h.expect("configmap_not_found", 1)
	h.update(kubeletEvent(uidA, "pod.1", 3, "FailedMount", msgS1))
	h.expect("configmap_not_found", 3)
	// The spam filter lets a write through with the accumulated count: the jump is counted whole.
	h.update(kubeletEvent(uidA, "pod.1", 30, "FailedMount", msgS1))
	h.expect("configmap_not_found", 30)
	want := map[string]string{"namespace": "istio-system", "kind": "Pod", "reason": "FailedMount",
		"type": "Warning", "component": "kubelet", "cause": "configmap_not_found"}
	if got := h.value("kubecause_events_total", want); got != 30 {
		t.Fatalf("labels: got %v for %v", got, want)
	}
}

func TestUnchangedUpdateAddsZero(t *testing.T) {
	h := newHarness(t)
	h.sync()
	ev := kubeletEvent(uidA, "pod.1", 2, "FailedMount", msgS1)
	h.add(kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1))
	h.update(ev)
	for i := 0; i < 5; i++ { // resyncs and no-op updates (same count)
		h.update(ev)
	}
	h.expect("configmap_not_found", 2)
}

func TestNewObjectWhileWatchingCountsOneEvenWithHighCount(t *testing.T) {
	h := newHarness(t)
	h.sync()
	// The recorder re-creates an Event that expired with its accumulated count and its first
	// occurrence (an hour or more ago); kubecause did not see the predecessor, so this stands for
	// one new occurrence.
	recreated := kubeletEvent(uidA, "pod.1", 57, "FailedMount", msgS1)
	recreated.FirstTimestamp = metav1.NewTime(t0.Add(-2 * time.Hour))
	h.add(recreated)
	h.expect("configmap_not_found", 1)
	recreated = recreated.DeepCopy()
	recreated.Count = 58
	h.update(recreated)
	h.expect("configmap_not_found", 2)
}

func TestRecreatedExpiredEventCountsOnlyNewOccurrences(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.add(kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1))
	h.update(kubeletEvent(uidA, "pod.1", 5, "FailedMount", msgS1))
	if err := h.src.Delete(kubeletEvent(uidA, "pod.1", 5, "FailedMount", msgS1)); err != nil { // TTL expiry
		t.Fatal(err)
	}
	// Re-created under the same name with the accumulated count (5) plus the occurrences since (3).
	h.add(kubeletEvent(uidB, "pod.1", 8, "FailedMount", msgS1))
	h.expect("configmap_not_found", 8)
	// A re-creation carrying only the occurrence that triggered it counts one.
	if err := h.src.Delete(kubeletEvent(uidB, "pod.1", 8, "FailedMount", msgS1)); err != nil {
		t.Fatal(err)
	}
	h.add(kubeletEvent(uidC, "pod.1", 9, "FailedMount", msgS1))
	h.expect("configmap_not_found", 9)
}

func TestSchedulerSeriesAppearingCountsOne(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.add(schedulerEvent(uidA, 0))
	h.expect("scheduling_insufficient_resources", 1)
	h.now = t0.Add(2 * time.Minute)   // the series' lastObservedTime (t0+1m) is past when it is processed
	h.update(schedulerEvent(uidA, 2)) // nil → 2 is one more occurrence, not two
	h.expect("scheduling_insufficient_resources", 2)
	h.update(schedulerEvent(uidA, 9)) // series flushed in a jump
	h.expect("scheduling_insufficient_resources", 9)
	want := map[string]string{"namespace": "mesh", "kind": "Pod", "reason": "FailedScheduling",
		"component": "default-scheduler", "cause": "scheduling_insufficient_resources"}
	if got := h.value("kubecause_events_total", want); got != 9 {
		t.Fatalf("component from reportingController: got %v", got)
	}
	// eventTime and series.lastObservedTime are the event time for events.k8s.io Events.
	if got := h.value("kubecause_object_event_last_timestamp_seconds", map[string]string{"name": "etcd-0"}); got != float64(t0.Add(time.Minute).Unix()) {
		t.Fatalf("last timestamp = %v", got)
	}
}

func TestObjectViewLivesAndDiesWithTheEvent(t *testing.T) {
	h := newHarness(t)
	h.sync()
	sel := map[string]string{"namespace": "istio-system", "kind": "Pod", "name": "mspider-mcpc-ckube-remote-0",
		"reason": "FailedMount", "cause": "configmap_not_found"}
	if got := h.value("kubecause_object_events", sel); got != -1 {
		t.Fatalf("series before any event: %v", got)
	}
	// The first occurrence is visible at once: an alert on this series fires on it.
	h.add(kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1))
	if got := h.value("kubecause_object_events", sel); got != 1 {
		t.Fatalf("object view after first occurrence = %v, want 1", got)
	}
	if got := h.value("kubecause_objects_affected_total", map[string]string{"cause": "configmap_not_found"}); got != 1 {
		t.Fatalf("affected = %v", got)
	}
	// A second Event of the same pod and cause shares the series (no duplicate series).
	h.add(kubeletEvent(uidB, "pod.2", 1, "FailedMount", "(combined from similar events): "+msgS1))
	h.update(kubeletEvent(uidA, "pod.1", 4, "FailedMount", msgS1))
	if got := h.value("kubecause_object_events", sel); got != 5 {
		t.Fatalf("object view = %v, want 5", got)
	}
	if got := h.value("kubecause_objects_affected_total", map[string]string{"cause": "configmap_not_found"}); got != 1 {
		t.Fatalf("retries counted as new affected objects: %v", got)
	}
	for _, ev := range []*corev1.Event{kubeletEvent(uidA, "pod.1", 4, "FailedMount", msgS1), kubeletEvent(uidB, "pod.2", 1, "FailedMount", msgS1)} {
		if err := h.src.Delete(ev); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.value("kubecause_object_events", sel); got != -1 {
		t.Fatalf("series outlived its Events: %v", got)
	}
}

func TestCombinedEventFollowsItsLatestMessage(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.add(kubeletEvent(uidA, "pod.agg", 1, "FailedCreatePodSandBox", "(combined from similar events): Failed to create pod sandbox: something odd"))
	h.update(kubeletEvent(uidA, "pod.agg", 4, "FailedCreatePodSandBox", "(combined from similar events): Failed to create pod sandbox: mkdir /var/lib/docker/x: no space left on device"))
	h.expect("unknown", 1)
	h.expect("disk_full", 3)
	if got := h.value("kubecause_object_events", map[string]string{"cause": "unknown"}); got != -1 {
		t.Fatalf("the Event's old cause is still shown: %v", got)
	}
	if got := h.value("kubecause_object_events", map[string]string{"cause": "disk_full"}); got != 4 {
		t.Fatalf("object view = %v, want 4", got)
	}
}

func TestAggregateCapOverflowsAndCounts(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxSeries = 2; c.MaxObjectSeries = 2 })
	h.sync()
	for i := 0; i < 5; i++ {
		ev := kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("p.%d", i), 1, fmt.Sprintf("Reason%d", i), msgS1)
		ev.InvolvedObject.Name = fmt.Sprintf("pod-%d", i)
		h.add(ev)
	}
	if got := h.value("kubecause_events_total", map[string]string{"namespace": overflow, "reason": overflow}); got != 3 {
		t.Fatalf("overflow series = %v, want 3", got)
	}
	if got := h.value("kubecause_series_dropped_total", map[string]string{"metric": "kubecause_events_total"}); got != 3 {
		t.Fatalf("dropped = %v, want 3", got)
	}
	if got := h.value("kubecause_series_dropped_total", map[string]string{"metric": "kubecause_object_events"}); got != 3 {
		t.Fatalf("view dropped = %v, want 3", got)
	}
	if n := len(h.scrape()["kubecause_object_events"].GetMetric()); n != 2 {
		t.Fatalf("view series = %d, want 2", n)
	}
	if got := 0 + sumCounter(t, h.e.m.events.vec); got != 5 {
		t.Fatalf("occurrences across all series = %v, want 5 (nothing lost to the cap)", got)
	}
}

func TestInvalidInputNeverFailsAScrape(t *testing.T) {
	h := newHarness(t)
	h.sync()
	bad := kubeletEvent(uidA, "pod.bad", 1, "Failed\xff\xfeMount", strings.Repeat("x\xff", 1<<20))
	bad.InvolvedObject.Namespace = "ns-\xc3"
	bad.InvolvedObject.Name = strings.Repeat("n", 10000)
	h.add(bad)
	h.add(&corev1.Event{Reason: "X"}) // no UID
	h.add(kubeletEvent(uidB, "pod.noreason", 1, "", "x"))
	if err := h.src.Add("not an event"); err != nil {
		t.Fatal(err)
	}
	h.scrape()
	if got := h.value("kubecause_events_total", map[string]string{"reason": "Failed\uFFFDMount"}); got != 1 {
		t.Fatalf("sanitised reason series = %v", got)
	}
	odd := kubeletEvent(uidC, "pod.odd", 1, "FailedMount", msgS1)
	odd.InvolvedObject.Name = "we\"ird\\name\n"
	h.add(odd)
	if got := h.value("kubecause_object_events", map[string]string{"name": "we\"ird\\name\n"}); got != 1 {
		t.Fatalf("label value with quote, backslash and newline does not round-trip: %v", got)
	}
	for problem, want := range map[string]float64{"no_uid": 1, "no_reason": 1, "not_an_event": 1} {
		if got := h.value("kubecause_events_invalid_total", map[string]string{"problem": problem}); got != want {
			t.Fatalf("invalid{%s} = %v", problem, got)
		}
	}
	for _, v := range []string{labels.Value(bad.InvolvedObject.Name), labels.Value(bad.Reason)} {
		if len(v) > labels.MaxBytes {
			t.Fatalf("label of %d bytes", len(v))
		}
	}
}

func TestNormalEventsOnlyForChosenReasons(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NormalReasons = []string{"Preempted"} })
	h.sync()
	pulled := kubeletEvent(uidA, "pod.pulled", 1, "Pulled", "Successfully pulled image")
	pulled.Type = corev1.EventTypeNormal
	preempted := kubeletEvent(uidB, "pod.pre", 1, "Preempted", "Preempted by pod x")
	preempted.Type = corev1.EventTypeNormal
	h.add(pulled)
	h.add(preempted)
	if got := h.value("kubecause_events_total", map[string]string{"reason": "Pulled"}); got != -1 {
		t.Fatalf("Normal reason not asked for was counted: %v", got)
	}
	if got := h.value("kubecause_events_total", map[string]string{"reason": "Preempted", "type": "Normal"}); got != 1 {
		t.Fatalf("chosen Normal reason = %v", got)
	}
}

func TestRuleHitsArePreinitialised(t *testing.T) {
	h := newHarness(t)
	for _, o := range (testTable{}).Outcomes() {
		if got := h.value("kubecause_rule_hits_total", map[string]string{"rule": ruleLabel(o.Rule), "cause": o.Cause}); got != 0 {
			t.Fatalf("rule hit counter %v not pre-initialised: %v", o, got)
		}
	}
	h.sync()
	h.add(kubeletEvent(uidA, "pod.1", 1, "FailedCreatePodSandBox", "no space left on device"))
	h.add(kubeletEvent(uidB, "pod.2", 1, "Odd", "odd"))
	if got := h.value("kubecause_rule_hits_total", map[string]string{"rule": "sandbox.disk_full"}); got != 1 {
		t.Fatalf("rule hits = %v", got)
	}
	if got := h.value("kubecause_rule_hits_total", map[string]string{"rule": "fallback", "cause": "unknown"}); got != 1 {
		t.Fatalf("fallback hits = %v", got)
	}
	if got := h.value("kubecause_events_unclassified_total", nil); got != 1 {
		t.Fatalf("unclassified = %v", got)
	}
}

// TestWatchAgainstFakeClientset runs the real reflector wiring against client-go's fake clientset.
func TestWatchAgainstFakeClientset(t *testing.T) {
	pre := kubeletEvent(uidA, "pod.1", 9, "FailedMount", msgS1)
	client := fake.NewClientset(pre)
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.src.Watch(ctx, kubefake.Client{Interface: client}, "", "", h.e.cfg.Logger)

	poll(t, "synced", func() bool { return h.e.Synced() })
	if got := h.occurrences("configmap_not_found"); got > 0 {
		t.Fatalf("baseline counted: %v", got)
	}
	ev := kubeletEvent(uidB, "pod.2", 1, "FailedCreatePodSandBox", "no space left on device")
	if _, err := client.CoreV1().Events("istio-system").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "created event counted", func() bool { return h.occurrences("disk_full") == 1 })
	ev.Count = 4
	if _, err := client.CoreV1().Events("istio-system").Update(ctx, ev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "count delta counted", func() bool { return h.occurrences("disk_full") == 4 })
	if err := client.CoreV1().Events("istio-system").Delete(ctx, ev.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "deleted event forgotten", func() bool { return h.e.Tracked() == 1 })
	if got := h.value("kubecause_watch_up", nil); got != 1 {
		t.Fatalf("watch_up = %v", got)
	}
}

// TestApiserverUnreachableThenBack: failures are counted and shown, scrapes keep working, and the
// reflector recovers with its backoff once the apiserver answers.
func TestApiserverUnreachableThenBack(t *testing.T) {
	client := fake.NewClientset(kubeletEvent(uidA, "pod.1", 3, "FailedMount", msgS1))
	var down atomic.Bool
	down.Store(true)
	client.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return false, nil, nil
	})
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.src.Watch(ctx, kubefake.Client{Interface: client}, "", "", h.e.cfg.Logger)

	poll(t, "list failure counted", func() bool { return h.value("kubecause_watch_errors_total", nil) >= 1 })
	if got := h.value("kubecause_watch_up", nil); got != 0 {
		t.Fatalf("watch_up = %v while the apiserver is down", got)
	}
	if h.e.Synced() || h.value("kubecause_synced", nil) != 0 {
		t.Fatal("synced while the apiserver is down")
	}
	down.Store(false)
	poll(t, "recovered", func() bool { return h.e.Synced() && h.value("kubecause_watch_up", nil) == 1 })
	if got := h.occurrences("configmap_not_found"); got > 0 {
		t.Fatalf("the first successful list is a baseline, counted %v", got)
	}
}

// TestViewStateIsFreedWithItsEvents: the per-object view is bounded by the live Events — nothing
// stays behind once they expire, and freed slots are reused.
func TestViewStateIsFreedWithItsEvents(t *testing.T) {
	h := newHarness(t)
	h.sync()
	var evs []*corev1.Event
	for i := 0; i < 50; i++ {
		ev := kubeletEvent(uid(i), fmt.Sprintf("p.%d", i), 1, []string{"FailedMount", "FailedCreatePodSandBox"}[i%2],
			[]string{msgS1, "no space left on device"}[i%2])
		ev.InvolvedObject.Name = fmt.Sprintf("pod-%d", i/5) // 5 Events per pod
		h.add(ev)
		evs = append(evs, ev)
	}
	if n, slots := h.e.view.len(), len(h.e.view.entries); n != 20 || slots != 20 {
		t.Fatalf("view entries = %d in %d slots, want 20 in 20 (10 pods × 2 reasons)", n, slots)
	}
	for _, ev := range evs {
		if err := h.src.Delete(ev); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.e.view.len(); n != 0 {
		t.Fatalf("after every Event expired: view entries = %d, want 0", n)
	}
	// Reused slots render the right labels.
	h.add(kubeletEvent(uidA, "pod.again", 2, "FailedMount", msgS1))
	if got := h.value("kubecause_object_events", map[string]string{"name": "mspider-mcpc-ckube-remote-0", "cause": "configmap_not_found", "reason": "FailedMount", "namespace": "istio-system"}); got != 2 {
		t.Fatalf("reused view slot: %v", got)
	}
	if slots := len(h.e.view.entries); slots != 20 {
		t.Fatalf("a new entry took a new slot (%d slots) instead of a freed one", slots)
	}
}

func TestScrapeServesOnlyTheNamedFamilies(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.add(kubeletEvent(uidA, "pod.a", 3, "FailedMount", msgS1))
	families := func(query string) []string {
		rec := httptest.NewRecorder()
		Handler(h.reg, h.e, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics"+query, nil))
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(rec.Body)
		if rec.Code != 200 || err != nil {
			t.Fatalf("scrape %q: %d, %v", query, rec.Code, err)
		}
		var names []string
		for n := range mfs {
			names = append(names, n)
		}
		sort.Strings(names)
		return names
	}
	for query, want := range map[string][]string{
		"?name[]=kubecause_events_total":  {"kubecause_events_total"},
		"?name[]=kubecause_object_events": {"kubecause_object_events"},
		"?name[]=kubecause_object_event_last_timestamp_seconds&name[]=kubecause_events_total": {
			"kubecause_events_total", "kubecause_object_event_last_timestamp_seconds"},
	} {
		if got := families(query); !reflect.DeepEqual(got, want) {
			t.Errorf("families of /metrics%s = %q, want %q", query, got, want)
		}
	}
	all := families("")
	for _, n := range []string{"kubecause_events_total", "kubecause_object_events", "kubecause_object_event_last_timestamp_seconds"} {
		if !slices.Contains(all, n) {
			t.Errorf("unfiltered /metrics lacks %s", n)
		}
	}
}

// TestFutureEventTimeDoesNotPinTheLatestTimestamp: an Event whose lastTimestamp is in year 9999
// counts as happening now; a later occurrence moves kubecause_last_event_timestamp_seconds on.
func TestFutureEventTimeDoesNotPinTheLatestTimestamp(t *testing.T) {
	h := newHarness(t)
	h.sync()
	future := kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1)
	future.LastTimestamp = metav1.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))
	h.add(future)
	if got := h.value("kubecause_last_event_timestamp_seconds", nil); got != float64(t0.Unix()) {
		t.Fatalf("after a year-9999 Event: %v, want now (%d)", got, t0.Unix())
	}
	h.now = t0.Add(time.Minute)
	later := kubeletEvent(uidB, "pod.2", 1, "FailedMount", msgS1)
	later.LastTimestamp = metav1.NewTime(h.now)
	h.add(later)
	if got := h.value("kubecause_last_event_timestamp_seconds", nil); got != float64(h.now.Unix()) {
		t.Fatalf("a later occurrence: %v, want %d", got, h.now.Unix())
	}
	if got := h.value("kubecause_object_event_last_timestamp_seconds", nil); got > float64(h.now.Unix()) {
		t.Fatalf("the view's latest occurrence is in the future: %v", got)
	}
}

// TestObserveReturnsWhatItCounted: observe reports the occurrences it counted and whether the
// Event joined its source's state, which is what a list marks.
func TestObserveReturnsWhatItCounted(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	normal := kubeletEvent(uidC, "pod.3", 1, "Pulled", "Successfully pulled image")
	normal.Type = corev1.EventTypeNormal
	for _, tc := range []struct {
		name  string
		obj   interface{}
		state bool
		delta int32
	}{
		{"new", kubeletEvent(uidA, "pod.1", 1, "FailedMount", msgS1), true, 1},
		{"repeated", kubeletEvent(uidA, "pod.1", 4, "FailedMount", msgS1), true, 3},
		{"unchanged", kubeletEvent(uidA, "pod.1", 4, "FailedMount", msgS1), true, 0},
		{"no reason", kubeletEvent(uidB, "pod.2", 1, "", msgS1), false, 0},
		{"unwanted Normal", normal, false, 0},
		{"not an Event", &corev1.Pod{}, false, 0},
	} {
		o := h.e.observe(h.src.idx, tc.obj, false, true)
		if o.state != tc.state || o.delta != tc.delta {
			t.Errorf("%s: observed state %v delta %d, want %v %d", tc.name, o.state, o.delta, tc.state, tc.delta)
		}
	}
}

// TestUnclassifiedTemplates: the occurrences the table does not classify are also kept by
// (reason, message template), so a user sees which messages to write a rule for; the pairs add
// up to kubecause_events_unclassified_total.
func TestUnclassifiedTemplates(t *testing.T) {
	// Written by a real kubelet 1.35.4 on a cgroup v1 node (exporter/causes/testdata/real-node.yaml);
	// testTable, unlike the built-in table, has no rule for it.
	const msg = `cgroup v1 detected. cgroup v1 support is deprecated and will be removed in a future release. Please migrate to cgroup v2. More information at https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1`
	h := newHarness(t)
	h.sync()
	h.add(kubeletEvent(uidA, "node.1", 1, "CgroupV1", msg))
	h.update(kubeletEvent(uidA, "node.1", 4, "CgroupV1", msg))
	h.add(kubeletEvent(uidB, "pod.2", 1, "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found`))
	total := h.value("kubecause_events_unclassified_total", nil)
	if total != 4 {
		t.Fatalf("kubecause_events_unclassified_total = %v, want 4", total)
	}
	got := h.value("kubecause_unclassified_messages", map[string]string{"reason": "CgroupV1", "template": causes.Template(msg)})
	if got != total {
		t.Fatalf("kubecause_unclassified_messages{reason=CgroupV1} = %v, want %v (every unclassified occurrence)", got, total)
	}
	if n := len(h.scrape()["kubecause_unclassified_messages"].GetMetric()); n != 1 {
		t.Fatalf("%d template series, want 1 (the classified FailedMount has none)", n)
	}
}

// TestUnclassifiedTemplatesCountOnlyOccurrences: an unclassified Event of the first list is a
// baseline, like its occurrences: its template appears with the first occurrence counted, with
// that occurrence, and a deletion's missed occurrences are added to it.
func TestUnclassifiedTemplatesCountOnlyOccurrences(t *testing.T) {
	// Written by a real kubelet 1.35.4 (TestUnclassifiedTemplates).
	const msg = `cgroup v1 detected. cgroup v1 support is deprecated and will be removed in a future release. Please migrate to cgroup v2. More information at https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1`
	h := newHarness(t)
	h.sync(kubeletEvent(uidA, "node.1", 5, "CgroupV1", msg))
	if n := len(h.scrape()["kubecause_unclassified_messages"].GetMetric()); n != 0 {
		t.Fatalf("%d template series after the first list, want none (a baseline)", n)
	}
	h.update(kubeletEvent(uidA, "node.1", 7, "CgroupV1", msg))
	tmpl := map[string]string{"reason": "CgroupV1", "template": causes.Template(msg)}
	if got := h.value("kubecause_unclassified_messages", tmpl); got != 2 {
		t.Fatalf("kubecause_unclassified_messages = %v after 2 occurrences, want 2", got)
	}
	if err := h.src.Delete(kubeletEvent(uidA, "node.1", 8, "CgroupV1", msg)); err != nil {
		t.Fatal(err)
	}
	if got := h.value("kubecause_unclassified_messages", tmpl); got != 3 {
		t.Fatalf("kubecause_unclassified_messages = %v after a deletion with 1 more occurrence, want 3", got)
	}
}

// A PATCH of count repeats its Event's message: it is classified once, and a new message is
// classified again.
func TestClassificationIsMemoisedByMessage(t *testing.T) {
	calls := 0
	h := newHarness(t, func(c *Config) {
		c.Classifier = testTable{calls: &calls}
	})
	h.sync()
	for n := int32(1); n <= 5; n++ {
		h.update(kubeletEvent(uidA, "pod.1", n, "FailedMount", msgS1))
	}
	h.expect("configmap_not_found", 5)
	if calls != 1 {
		t.Fatalf("classified %d times, want 1", calls)
	}
	h.update(kubeletEvent(uidA, "pod.1", 6, "FailedMount", "MountVolume.SetUp failed for volume \"tls\" : secret \"web-tls\" not found"))
	if calls != 2 {
		t.Fatalf("a new message was not classified again (%d calls)", calls)
	}
	for i := 0; i < maxClassified+10; i++ {
		h.e.mu.Lock()
		h.e.classify("FailedMount", fmt.Sprint(i))
		h.e.mu.Unlock()
	}
	if n := len(h.e.classified); n > maxClassified {
		t.Fatalf("memo holds %d entries, bound %d", n, maxClassified)
	}
}
