//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
)

const (
	metricTimeout = 60 * time.Second  // an occurrence reaches Prometheus (1 s scrapes)
	alertTimeout  = 120 * time.Second // an alert reaches the webhook (`for` capped at 5 s)
	// resolveTimeout bounds the wait for an alert to resolve after its fix: the mixin holds pod
	// alerts 2 min past the last bad sample (a kube-state-metrics restart must not resolve them)
	// and KubecauseNodeNotReady 5 min past the last NotReady sample (a flapping node keeps paging).
	resolveTimeout = 7 * time.Minute
)

// promValue waits until expr has exactly one sample equal to want and logs it.
// startCluster starts etcd and the apiserver alone (no Prometheus, no node) in a temporary
// directory, stopped when the test ends, and returns it with that directory and the binaries.
func startCluster(t *testing.T) (*framework.Cluster, string, framework.Binaries) {
	t.Helper()
	bins, err := framework.FindBinaries(true)
	check(t, err)
	dir := t.TempDir()
	cluster, err := framework.StartCluster(filepath.Join(dir, "cluster"), framework.ClusterOptions{LogDir: dir})
	check(t, err)
	t.Cleanup(func() { _ = cluster.Stop() })
	return cluster, dir, bins
}

func promValue(t *testing.T, s *framework.Stack, expr string, want float64) {
	t.Helper()
	v, err := s.Prometheus.API.WaitValue(context.Background(), expr, want, metricTimeout)
	if err != nil {
		t.Fatalf("want %s == %g: %v", expr, want, err)
	}
	t.Logf("prometheus: %s = %s", expr, v)
}

