//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/e2e/framework"
)

// snapshotMessages are real kubelet messages of the other tests (seed S1 and the reliability
// tests), each with its reason.
var snapshotMessages = []struct{ reason, message string }{
	{"FailedMount", s1Message},
	{"FailedMount", s1Timeout},
	{"FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`},
	{"Unhealthy", `Readiness probe failed: HTTP probe failed with statuscode: 503`},
}

// eventWriter writes kubelet Events into a namespace without pause, as a node with failing pods
// does: a new Event every fourth write, otherwise a repeat of an earlier one (+1, or +5 as the
// spam filter's jump; the Events given to startEventWriter are repeated too), until stopped.
type eventWriter struct {
	ns     string
	writes atomic.Int64
	stop   chan struct{}
	done   chan error
	once   sync.Once
	err    error
}

// startEventWriter starts the writer; it is stopped at the end of the test if finish was not called.
func startEventWriter(t *testing.T, ctx context.Context, c *framework.Cluster, ns string, earlier ...*framework.CoreEvent) *eventWriter {
	w := &eventWriter{ns: ns, stop: make(chan struct{}), done: make(chan error, 1)}
	t.Cleanup(func() { w.halt() })
	kubelet := framework.Kubelet(c.Client, "worker-1")
	go func() {
		// The earlier Events are repeated as the writer's own.
		evs := append([]*framework.CoreEvent(nil), earlier...)
		tick := time.NewTicker(20 * time.Millisecond) // about 50 writes a second at most
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			case <-tick.C:
			}
			var err error
			if i%4 == 0 {
				m := snapshotMessages[(i/4)%len(snapshotMessages)]
				ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns,
					Name: fmt.Sprintf("web-7d9fc5b8c4-%05d", i/16), UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i/16))}
				var ev *framework.CoreEvent
				if ev, err = kubelet.Emit(ctx, ref, corev1.EventTypeWarning, m.reason, m.message); err == nil {
					evs = append(evs, ev)
				}
			} else {
				n := int32(1)
				if i%7 == 0 {
					n = 5
				}
				err = evs[(i*7919)%len(evs)].Repeat(ctx, n)
			}
			if err != nil {
				w.done <- err
				return
			}
			w.writes.Add(1)
		}
	}()
	return w
}

// waitWrites waits until the writer has written n more times.
func (w *eventWriter) waitWrites(t *testing.T, n int64) {
	t.Helper()
	base := w.writes.Load()
	check(t, framework.Poll(context.Background(), metricTimeout, func() (bool, error) { return w.writes.Load() >= base+n, nil }))
}

// halt stops the writer once and returns its error.
func (w *eventWriter) halt() error {
	w.once.Do(func() { close(w.stop); w.err = <-w.done })
	return w.err
}

func (w *eventWriter) finish(t *testing.T) {
	t.Helper()
	check(t, w.halt())
}

// apiserverOccurrences is the sum of the occurrences the apiserver's Events of ns record (count).
func apiserverOccurrences(t *testing.T, c *framework.Cluster, ns string) (float64, int) {
	t.Helper()
	l, err := c.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	check(t, err)
	var sum float64
	for _, ev := range l.Items {
		sum += float64(ev.Count)
	}
	return sum, len(l.Items)
}

// currentLog is the log of the replica's latest process (the framework marks each start).
func currentLog(k *framework.Kubecause) string {
	log := k.Log(0)
	return log[max(strings.LastIndex(log, "\n==== "), 0):]
}

// namespaceTotal is sum(kubecause_events_total{namespace=ns}) of the running replica.
func namespaceTotal(t *testing.T, k *framework.Kubecause, ns string) float64 {
	t.Helper()
	v, _ := kubecauseValue(t, k, "kubecause_events_total", map[string]string{"namespace": ns})
	return v
}

