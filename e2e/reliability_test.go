//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// kubecauseCounter reads a counter of replica i straight from its /metrics.
func kubecauseCounter(t *testing.T, s *framework.Stack, i int, name string, labels map[string]string) float64 {
	t.Helper()
	v, _ := kubecauseValue(t, s.Kubecause[i], name, labels)
	return v
}

// TestAPIServerRestart: kube-apiserver and etcd stop and start again on the same data. The
// Events that survive keep their counts; kubecause relists and counts exactly the occurrences
// that happened after the restart — none twice.
func TestAPIServerRestart(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"}})
	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", "web-0", framework.PodOptions{Node: "worker-1"}))
	must[*corev1.Pod](t)(s.Objects.SetWaiting(ctx, pod, "ContainerCreating", ""))
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	ev := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount",
		`MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`))
	check(t, ev.SetCount(ctx, 4))
	total := `sum(kubecause_events_total{namespace="apps",cause="secret_not_found"})`
	promValue(t, s, total, 4)
	relists0 := kubecauseCounter(t, s, 0, "kubecause_relists_total", nil)

	down, err := s.Cluster.RestartControlPlane(ctx)
	check(t, err)
	t.Logf("kube-apiserver + etcd restarted: API unavailable for %s", down.Round(time.Millisecond))

	// The surviving Event repeats (4 → 6) and a new one appears: 2 + 1 more occurrences.
	check(t, ev.SetCount(ctx, 6))
	must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount",
		`Unable to attach or mount volumes: unmounted volumes=[tls], unattached volumes=[tls kube-api-access-9xk2p]: timed out waiting for the condition`))
	promValue(t, s, total, 6)
	promValue(t, s, `sum(kubecause_events_total{namespace="apps",cause="mount_timeout"})`, 1)
	waitKubecauseValue(t, s.Kubecause[0], "kubecause_watch_up", nil, 1)
	relists := kubecauseCounter(t, s, 0, "kubecause_relists_total", nil) - relists0
	errs := kubecauseCounter(t, s, 0, "kubecause_watch_errors_total", nil)
	t.Logf("apiserver restart: secret_not_found = 6 (4 before + 2 after, Event count %d), mount_timeout = 1; relists %g, watch errors %g", ev.Count(), relists, errs)
	// Nothing counted twice once more scrapes went by.
	waitScrapes(t, s, "kubecause", 3)
	promValue(t, s, total, 6)
}

// TestWatchExpiry: the apiserver ends every watch after a few seconds (--min-request-timeout),
// so kubecause re-watches again and again while the kubelet keeps writing. Counts stay exact.
func TestWatchExpiry(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"}, APIServerArgs: map[string]string{"min-request-timeout": "2"}})
	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", "api-0", framework.PodOptions{Node: "worker-1"}))
	must[*corev1.Pod](t)(s.Objects.SetRunningNotReady(ctx, pod, "10.244.0.31"))
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	ev := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "Unhealthy",
		`Readiness probe failed: HTTP probe failed with statuscode: 503`))
	start := time.Now()
	watches0 := kubecauseCounter(t, s, 0, "kubecause_event_notifications_total", map[string]string{"op": "relist"})
	// 20 repeats over ≥ 12 s: several watch expiries in between.
	for i := 0; i < 20; i++ {
		check(t, ev.Repeat(ctx, 1))
		if err := framework.Poll(ctx, 10*time.Second, func() (bool, error) { return time.Since(start) > time.Duration(i)*600*time.Millisecond, nil }); err != nil {
			t.Fatal(err)
		}
	}
	promValue(t, s, `sum(kubecause_events_total{namespace="apps",cause="readiness_probe_http_status"})`, 21)
	relists := kubecauseCounter(t, s, 0, "kubecause_event_notifications_total", map[string]string{"op": "relist"}) - watches0
	t.Logf("watch expiry: 21 occurrences counted exactly over %s (relists %g, watch errors %g)",
		time.Since(start).Round(time.Millisecond), relists, kubecauseCounter(t, s, 0, "kubecause_watch_errors_total", nil))
}

