//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/e2e/framework"
)

// restoredFamilies are the primary counter families a snapshot carries through a restart.
var restoredFamilies = []string{"kubecause_events_total", "kubecause_objects_affected_total", "kubecause_rule_hits_total"}

// familySeries reads a family of a replica, series by series (its labels, sorted, as the key);
// found is false when the family is absent.
func familySeries(k *framework.Kubecause, name string) (map[string]float64, bool, error) {
	fams, err := k.Metrics()
	if err != nil {
		return nil, false, err
	}
	f, ok := fams[name]
	if !ok {
		return nil, false, nil
	}
	m := map[string]float64{}
	for _, s := range f.GetMetric() {
		var l []string
		for _, p := range s.GetLabel() {
			l = append(l, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
		}
		slices.Sort(l)
		if v := s.GetCounter().GetValue(); v != 0 {
			m["{"+strings.Join(l, ",")+"}"] = v
		}
	}
	return m, true, nil
}

// diffFamily lists the series of want and got whose values differ ("" when none).
func diffFamily(want, got map[string]float64) string {
	var b strings.Builder
	for k, v := range want {
		if got[k] != v {
			fmt.Fprintf(&b, "  %s: %g, want %g\n", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %s: %g, want none\n", k, v)
		}
	}
	return b.String()
}

// TestSnapshotAcrossWatchLayouts: kubecause counts with one layout of its watches, is stopped
// (SIGTERM) and started with another and the same --events.snapshot-file, twice — the default
// selector (one watch of every namespace), then --events.field-selector=type=Warning (a watch of
// the Warnings and one per default Normal reason), then the default selector again with
// --events.namespace=apps — while the kubelet writes Events without pause. Each time, once the
// new watches have read their first lists (/readyz), kubecause_events_total,
// kubecause_objects_affected_total and kubecause_rule_hits_total are served, no lower than before
// the stop, and the log says the restore ended; once the writes end, each is, series by series,
// what a replica that ran throughout with the default layout counts, and kubecause_events_total
// is the apiserver's own counts. Before, with a changed layout the three families stayed absent
// (the restore waited for a watch of the snapshot's scopes that never came).
func TestSnapshotAcrossWatchLayouts(t *testing.T) {
	ctx := testContext(t)
	cluster, dir, bins := startCluster(t)
	const ns = "apps"
	check(t, cluster.EnsureNamespaces(ctx, ns))
	snap := filepath.Join(dir, "events.snapshot")
	common := []string{"--events.snapshot-file=" + snap, "--events.snapshot-interval=1s"}
	k, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause", common...)
	check(t, err)
	t.Cleanup(func() { _ = k.Stop() })
	base := slices.Clone(k.Args[:len(k.Args)-len(common)])
	// The reference: the default layout throughout, with its own snapshot file.
	ref, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause-reference",
		"--events.snapshot-file="+filepath.Join(dir, "reference.snapshot"))
	check(t, err)
	t.Cleanup(func() { _ = ref.Stop() })

	w := startEventWriter(t, ctx, cluster, ns)
	w.waitWrites(t, 40)
	for _, layout := range [][]string{{"--events.field-selector=type=Warning"}, {"--events.namespace=" + ns}} {
		before := namespaceTotal(t, k, ns)
		check(t, k.Stop())
		if log := currentLog(k); !strings.Contains(log, "snapshot written at shutdown") {
			t.Fatalf("no snapshot written at shutdown; log:\n%s", log)
		}
		w.waitWrites(t, 100) // while kubecause is away
		k.Args = append(slices.Clone(base), append(layout, common...)...)
		check(t, k.Restart()) // ready: every first list read
		if got, _ := kubecauseValue(t, k, "kubecause_snapshot_restores_total", map[string]string{"result": "restored"}); got != 1 {
			t.Fatalf("%v: kubecause_snapshot_restores_total{result=\"restored\"} = %g, want 1; log:\n%s", layout, got, currentLog(k))
		}
		// Served once ready (polled: /readyz and the end of the restore are the same instant, the
		// scrape comes after).
		var missing []string
		err := framework.Poll(ctx, metricTimeout, func() (bool, error) {
			missing = missing[:0]
			for _, f := range restoredFamilies {
				if _, found, err := familySeries(k, f); err != nil || !found {
					missing = append(missing, f)
				}
			}
			return len(missing) == 0, nil
		})
		if err != nil {
			t.Fatalf("%v: %v absent after the restart with a snapshot of another layout; log:\n%s", layout, missing, currentLog(k))
		}
		if after := namespaceTotal(t, k, ns); after < before {
			t.Fatalf("%v: kubecause_events_total{namespace=%q} went back from %g to %g", layout, ns, before, after)
		}
		if log := currentLog(k); !strings.Contains(log, "snapshot restore ended") {
			t.Fatalf("%v: no log line says the restore ended:\n%s", layout, log)
		}
		t.Logf("%v: restored, the three families served once ready; kubecause_events_total{namespace=%q} %g before the stop, %g after",
			layout, ns, before, namespaceTotal(t, k, ns))
		w.waitWrites(t, 20)
	}

	w.finish(t)
	want, events := apiserverOccurrences(t, cluster, ns)
	waitKubecauseValue(t, ref, "kubecause_events_total", map[string]string{"namespace": ns}, want)
	for _, f := range restoredFamilies {
		var diff string
		var n int
		err := framework.Poll(ctx, metricTimeout, func() (bool, error) {
			r, _, err := familySeries(ref, f)
			if err != nil {
				return false, nil
			}
			g, _, err := familySeries(k, f)
			if err != nil {
				return false, nil
			}
			diff, n = diffFamily(r, g), len(r)
			return diff == "", nil
		})
		if err != nil {
			t.Fatalf("%s after two changes of layout differs from the reference's:\n%s", f, diff)
		}
		t.Logf("%s: %d series, each equal to the reference's", f, n)
	}
	if got := namespaceTotal(t, k, ns); got != want {
		t.Fatalf("kubecause_events_total{namespace=%q} = %g, the apiserver's Events count %g", ns, got, want)
	}
	t.Logf("after two changes of layout: kubecause_events_total{namespace=%q} = %g = the counts of the apiserver's %d Events (%d writes)",
		ns, want, events, w.writes.Load())
}