// TestRestartWithSnapshotCountsTheDowntime: the kubelet writes Events without pause while
// kubecause, with --events.snapshot-file, is killed (SIGKILL, between two snapshots) and started
// again, then stopped (SIGTERM) and started again. Each time it comes back, its counter goes on
// from where it was (no reset), and once the writes end kubecause_events_total equals the
// apiserver's own counts — every occurrence since kubecause first started, the downtimes' included,
// none twice. Without the snapshot, the counter would restart from 0 and miss the downtimes. A
// second replica with its own snapshot file runs throughout and ends with the same count.
func TestRestartWithSnapshotCountsTheDowntime(t *testing.T) {
	ctx := testContext(t)
	cluster, dir, bins := startCluster(t)
	const ns = "apps"
	check(t, cluster.EnsureNamespaces(ctx, ns))
	snap := filepath.Join(dir, "events.snapshot")
	k, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause",
		"--events.namespace="+ns, "--events.snapshot-file="+snap, "--events.snapshot-interval=1s")
	check(t, err)
	t.Cleanup(func() { _ = k.Stop() })
	waitKubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "missing"}, 1)
	// A second replica with its own file (its own emptyDir) runs throughout.
	other, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause-1",
		"--events.namespace="+ns, "--events.snapshot-file="+filepath.Join(dir, "events-1.snapshot"), "--events.snapshot-interval=1s")
	check(t, err)
	t.Cleanup(func() { _ = other.Stop() })

	w := startEventWriter(t, ctx, cluster, ns)
	w.waitWrites(t, 40)

	for _, how := range []string{"SIGKILL", "SIGTERM"} {
		// At least one snapshot of this process, then writes go on past it.
		written, _ := kubecauseValue(t, k, "kubecause_snapshot_writes_total", map[string]string{"result": "written"})
		check(t, framework.Poll(ctx, metricTimeout, func() (bool, error) {
			v, _ := kubecauseValue(t, k, "kubecause_snapshot_writes_total", map[string]string{"result": "written"})
			return v > written, nil
		}))
		w.waitWrites(t, 10)
		before := namespaceTotal(t, k, ns)
		if how == "SIGKILL" {
			k.Kill()
		} else {
			check(t, k.Stop())
			if log := currentLog(k); !strings.Contains(log, "snapshot written at shutdown") {
				t.Fatalf("SIGTERM: no snapshot written at shutdown; log:\n%s", log)
			}
		}
		down := time.Now()
		away := w.writes.Load()
		atStop, _ := apiserverOccurrences(t, cluster, ns)
		w.waitWrites(t, 100) // while kubecause is away
		atStart, _ := apiserverOccurrences(t, cluster, ns)
		check(t, k.Restart())
		away = w.writes.Load() - away
		after := namespaceTotal(t, k, ns)
		if got, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "restored"}); got != 1 {
			t.Fatalf("%s: kubecause_snapshot_restores_total{result=\"restored\"} = %g, want 1; log:\n%s", how, got, k.Log(4000))
		}
		// The counter goes on: the new process's first value is at least the last one read from
		// the old (which was already past the snapshot), with the downtime's occurrences on top.
		if after < before {
			t.Fatalf("%s: kubecause_events_total went back from %g to %g: a reset", how, before, after)
		}
		t.Logf("%s: kubecause_events_total{namespace=%q} %g before, %g after the restart (away %s, %d writes meanwhile; the apiserver's counts grew by at least %g while no kubecause ran)",
			how, ns, before, after, time.Since(down).Round(time.Millisecond), away, atStart-atStop)
		w.waitWrites(t, 20)
	}

	w.finish(t)
	want, events := apiserverOccurrences(t, cluster, ns)
	var got float64
	err = framework.Poll(ctx, metricTimeout, func() (bool, error) {
		got = namespaceTotal(t, k, ns)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("kubecause_events_total{namespace=%q} = %g, the apiserver's Events count %g occurrences", ns, got, want)
	}
	// The replica that ran throughout counts the same, on its own (each replica's series is exact;
	// the restarted one did not read the other's snapshot).
	waitKubecauseValue(t, other, "kubecause_events_total", map[string]string{"namespace": ns}, want)
	// Nothing more arrives later (nothing counted twice by a late notification).
	written, _ := kubecauseValue(t, k, "kubecause_snapshot_writes_total", map[string]string{"result": "written"})
	check(t, framework.Poll(ctx, metricTimeout, func() (bool, error) {
		v, _ := kubecauseValue(t, k, "kubecause_snapshot_writes_total", map[string]string{"result": "written"})
		return v >= written+2, nil
	}))
	if got = namespaceTotal(t, k, ns); got != want {
		t.Fatalf("kubecause_events_total{namespace=%q} = %g later, want %g", ns, got, want)
	}
	t.Logf("after a SIGKILL and a SIGTERM: kubecause_events_total{namespace=%q} = %g = the sum of the counts of the apiserver's %d Events (%d writes in all)",
		ns, got, events, w.writes.Load())
}