// promZero waits until expr is absent or every sample is 0.
func promZero(t *testing.T, s *framework.Stack, expr string) framework.Vector {
	t.Helper()
	v, err := s.Prometheus.API.WaitFor(context.Background(), expr, metricTimeout, func(v framework.Vector) bool {
		for _, x := range v {
			if x.Value != 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("want %s absent or 0: %v", expr, err)
	}
	return v
}

// promQuery runs expr once.
func promQuery(t *testing.T, s *framework.Stack, expr string) framework.Vector {
	t.Helper()
	v, err := s.Prometheus.API.Query(context.Background(), expr)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// scrapesOf returns how many times Prometheus scraped job so far (within the last hour).
func scrapesOf(t *testing.T, s *framework.Stack, job string) float64 {
	t.Helper()
	v := promQuery(t, s, fmt.Sprintf(`sum(count_over_time(up{job=%q}[1h]))`, job))
	if len(v) == 0 {
		return 0
	}
	return v[0].Value
}

// waitScrapes waits until Prometheus scraped job n more times, successfully, from now on.
func waitScrapes(t *testing.T, s *framework.Stack, job string, n float64) {
	t.Helper()
	base := scrapesOf(t, s, job)
	expr := fmt.Sprintf(`sum(count_over_time(up{job=%q}[1h]))`, job)
	if _, err := s.Prometheus.API.WaitFor(context.Background(), expr, metricTimeout, func(v framework.Vector) bool {
		return len(v) == 1 && v[0].Value >= base+n
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prometheus.API.WaitValue(context.Background(), fmt.Sprintf(`min(up{job=%q})`, job), 1, metricTimeout); err != nil {
		t.Fatal(err)
	}
}

// restartKubecause stops replica i gracefully, starts it again, and waits until Prometheus
// has scraped the new process a few times. It returns how long the replica was away.
func restartKubecause(t *testing.T, s *framework.Stack, i int) time.Duration {
	t.Helper()
	k := s.Kubecause[i]
	before := processStart(t, k)
	start := time.Now()
	check(t, k.Stop())
	check(t, k.Restart())
	away := time.Since(start)
	after := processStart(t, k)
	if after == before {
		t.Fatalf("kubecause did not restart (process_start_time_seconds %v unchanged)", before)
	}
	expr := fmt.Sprintf(`process_start_time_seconds{job="kubecause",instance=%q}`, k.Addr)
	if _, err := s.Prometheus.API.WaitValue(context.Background(), expr, after, metricTimeout); err != nil {
		t.Fatal(err)
	}
	waitScrapes(t, s, "kubecause", 3)
	t.Logf("kubecause %s restarted: ready again after %s", k.Addr, away.Round(time.Millisecond))
	return away
}

func processStart(t *testing.T, k *framework.Kubecause) float64 {
	t.Helper()
	fams, err := k.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := framework.MetricValue(fams, "process_start_time_seconds", nil)
	if !ok {
		t.Fatal("kubecause exports no process_start_time_seconds")
	}
	return v
}

// kubecauseValue reads one value from a replica's /metrics (0, false when absent).
func kubecauseValue(t *testing.T, k *framework.Kubecause, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := k.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return framework.MetricValue(fams, name, labels)
}

// waitKubecauseValue polls a replica's /metrics until the value equals want.
func waitKubecauseValue(t *testing.T, k *framework.Kubecause, name string, labels map[string]string, want float64) {
	t.Helper()
	var got float64
	var found bool
	err := framework.Poll(context.Background(), metricTimeout, func() (bool, error) {
		fams, err := k.Metrics()
		if err != nil {
			return false, nil
		}
		got, found = framework.MetricValue(fams, name, labels)
		return found && got == want, nil
	})
	if err != nil {
		t.Fatalf("kubecause /metrics %s: got %g (present %v), want %g", sel(name, labels), got, found, want)
	}
	t.Logf("kubecause /metrics: %s = %s", sel(name, labels), strconv.FormatFloat(got, 'g', -1, 64))
}

// firesNothing waits 20 more scrapes of kubecause (every rule is evaluated each second and `for` is
// capped at 5 s, so every alert has had time to fire), then fails the test for every notification
// the pager received and every alert Prometheus holds. It returns how many alerts Prometheus holds.
func firesNothing(ctx context.Context, t *testing.T, s *framework.Stack, what string) int {
	t.Helper()
	waitScrapes(t, s, "kubecause", 20)
	if n := s.Webhook.All(); len(n) != 0 {
		t.Errorf("%s: the pager received %v", what, n)
	}
	alerts, err := s.Prometheus.API.Alerts(ctx)
	check(t, err)
	for _, a := range alerts {
		t.Errorf("%s: prometheus holds %s alert %v", what, a.State, a.Labels)
	}
	return len(alerts)
}

// expectAlertsFire waits until each alert reaches the pager exactly once, with its runbook
// section, a severity, a summary and a description.
func expectAlertsFire(t *testing.T, s *framework.Stack, alerts []scenarios.ExpectedAlert) {
	t.Helper()
	for _, a := range alerts {
		got, err := waitFiring(t, s, a.Match(), a.MayBeMutedBy)
		check(t, err)
		for _, n := range got {
			t.Logf("alert received: %v", n)
			if !a.RunbookOK(n.Annotations["runbook_url"]) {
				t.Errorf("%s: runbook_url %q, want …/%s", a.Name, n.Annotations["runbook_url"], a.Runbook)
			}
			if n.Labels["severity"] == "" || n.Annotations["summary"] == "" || n.Annotations["description"] == "" {
				t.Errorf("%s: severity, summary and description must be set: %v %v", a.Name, n.Labels, n.Annotations)
			}
		}
		if len(got) != 1 {
			t.Errorf("%s: want exactly one alert matching %v, got %d", a.Name, a.Match(), len(got))
		}
	}
}

// mutedLimit bounds how long an expected alert may stay muted before its notification comes
// (waitFiring).
const mutedLimit = 10 * time.Minute

// waitFiring waits until the webhook received a firing notification matching match, within
// alertTimeout. When mayBeMutedBy is set, time during which Alertmanager holds the alert inhibited
// by that alert (and no other) does not count: the pager gets the muting alert then and this one
// when it ends, so the wait starts again then (up to mutedLimit in all). Seen on the real node at
// load: S18-LOW's eviction while the kubelet, still under its disk threshold, reported DiskPressure
// for 2 min — KubecauseNodePressure paged and muted KubecausePodEvicted until it resolved.
func waitFiring(t *testing.T, s *framework.Stack, match map[string]string, mayBeMutedBy string) ([]framework.Notification, error) {
	t.Helper()
	var got []framework.Notification
	start := time.Now()
	deadline := start.Add(alertTimeout)
	var muted time.Duration
	var last time.Time
	err := framework.Poll(context.Background(), alertTimeout+mutedLimit, func() (bool, error) {
		if got = s.Webhook.Firing(match); len(got) > 0 {
			return true, nil
		}
		now := time.Now()
		if mayBeMutedBy != "" && mutedOnlyBy(s, match, mayBeMutedBy) {
			if !last.IsZero() {
				muted += now.Sub(last)
			}
			last = now
			deadline = now.Add(alertTimeout)
		} else {
			last = time.Time{}
		}
		if now.After(deadline) {
			return false, fmt.Errorf("no firing notification matching %v within %s (muted %s of %s)", match, alertTimeout, muted.Round(time.Second), now.Sub(start).Round(time.Second))
		}
		return false, nil
	})
	if muted > 0 {
		t.Logf("%v was muted by %s for %s before its notification", match, mayBeMutedBy, muted.Round(time.Second))
	}
	return got, err
}

// mutedOnlyBy reports whether Alertmanager holds the one alert matching match inhibited by alerts
// named alertname and no other.
func mutedOnlyBy(s *framework.Stack, match map[string]string, alertname string) bool {
	held, err := framework.AlertmanagerAlerts(s.Alertmanager, match)
	if err != nil || len(held) != 1 || held[0].Status.State != "suppressed" || len(held[0].Status.InhibitedBy) == 0 {
		return false
	}
	all, err := framework.AlertmanagerAlerts(s.Alertmanager, nil)
	if err != nil {
		return false
	}
	by := map[string]bool{}
	for _, a := range all {
		if slices.Contains(held[0].Status.InhibitedBy, a.Fingerprint) {
			by[a.Labels["alertname"]] = true
		}
	}
	return len(by) == 1 && by[alertname]
}
