//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/pages"
)

// TestFlood: many distinct reasons in many namespaces against small caps. The caps hold, what
// does not fit is counted in the overflow series (no occurrence lost), drops are counted,
// memory stays bounded and every scrape keeps succeeding.
func TestFlood(t *testing.T) {
	const (
		namespaces = 20
		perNS      = 25 // distinct reasons per namespace
		maxSeries  = 50
		maxView    = 40
	)
	var nsNames []string
	for i := 0; i < namespaces; i++ {
		nsNames = append(nsNames, fmt.Sprintf("flood-%02d", i))
	}
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: nsNames,
		KubecauseArgs: []string{fmt.Sprintf("--events.max-series=%d", maxSeries), fmt.Sprintf("--object-view.max-series=%d", maxView)}})
	kubelet := framework.Kubelet(s.Cluster.Client, "node-flood")
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, namespaces)
	for _, ns := range nsNames {
		wg.Add(1)
		go func(ns string) {
			defer wg.Done()
			p, err := s.Objects.CreatePod(ctx, ns, "app-0", framework.PodOptions{Node: "node-flood"})
			if err != nil {
				errs <- err
				return
			}
			for r := 0; r < perNS; r++ {
				if _, err := kubelet.Emit(ctx, framework.PodRef(p), corev1.EventTypeWarning, fmt.Sprintf("FloodReason%02d", r),
					fmt.Sprintf("synthetic failure %d of a flood of distinct reasons", r)); err != nil {
					errs <- err
					return
				}
			}
		}(ns)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := float64(namespaces * perNS)
	t.Logf("flood: %g Events with %d distinct (namespace, reason) written in %s", total, namespaces*perNS, time.Since(start).Round(time.Millisecond))

	// Nothing lost: the overflow series carries what did not fit.
	promValue(t, s, `sum(kubecause_events_total)`, total)
	v := promQuery(t, s, `count(kubecause_events_total{namespace!="_overflow"})`)
	if len(v) != 1 || v[0].Value > maxSeries {
		t.Errorf("kubecause_events_total label sets besides the overflow: %s, cap %d", v, maxSeries)
	}
	over := promQuery(t, s, `sum(kubecause_events_total{namespace="_overflow"})`)
	dropped := promQuery(t, s, `sum(kubecause_series_dropped_total{metric="kubecause_events_total"})`)
	if len(over) != 1 || over[0].Value <= 0 || len(dropped) != 1 || dropped[0].Value <= 0 {
		t.Errorf("want occurrences in the overflow series and drops counted: overflow %s, dropped %s", over, dropped)
	}
	view := promQuery(t, s, `count(kubecause_object_events)`)
	if len(view) != 1 || view[0].Value > maxView {
		t.Errorf("kubecause_object_events series %s, cap %d", view, maxView)
	}
	// Scrapes keep succeeding.
	waitScrapes(t, s, "kubecause", 5)
	failed := promQuery(t, s, `sum(count_over_time((up{job="kubecause"} == 0)[5m:1s]))`)
	if len(failed) == 1 && failed[0].Value > 0 {
		t.Errorf("failed scrapes of kubecause during the flood: %s", failed)
	}
	rss := promQuery(t, s, `max(process_resident_memory_bytes{job="kubecause"})`)
	dur := promQuery(t, s, `max_over_time(scrape_duration_seconds{job="kubecause"}[5m])`)
	samples := promQuery(t, s, `max(scrape_samples_scraped{job="kubecause"})`)
	if len(rss) == 1 && rss[0].Value > 256<<20 {
		t.Errorf("kubecause resident memory %.0f MiB after the flood, want < 256 MiB", rss[0].Value/(1<<20))
	}
	t.Logf("flood: sum %g (exact), label sets %s (cap %d), overflow %s, dropped %s, view series %s (cap %d), RSS %s bytes, max scrape duration %s s, samples per scrape %s",
		total, v, maxSeries, over, dropped, view, maxView, rss, dur, samples)
}

// TestFloodOfOneNamespaceLeavesOthersVisible: issue 42 on a real apiserver. One tenant's pods fail
// to mount by the hundred and fill the per-object view (--object-view.max-series=100); then a pod
// of another namespace fails to mount. Its problem must be in kubecause_object_events (what the
// alerts read), on /problems and in kubecause_objects_affected_total (the pod-start SLI). Before,
// it was counted in kubecause_events_total only: the view refused every new entry for as long as
// the tenant's Events lived.
func TestFloodOfOneNamespaceLeavesOthersVisible(t *testing.T) {
	const (
		maxView = 100
		flood   = 150
		msg     = `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`
	)
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"tenant", "shop"},
		KubecauseArgs: []string{fmt.Sprintf("--object-view.max-series=%d", maxView)}})
	k := s.Kubecause[0]
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	fail := func(ns, name string) {
		t.Helper()
		p := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, ns, name, framework.PodOptions{Node: "worker-1"}))
		must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(p), corev1.EventTypeWarning, "FailedMount", msg))
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < flood; i += 4 {
				fail("tenant", fmt.Sprintf("job-%03d", i))
			}
		})
	}
	wg.Wait()
	waitKubecauseValue(t, k, "kubecause_events_total", map[string]string{"namespace": "tenant", "reason": "FailedMount"}, flood)
	// The view is full (the apiserver may have written a Warning of its own into it).
	view := map[string]string{"metric": "kubecause_object_events"}
	waitKubecauseValue(t, k, "kubecause_series", view, maxView)
	refused, _ := kubecauseValue(t, k, "kubecause_series_dropped_total", view)
	if refused < flood-maxView {
		t.Fatalf("kubecause_series_dropped_total{metric=kubecause_object_events} = %g, want at least %d", refused, flood-maxView)
	}

	fail("shop", "web-0")
	web := map[string]string{"namespace": "shop", "kind": "Pod", "name": "web-0", "reason": "FailedMount", "cause": "secret_not_found"}
	waitKubecauseValue(t, k, "kubecause_object_events", web, 1)
	waitKubecauseValue(t, k, "kubecause_objects_affected_total", map[string]string{"namespace": "shop", "kind": "Pod", "cause": "secret_not_found"}, 1)
	waitKubecauseValue(t, k, "kubecause_series", view, maxView)
	if v, _ := kubecauseValue(t, k, "kubecause_object_events_evicted_total", nil); v < 1 {
		t.Errorf("kubecause_object_events_evicted_total = %g, want at least 1 (the tenant entry shop's took the place of)", v)
	}
	resp, err := http.Get(k.URL("/problems?format=json&namespace=shop"))
	check(t, err)
	defer resp.Body.Close()
	var list pages.ProblemList
	check(t, json.NewDecoder(resp.Body).Decode(&list))
	if !slices.ContainsFunc(list.Problems, func(p pages.Problem) bool { return p.Name == "web-0" && p.Cause == "secret_not_found" }) {
		t.Errorf("/problems?namespace=shop does not show web-0: %+v", list.Problems)
	}
	// What Prometheus, and so the alerts and the SLI, see.
	promValue(t, s, `sum(kubecause_object_events{namespace="shop",name="web-0"})`, 1)
	promValue(t, s, `sum(kubecause_objects_affected_total{namespace="shop"})`, 1)
	t.Logf("%d tenant pods failing against a view of %d: shop/web-0 shown, 1 tenant entry evicted, %d tenant Events refused",
		flood, maxView, flood-maxView)
}