// TestTwoReplicas: two kubecause replicas both count (each exact on its own); the rules and the
// alerts count every occurrence once.
func TestTwoReplicas(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"istio-system"}, KubecauseReplicas: 2})
	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "istio-system", "mspider-mcpc-ckube-remote-6b8d7c9f5-m2x7q", framework.PodOptions{Node: "w1"}))
	must[*corev1.Pod](t)(s.Objects.SetWaiting(ctx, pod, "ContainerCreating", ""))
	ev := must[*framework.CoreEvent](t)(framework.Kubelet(s.Cluster.Client, "w1").Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount", s1Message))
	// Each replica's series is scraped at 1 before it grows to 5, so neither replica's rate is 0.
	for _, k := range s.Kubecause {
		promValue(t, s, fmt.Sprintf(`sum(kubecause_events_total{cause="configmap_not_found",instance=%q})`, k.Addr), 1)
	}
	check(t, ev.SetCount(ctx, 5))
	for _, k := range s.Kubecause {
		promValue(t, s, fmt.Sprintf(`sum(kubecause_events_total{cause="configmap_not_found",instance=%q})`, k.Addr), 5)
	}
	promValue(t, s, `sum(max without (instance, pod) (kubecause_events_total{cause="configmap_not_found"}))`, 5)
	// The recording rule equals one replica's rate (the larger), not the sum of both. The two
	// replicas' rates differ by a scrape's timing (rate extrapolates to the window's end from each
	// series' last sample, which can be 30 % apart while the series are a few samples old), so the
	// rule is compared with the per-replica rates at the instant it was evaluated, on the same
	// samples: it must equal their maximum (both are > 0, so the sum is larger).
	rule := `sum(namespace_kind_cause:kubecause_events:rate5m{cause="configmap_not_found"})`
	perReplica := `sum by (instance) (rate(kubecause_events_total{cause="configmap_not_found"}[5m]))`
	if _, err := s.Prometheus.API.WaitFor(ctx, rule, metricTimeout, func(v framework.Vector) bool { return len(v) == 1 && v[0].Value > 0 }); err != nil {
		t.Fatal(err)
	}
	// Poll the rule's latest evaluation until both replicas have a rate in its window and a query at
	// that instant sees the samples the rule saw (a scrape's sample can be stored just after the
	// evaluation that its timestamp precedes).
	var r, per framework.Vector
	var at time.Time
	var hi, sum float64
	for deadline := time.Now().Add(metricTimeout); ; {
		ts := promQuery(t, s, `max(timestamp(namespace_kind_cause:kubecause_events:rate5m{cause="configmap_not_found"}))`)
		at = time.Unix(0, int64(ts[0].Value*1e9))
		r = must[framework.Vector](t)(s.Prometheus.API.QueryAt(ctx, rule, at))
		per = must[framework.Vector](t)(s.Prometheus.API.QueryAt(ctx, perReplica, at))
		hi, sum = 0, 0
		for _, v := range per {
			hi, sum = math.Max(hi, v.Value), sum+v.Value
		}
		if len(r) == 1 && len(per) == 2 && per[0].Value > 0 && per[1].Value > 0 && math.Abs(r[0].Value-hi) <= 1e-9*hi {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("at %s: rule %s, per replica %s: want the rule to equal the larger replica's rate (the sum %g would be double counting)", at, r, per, sum)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("two replicas: each counts 5, deduplicated 5; at the rule's evaluation %s: rate5m rule %g = the larger replica's rate (per replica %s; their sum %g would double count)", at.Format(time.RFC3339Nano), r[0].Value, per, sum)
	got, err := s.Webhook.WaitFiring(alertTimeout, map[string]string{"alertname": "KubecausePodVolumeFailing"})
	check(t, err)
	waitScrapes(t, s, "kubecause", 5)
	got = s.Webhook.Current(map[string]string{"alertname": "KubecausePodVolumeFailing"})
	if len(got) != 1 {
		t.Fatalf("two replicas: want one KubecausePodVolumeFailing alert, got %d: %v", len(got), got)
	}
	t.Logf("two replicas: pager received one alert: %v", got[0])
}

// TestWatchGapCountsEventsCreatedInIt: kubecause is cut off (paused) while the apiserver restarts
// and the kubelet goes on: an Event it knew repeats (1 → 3) and a new one is created and repeated
// to count 4. The apiserver compacts etcd past kubecause's resource version before kubecause hears
// from it again, so its watch cannot resume (410 Gone) and it relists: the new Event, first seen
// in the relist, adds all 4 of its occurrences, not 1.
func TestWatchGapCountsEventsCreatedInIt(t *testing.T) {
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"},
		APIServerArgs: map[string]string{"etcd-compaction-interval": "1s"}})
	pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, "apps", "web-0", framework.PodOptions{Node: "worker-1"}))
	must[*corev1.Pod](t)(s.Objects.SetWaiting(ctx, pod, "ContainerCreating", ""))
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	known := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount",
		`MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`))
	secret := `sum(kubecause_events_total{namespace="apps",cause="secret_not_found"})`
	timeout := `sum(kubecause_events_total{namespace="apps",cause="mount_timeout"})`
	promValue(t, s, secret, 1)
	relists0 := kubecauseCounter(t, s, 0, "kubecause_relists_total", nil)
	events := s.Cluster.Client.CoreV1().Events("apps")
	rv0 := must[*corev1.EventList](t)(events.List(ctx, metav1.ListOptions{})).ResourceVersion

	k := s.Kubecause[0]
	check(t, k.Pause())
	t.Cleanup(func() { _ = k.Resume() })
	down, err := s.Cluster.RestartControlPlane(ctx)
	check(t, err)
	check(t, known.SetCount(ctx, 3))
	created := must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount",
		`Unable to attach or mount volumes: unmounted volumes=[tls], unattached volumes=[tls kube-api-access-9xk2p]: timed out waiting for the condition`))
	check(t, created.SetCount(ctx, 4))
	// Until a watch from kubecause's last resource version answers 410 Gone.
	waitCompactedPast(t, ctx, events, rv0)
	resume(t, ctx, k)

	waitKubecauseValue(t, k, "kubecause_watch_up", nil, 1)
	promValue(t, s, secret, 3)
	promValue(t, s, timeout, 4)
	waitScrapes(t, s, "kubecause", 3)
	promValue(t, s, secret, 3)
	promValue(t, s, timeout, 4)
	relists := kubecauseCounter(t, s, 0, "kubecause_relists_total", nil) - relists0
	if relists < 1 {
		t.Errorf("kubecause did not relist (relists %g): the test did not exercise a relist", relists)
	}
	lost, ok := kubecauseValue(t, k, "kubecause_events_possibly_lost_total", nil)
	if !ok || lost != 0 {
		t.Errorf("kubecause_events_possibly_lost_total = %g (exported: %v), want 0: every Event of the gap began after the last contact", lost, ok)
	}
	// The gap is shorter than the Event TTL: nothing can have expired in it.
	estimated, ok := kubecauseValue(t, k, "kubecause_events_gap_estimated_lost_total", nil)
	if !ok || estimated != 0 {
		t.Errorf("kubecause_events_gap_estimated_lost_total = %g (exported: %v), want 0: the gap is shorter than the Event TTL", estimated, ok)
	}
	t.Logf("gap (apiserver restart, API down %s, etcd compacted, kubecause paused): counted 7 of 7 occurrences (secret_not_found 3 of 3, mount_timeout 4 of 4); relists %g, possibly lost %g, estimated lost in the gap %g",
		down.Round(time.Millisecond), relists, lost, estimated)
}