// TestUnusableSnapshotIsAFreshStart: a truncated snapshot and one that is garbage are not used:
// kubecause starts as without one (the live Events are a baseline, the counter starts from 0),
// counts the result and says so in its log, and counts on from there.
func TestUnusableSnapshotIsAFreshStart(t *testing.T) {
	ctx := testContext(t)
	cluster, dir, bins := startCluster(t)
	const ns = "apps"
	check(t, cluster.EnsureNamespaces(ctx, ns))
	snap := filepath.Join(dir, "events.snapshot")
	k, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause",
		"--events.namespace="+ns, "--events.snapshot-file="+snap, "--events.snapshot-interval=1s")
	check(t, err)
	t.Cleanup(func() { _ = k.Stop() })
	pod := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "web-0", UID: "00000000-0000-4000-8000-000000000001"}
	ev := must[*framework.CoreEvent](t)(framework.Kubelet(cluster.Client, "worker-1").Emit(ctx, pod, corev1.EventTypeWarning, "FailedMount", s1Message))
	check(t, ev.SetCount(ctx, 4))
	waitKubecauseValue(t, k, "kubecause_events_total", map[string]string{"namespace": ns}, 4)

	good := ""
	for _, tc := range []struct {
		name string
		file func(b []byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		// What a misdirected path could hold: kubecause's own log.
		{"garbage", func([]byte) []byte { return []byte(k.Log(2000)) }},
	} {
		check(t, k.Stop())
		b, err := os.ReadFile(snap)
		check(t, err)
		if good == "" {
			good = string(b)
		}
		check(t, os.WriteFile(snap, tc.file([]byte(good)), 0o600))
		// While away, the Event repeats twice: not counted by a fresh start.
		check(t, ev.Repeat(ctx, 2))
		check(t, k.Restart())
		waitKubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "corrupt"}, 1)
		if got, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "restored"}); got != 0 {
			t.Fatalf("%s snapshot: restored %g times", tc.name, got)
		}
		if log := currentLog(k); !strings.Contains(log, "snapshot not used") || !strings.Contains(log, "result=corrupt") {
			t.Fatalf("%s snapshot: no log line says it was not used:\n%s", tc.name, log)
		}
		if got, found := kubecauseValue(t, k, "kubecause_events_total", map[string]string{"namespace": ns}); found && got != 0 {
			t.Fatalf("%s snapshot: kubecause_events_total = %g at start, want none (a baseline)", tc.name, got)
		}
		check(t, ev.Repeat(ctx, 1))
		waitKubecauseValue(t, k, "kubecause_events_total", map[string]string{"namespace": ns}, 1)
		t.Logf("%s snapshot (%d bytes): a fresh start counted in kubecause_snapshot_restores_total{result=\"corrupt\"}; the Event's next occurrence counts 1", tc.name, len(tc.file([]byte(good))))
	}
}

// TestSnapshotPrometheusSeesOneCounter: what a user's queries see. Prometheus scrapes kubecause
// every second while the kubelet writes Events and kubecause is killed (SIGKILL) and started again
// with its snapshot: Prometheus records no counter reset (resets() is 0, where a restart without
// the snapshot shows one), and the counter it holds at the end equals the apiserver's counts.
func TestSnapshotPrometheusSeesOneCounter(t *testing.T) {
	ctx := testContext(t)
	const ns = "apps"
	snap := filepath.Join(t.TempDir(), "events.snapshot")
	s := startStack(t, framework.StackOptions{Namespaces: []string{ns},
		KubecauseArgs: []string{"--events.namespace=" + ns, "--events.snapshot-file=" + snap, "--events.snapshot-interval=1s"}})
	k := s.Kubecause[0]
	w := startEventWriter(t, ctx, s.Cluster, ns)
	total := fmt.Sprintf(`sum(kubecause_events_total{namespace=%q})`, ns)
	// Prometheus has the counter of the first process, then it is killed between two snapshots.
	if _, err := s.Prometheus.API.WaitFor(ctx, total, metricTimeout, func(v framework.Vector) bool { return len(v) == 1 && v[0].Value >= 50 }); err != nil {
		t.Fatal(err)
	}
	waitScrapes(t, s, "kubecause", 3)
	before := namespaceTotal(t, k, ns)
	k.Kill()
	w.waitWrites(t, 100)
	check(t, k.Restart())
	waitScrapes(t, s, "kubecause", 3)
	w.waitWrites(t, 40)
	w.finish(t)
	want, events := apiserverOccurrences(t, s.Cluster, ns)
	promValue(t, s, total, want)
	resets := fmt.Sprintf(`sum(resets(kubecause_events_total{namespace=%q}[1h]))`, ns)
	promValue(t, s, resets, 0)
	t.Logf("SIGKILL at %g counted: Prometheus holds %s = %g = the counts of the apiserver's %d Events, and %s = 0",
		before, total, want, events, resets)
}

