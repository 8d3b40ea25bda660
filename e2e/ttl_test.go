//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestWatchGapEstimateLearnsAShortEventTTL: on a kube-apiserver started with --event-ttl=20s,
// Events expire 20 s after they are written. kubecause watches two new Events a second for 40 s
// and sees the first ones expire (DELETE); then it is cut off (paused) while the apiserver
// restarts and the Events go on for 60 s; etcd is compacted past its resource version, so its
// watch cannot resume (410 Gone) and it relists.
// The Events of the gap older than the TTL at the relist expired unseen: nothing counts them, and
// kubecause_events_gap_estimated_lost_total must estimate them, within a factor of two of the
// Events written and never counted. With the TTL taken as at least one hour, the estimate was 0;
// taken as the oldest age seen, it was 0 too: the restart renews the etcd leases of the Events
// alive then, which live up to a TTL longer.
func TestWatchGapEstimateLearnsAShortEventTTL(t *testing.T) {
	const ttl = 20 * time.Second
	const every = 500 * time.Millisecond
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"},
		APIServerArgs: map[string]string{"event-ttl": ttl.String(), "etcd-compaction-interval": "1s"}})
	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", "web-0", framework.PodOptions{Node: "worker-1"}))
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	// emit writes a new Event every 500 ms for d and returns when each was written.
	emit := func(d time.Duration) []time.Time {
		var at []time.Time
		tick := time.NewTicker(every)
		defer tick.Stop()
		for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
			must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount",
				`MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`))
			at = append(at, time.Now())
		}
		return at
	}
	k := s.Kubecause[0]
	start := time.Now()
	before := emit(2 * ttl)
	t.Logf("%d Events written in %s", len(before), time.Since(start).Round(time.Millisecond))
	// kubecause has seen Events expire.
	if err := framework.Poll(ctx, time.Minute, func() (bool, error) {
		v, _ := kubecauseValue(t, k, "kubecause_event_notifications_total", map[string]string{"op": "delete"})
		return v > 0, nil
	}); err != nil {
		adds, _ := kubecauseValue(t, k, "kubecause_event_notifications_total", map[string]string{"op": "add"})
		left := must[*corev1.EventList](t)(s.Cluster.Client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{}))
		t.Fatalf("kubecause saw no Event expire (%d written in %s, %g ADD notifications, %d Events left): %v",
			len(before), 2*ttl, adds, len(left.Items), err)
	}
	relists0 := kubecauseCounter(t, s, 0, "kubecause_relists_total", nil)
	events := s.Cluster.Client.CoreV1().Events("apps")
	rv0 := must[*corev1.EventList](t)(events.List(ctx, metav1.ListOptions{})).ResourceVersion

	check(t, k.Pause())
	t.Cleanup(func() { _ = k.Resume() })
	down, err := s.Cluster.RestartControlPlane(ctx)
	check(t, err)
	gap := emit(3 * ttl)
	// Until a watch from kubecause's last resource version answers 410 Gone (compacted).
	waitCompactedPast(t, ctx, events, rv0)
	resume(t, ctx, k)
	// Each watch (the Warning one and one per --events.normal-reason) relists on its own, after
	// the reflector's backoff: the Warning watch's relist is the one that estimates.
	// (The relist counts the Events of the gap it finds and estimates in one step: once the
	// estimate shows, the count is final; nothing is written any more.)
	var estimated float64
	if err := framework.Poll(ctx, 2*time.Minute, func() (bool, error) {
		estimated, _ = scrapedValue(k, "kubecause_events_gap_estimated_lost_total", nil)
		return estimated > 0, nil
	}); err != nil {
		t.Fatalf("kubecause_events_gap_estimated_lost_total stayed 0 after the relists (%g relists): %v",
			kubecauseCounter(t, s, 0, "kubecause_relists_total", nil)-relists0, err)
	}
	// What kubecause missed: every Event was written once, so the Events written less those
	// counted (the Events of the gap still alive at the relist are counted by it).
	written := float64(len(before) + len(gap))
	counted, _ := kubecauseValue(t, k, "kubecause_events_total", map[string]string{"namespace": "apps", "reason": "FailedMount"})
	lost := written - counted
	if lost <= 0 {
		t.Fatalf("kubecause counted %g of the %g Events written: none expired unseen, the gap proves nothing", counted, written)
	}
	if estimated < lost/2 || estimated > 2*lost {
		t.Errorf("kubecause_events_gap_estimated_lost_total = %g, want within a factor of two of the %g Events it never counted (%g written, %g counted)",
			estimated, lost, written, counted)
	}
	t.Logf("--event-ttl=%s: %d Events before the gap, %d in it (API down %s); %g counted, %g never seen; estimated %g",
		ttl, len(before), len(gap), down.Round(time.Millisecond), counted, lost, estimated)
}