// TestStalledScrapeIsCutOthersComplete: a client sends GET /metrics with a small receive buffer and
// no Accept-Encoding, then never reads, against a view whose text is larger than the socket
// buffers, while Events repeat. The other scrapers' scrapes stay complete (every family, the view
// with every entry) and the stalled connection is cut by --web.write-timeout.
func TestStalledScrapeIsCutOthersComplete(t *testing.T) {
	ctx := testContext(t)
	cluster, dir, bins := startCluster(t)
	check(t, cluster.EnsureNamespaces(ctx, "apps"))

	// One view entry per Event (one pod each): ~330 bytes of view text per entry, 5 MB in all,
	// more than the 4 MiB the kernel lets a socket's send buffer grow to.
	const n = 16000
	kubelet := framework.Kubelet(cluster.Client, "worker-1")
	evs := make([]*framework.CoreEvent, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "apps",
					Name: fmt.Sprintf("mspider-mcpc-ckube-remote-7d9fc5b8c4-%05d", i), UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))}
				ev, err := kubelet.Emit(ctx, ref, corev1.EventTypeWarning, "FailedMount", s1Message)
				if err != nil {
					errs <- err
					return
				}
				evs[i] = ev
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating Events: %v", err)
	}
	// The view is this namespace's: the apiserver writes Warnings of its own at times (its
	// ClusterIP repair loop's ClusterIPNotAllocated on default/kubernetes, seen once at load),
	// which would add an entry beside the n.
	k, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause", "--web.write-timeout=3s", "--object-view.max-series=20000", "--events.namespace=apps")
	check(t, err)
	t.Cleanup(func() { _ = k.Stop() })
	waitKubecauseValue(t, k, "kubecause_series", map[string]string{"metric": "kubecause_object_events"}, n)
	full, err := k.Metrics()
	check(t, err)

	// Events repeat throughout (counts change; no entry is born or dies).
	stop := make(chan struct{})
	churned := make(chan int)
	go func() {
		patches := 0
		defer func() { churned <- patches }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := evs[(i*7919)%n].Repeat(ctx, 1); err != nil {
				t.Errorf("repeat: %v", err)
				return
			}
			patches++
		}
	}()

	// The stalled reader.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	conn, err := d.DialContext(ctx, "tcp", k.Addr)
	check(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", k.Addr)
	check(t, err)
	local := conn.LocalAddr().(*net.TCPAddr).Port
	_, kport, _ := net.SplitHostPort(k.Addr)

	// Other scrapers, until kubecause's end of the stalled connection leaves ESTABLISHED (it was
	// closed: the write timeout aborted the response).
	scrapes := 0
	var size int
	check(t, framework.Poll(ctx, 2*time.Minute, func() (bool, error) {
		fams, body, err := scrapeText(k.URL("/metrics"))
		if err != nil {
			return false, err
		}
		scrapes++
		size = len(body)
		for name := range full {
			if _, ok := fams[name]; !ok {
				return false, fmt.Errorf("scrape %d beside the stalled reader lacks %s", scrapes, name)
			}
		}
		for _, name := range []string{"kubecause_object_events", "kubecause_object_event_last_timestamp_seconds"} {
			if got := len(fams[name].GetMetric()); got != n {
				return false, fmt.Errorf("scrape %d beside the stalled reader has %d series of %s, the view %d", scrapes, got, name, n)
			}
		}
		state, err := tcpState(kport, local)
		return state != "01", err // 01: TCP_ESTABLISHED
	}))
	close(stop)
	patches := <-churned
	if scrapes < 2 || patches == 0 {
		t.Fatalf("%d scrapes and %d Event patches while the reader stalled: the test exercised nothing", scrapes, patches)
	}
	// What reaches the stalled reader once it reads: what sat in the socket buffers, then the end.
	check(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
	got, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the stalled connection was not closed (read %d bytes)", got)
	}
	if got >= int64(size) {
		t.Fatalf("the stalled reader received %d bytes, a whole response is %d: it was not cut", got, size)
	}
	t.Logf("stalled reader (receive buffer 4 KiB, no gzip) against a view of %d entries (%d bytes of text): cut by the 3 s write timeout after %d of them; %d complete scrapes beside it while %d Event repeats were written",
		n, size, got, scrapes, patches)
}

// scrapeText fetches a text exposition (no gzip) and parses it.
func scrapeText(url string) (map[string]*dto.MetricFamily, []byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: %s, %v", url, resp.Status, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	return fams, body, err
}

// tcpState is the state (hex, as /proc/net/tcp writes it) of the IPv4 socket whose local port is
// local and remote port remote, or "" when there is none.
func tcpState(local string, remote int) (string, error) {
	lp, err := strconv.Atoi(local)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return "", err
	}
	want := fmt.Sprintf(":%04X", lp)
	wantRemote := fmt.Sprintf(":%04X", remote)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && strings.HasSuffix(f[2], wantRemote) {
			return f[3], nil
		}
	}
	return "", nil
}

// waitCompactedPast waits until a watch of Events from resource version rv answers 410 Gone (etcd
// compacted past it): a client cut off at rv must relist.
func waitCompactedPast(t *testing.T, ctx context.Context, events typedcorev1.EventInterface, rv string) {
	t.Helper()
	check(t, framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		w, err := events.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			st, ok := ev.Object.(*metav1.Status)
			return ev.Type == watch.Error && ok && st.Code == http.StatusGone, nil
		case <-time.After(2 * time.Second):
			return false, nil
		}
	}))
}