// seriesKey is a kubecause_events_total series without its cause: the Event's namespace, the
// involved object's kind, the reason, the type and the reporting component — what the apiserver's
// Events carry themselves.
type seriesKey struct{ namespace, kind, reason, typ, component string }

func (k seriesKey) String() string {
	return fmt.Sprintf("{namespace=%q,kind=%q,reason=%q,type=%q,component=%q}", k.namespace, k.kind, k.reason, k.typ, k.component)
}

// apiserverSeries sums the counts of the apiserver's Events of ns by seriesKey.
func apiserverSeries(t *testing.T, c *framework.Cluster, ns string) map[seriesKey]float64 {
	t.Helper()
	l, err := c.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	check(t, err)
	m := map[seriesKey]float64{}
	for _, ev := range l.Items {
		m[seriesKey{ev.InvolvedObject.Namespace, ev.InvolvedObject.Kind, ev.Reason, ev.Type, ev.Source.Component}] += float64(ev.Count)
	}
	return m
}

// replicaSeries reads a replica's kubecause_events_total by seriesKey (summed over cause).
func replicaSeries(k *framework.Kubecause) (map[seriesKey]float64, error) {
	fams, err := k.Metrics()
	if err != nil {
		return nil, err
	}
	m := map[seriesKey]float64{}
	f, ok := fams["kubecause_events_total"]
	if !ok {
		return m, nil
	}
	for _, s := range f.GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		m[seriesKey{l["namespace"], l["kind"], l["reason"], l["type"], l["component"]}] += s.GetCounter().GetValue()
	}
	return m, nil
}

