//go:build e2e

package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
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