// TestNamespaceDeletionsDoNotTeachTheTTL: issue 42 on a real apiserver with the default 1 h TTL.
// kubecause lists Events alive two minutes old; then, as CI clusters and preview environments do
// all day, ten namespaces get 60 Events each and are deleted at once, the namespace controller
// deleting their Events seconds old. Taken as expiries, those deletions taught kubecause a TTL of
// seconds: a watch cut that lost nothing was estimated to have lost Events, and a restart half a
// minute later dropped its valid snapshot as too old.
func TestNamespaceDeletionsDoNotTeachTheTTL(t *testing.T) {
	const (
		msg      = `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`
		previews = 10
		perNS    = 60
	)
	ctx := testContext(t)
	snap := filepath.Join(t.TempDir(), "events.snapshot")
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"},
		APIServerArgs: map[string]string{"etcd-compaction-interval": "1s"},
		KubecauseArgs: []string{"--events.snapshot-file=" + snap, "--events.snapshot-interval=1s"}})
	cb, err := framework.FindControllerBinaries()
	check(t, err)
	ctl, err := framework.StartControllers(cb, s.Cluster, s.LogDir) // the namespace controller
	check(t, err)
	t.Cleanup(ctl.Stop)
	k := s.Kubecause[0]
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	emit := func(ns, pod string) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod, UID: types.UID(uuid.NewString())}}
		must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(p), corev1.EventTypeWarning, "FailedMount", msg))
	}
	for i := range 12 {
		emit("apps", fmt.Sprintf("web-%d", i))
	}
	written := time.Now()
	// What kubecause is to see alive is the Events' age: a designed wait of two minutes, then a
	// restart whose first list shows them that old.
	time.Sleep(time.Until(written.Add(2 * time.Minute)))
	restartKubecause(t, s, 0)

	// The previews: written, then their namespaces deleted.
	previewed := time.Now()
	var wg sync.WaitGroup
	for n := range previews {
		ns := fmt.Sprintf("preview-%02d", n)
		must[*corev1.Namespace](t)(s.Cluster.Client.CoreV1().Namespaces().Create(ctx,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
		wg.Go(func() {
			for i := range perNS {
				emit(ns, fmt.Sprintf("job-%02d", i))
			}
		})
	}
	wg.Wait()
	for n := range previews {
		check(t, s.Cluster.Client.CoreV1().Namespaces().Delete(ctx, fmt.Sprintf("preview-%02d", n), metav1.DeleteOptions{}))
	}
	check(t, framework.Poll(ctx, 2*time.Minute, func() (bool, error) {
		v, _ := kubecauseValue(t, k, "kubecause_event_notifications_total", map[string]string{"op": "delete"})
		return v >= previews*perNS, nil
	}))
	t.Logf("%d Events written and deleted with their namespaces in %s", previews*perNS, time.Since(previewed).Round(time.Second))

	// A watch cut that loses nothing: kubecause paused across a control-plane restart, etcd
	// compacted past its resource version, so it relists.
	events := s.Cluster.Client.CoreV1().Events("apps")
	rv0 := must[*corev1.EventList](t)(events.List(ctx, metav1.ListOptions{})).ResourceVersion
	relists0, _ := kubecauseValue(t, k, "kubecause_relists_total", nil)
	check(t, k.Pause())
	t.Cleanup(func() { _ = k.Resume() })
	cut := time.Now()
	down, err := s.Cluster.RestartControlPlane(ctx)
	check(t, err)
	waitCompactedPast(t, ctx, events, rv0)
	resume(t, ctx, k)
	check(t, framework.Poll(ctx, 2*time.Minute, func() (bool, error) {
		v, _ := scrapedValue(k, "kubecause_relists_total", nil)
		return v > relists0, nil
	}))
	gap := time.Since(cut).Round(time.Second)
	for _, l := range strings.Split(k.Log(0), "\n") {
		if strings.Contains(l, "relisted Events") {
			t.Log(l) // the gap, the TTL and the estimate, as kubecause saw them
		}
	}
	// Every watch relists; the estimate is made in the same step as each relist's count.
	est, _ := kubecauseValue(t, k, "kubecause_events_gap_estimated_lost_total", nil)
	if est != 0 {
		t.Errorf("kubecause_events_gap_estimated_lost_total = %g after a %s cut (API down %s) on a 1 h TTL that lost nothing, want 0",
			est, gap, down.Round(time.Second))
	}

	// A restart half a minute away (a designed outage): the snapshot is restored.
	check(t, k.Stop())
	time.Sleep(30 * time.Second)
	check(t, k.Restart())
	restored, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "restored"})
	tooOld, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "too_old"})
	if restored != 1 {
		t.Errorf("after 30 s away: kubecause_snapshot_restores_total{result=restored} = %g, too_old = %g; want the snapshot restored", restored, tooOld)
	}
	t.Logf("%d Events deleted young with their namespaces: after a %s cut (API down %s) %g estimated lost; 30 s away, restores restored %g, too_old %g",
		previews*perNS, gap, down.Round(time.Second), est, restored, tooOld)
}