// diffSeries lists the keys of want and got whose values differ ("" when none).
func diffSeries(want, got map[seriesKey]float64) string {
	var b strings.Builder
	for k, v := range want {
		if got[k] != v {
			fmt.Fprintf(&b, "  %s: %g, want %g\n", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			fmt.Fprintf(&b, "  %s: %g, want none\n", k, v)
		}
	}
	return b.String()
}

// TestRollingRestartOfTwoReplicas: two replicas, each with its own snapshot file (as the Helm
// chart deploys them: one emptyDir per pod), count the Events of a namespace that already holds
// history (Events with counts from before either replica started). The kubelet writes without
// pause — count updates of the history and of its own Events, and new Events — while replica A is
// stopped (SIGTERM) and started again, and once it is ready, replica B. After both are back and the
// writes end, what a user checks holds: each replica's kubecause_events_total, series by series,
// equals the growth of the apiserver's own counts since the replicas started (the occurrences
// written while that replica was down included, the history not replayed), and so does the max
// across the two replicas (the mixin's dedup: max without (instance, pod)) — no double counting;
// each new process restored its snapshot once. Without the snapshot each restarted replica starts
// from 0 and misses its downtime, and the max falls short too.
func TestRollingRestartOfTwoReplicas(t *testing.T) {
	ctx := testContext(t)
	cluster, dir, bins := startCluster(t)
	const ns = "apps"
	check(t, cluster.EnsureNamespaces(ctx, ns))
	// History: Events that occurred before kubecause was installed; they are a baseline.
	kubelet := framework.Kubelet(cluster.Client, "worker-1")
	var history []*framework.CoreEvent
	for i, m := range snapshotMessages {
		pod := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns,
			Name: fmt.Sprintf("db-%d", i), UID: types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", i))}
		ev := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, pod, corev1.EventTypeWarning, m.reason, m.message))
		check(t, ev.SetCount(ctx, int32(7+i)))
		history = append(history, ev)
	}
	base := apiserverSeries(t, cluster, ns)

	replicas := make([]*framework.Kubecause, 2)
	for i := range replicas {
		name := fmt.Sprintf("kubecause-%d", i)
		check(t, os.Mkdir(filepath.Join(dir, name), 0o700)) // the pod's emptyDir
		k, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, name,
			"--events.namespace="+ns, "--events.snapshot-file="+filepath.Join(dir, name, "events.snapshot"), "--events.snapshot-interval=1s")
		check(t, err)
		t.Cleanup(func() { _ = k.Stop() })
		waitKubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "missing"}, 1)
		replicas[i] = k
	}
	// The history is a baseline: nothing counted before the writes.
	for i, k := range replicas {
		if v := namespaceTotal(t, k, ns); v != 0 {
			t.Fatalf("replica %d counts %g occurrences of the history", i, v)
		}
	}

	w := startEventWriter(t, ctx, cluster, ns, history...)
	w.waitWrites(t, 40)

	for i, k := range replicas {
		w.waitWrites(t, 20)
		before := namespaceTotal(t, k, ns)
		check(t, k.Stop()) // SIGTERM: the pod is deleted by the rollout
		if log := currentLog(k); !strings.Contains(log, "snapshot written at shutdown") {
			t.Fatalf("replica %d: no snapshot written at shutdown; log:\n%s", i, log)
		}
		down := time.Now()
		away := w.writes.Load()
		atStop, _ := apiserverOccurrences(t, cluster, ns)
		w.waitWrites(t, 100) // while the replica is away
		atStart, _ := apiserverOccurrences(t, cluster, ns)
		check(t, k.Restart()) // the new pod, ready once its first lists are read
		away = w.writes.Load() - away
		if got, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "restored"}); got != 1 {
			t.Fatalf("replica %d: kubecause_snapshot_restores_total{result=\"restored\"} = %g, want 1; log:\n%s", i, got, k.Log(4000))
		}
		after := namespaceTotal(t, k, ns)
		if after < before {
			t.Fatalf("replica %d: kubecause_events_total went back from %g to %g: a reset", i, before, after)
		}
		t.Logf("replica %d: kubecause_events_total{namespace=%q} %g before, %g once ready again (away %s, %d writes meanwhile; the apiserver's counts grew by at least %g while it was down)",
			i, ns, before, after, time.Since(down).Round(time.Millisecond), away, atStart-atStop)
	}
	w.waitWrites(t, 40) // both replicas back, writes go on

	w.finish(t)
	now := apiserverSeries(t, cluster, ns)
	want := map[seriesKey]float64{}
	var wantSum float64
	for k, v := range now {
		if d := v - base[k]; d != 0 {
			want[k] = d
			wantSum += d
		}
	}
	got := make([]map[seriesKey]float64, len(replicas))
	for i, k := range replicas {
		var diff string
		err := framework.Poll(ctx, metricTimeout, func() (bool, error) {
			m, err := replicaSeries(k)
			if err != nil {
				return false, nil
			}
			got[i], diff = m, diffSeries(want, m)
			return diff == "", nil
		})
		if err != nil {
			t.Errorf("replica %d: kubecause_events_total differs from the apiserver's counts since the replicas started:\n%s", i, diff)
		}
		if v, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "restored"}); v != 1 {
			t.Errorf("replica %d: kubecause_snapshot_restores_total{result=\"restored\"} = %g, want 1", i, v)
		}
	}
	// What the rules see: max without (instance, pod) of the two replicas' series.
	dedup := map[seriesKey]float64{}
	var dedupSum float64
	for _, m := range got {
		for k, v := range m {
			dedup[k] = max(dedup[k], v)
		}
	}
	for _, v := range dedup {
		dedupSum += v
	}
	if diff := diffSeries(want, dedup); diff != "" {
		t.Fatalf("the max across the replicas differs from the apiserver's counts:\n%s", diff)
	}
	_, events := apiserverOccurrences(t, cluster, ns)
	t.Logf("after a rolling restart of both replicas: each replica's kubecause_events_total and their max equal, series by series (%d series), the growth of the apiserver's counts: %g occurrences on %d Events (%d writes in all; the history of %d Events not replayed)",
		len(want), dedupSum, events, w.writes.Load(), len(history))
	if wantSum != dedupSum {
		t.Fatalf("sum of the max across replicas %g, want %g", dedupSum, wantSum)
	}
}
