//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
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

// scrapedValue reads a value from a replica's /metrics for a poll: a refused scrape (503 while
// the scrapes queued during a pause are served at once) is "not yet", not a failure.
func scrapedValue(k *framework.Kubecause, name string, labels map[string]string) (float64, bool) {
	fams, err := k.Metrics()
	if err != nil {
		return 0, false
	}
	return framework.MetricValue(fams, name, labels)
}

// resume continues a paused kubecause and waits until it answers a scrape: the scrapes
// Prometheus sent while it was stopped (one a second) are all served at once when it resumes,
// and past --web.max-requests the telemetry path refuses with 503, as designed.
func resume(t *testing.T, ctx context.Context, k *framework.Kubecause) {
	t.Helper()
	check(t, k.Resume())
	check(t, framework.Poll(ctx, time.Minute, func() (bool, error) {
		_, err := k.Metrics()
		return err == nil, nil
	}))
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
// section, a severity, a summary and a description. An alert with ExplainedBy may reach it as
// that alert instead, never as both.
func expectAlertsFire(t *testing.T, s *framework.Stack, alerts []scenarios.ExpectedAlert) {
	t.Helper()
	for _, a := range alerts {
		got, which, err := waitFiring(s, a)
		check(t, err)
		if which.Name != a.Name {
			t.Logf("%s: %s paged instead: the eviction is its detail", a.Name, which.Name)
		}
		for _, n := range got {
			t.Logf("alert received: %v", n)
			if !which.RunbookOK(n.Annotations["runbook_url"]) {
				t.Errorf("%s: runbook_url %q, want …/%s", which.Name, n.Annotations["runbook_url"], which.Runbook)
			}
			if n.Labels["severity"] == "" || n.Annotations["summary"] == "" || n.Annotations["description"] == "" {
				t.Errorf("%s: severity, summary and description must be set: %v %v", which.Name, n.Labels, n.Annotations)
			}
		}
		if len(got) != 1 {
			t.Errorf("%s: want exactly one alert matching %v, got %d", which.Name, which.Match(), len(got))
		}
	}
}

// waitFiring waits until the webhook received a firing notification of a, or of a.ExplainedBy
// when set, within alertTimeout, and returns them and the alert they are of.
func waitFiring(s *framework.Stack, a scenarios.ExpectedAlert) ([]framework.Notification, scenarios.ExpectedAlert, error) {
	candidates := []scenarios.ExpectedAlert{a}
	if a.ExplainedBy != nil {
		candidates = append(candidates, *a.ExplainedBy)
	}
	var got []framework.Notification
	which := a
	err := framework.Poll(context.Background(), alertTimeout, func() (bool, error) {
		for _, c := range candidates {
			if got = s.Webhook.Firing(c.Match()); len(got) > 0 {
				which = c
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, a, fmt.Errorf("no firing notification matching %v within %s", a.Match(), alertTimeout)
	}
	return got, which, nil
}

// paged returns the alert of a that reached the pager: a, or a.ExplainedBy when that one did.
func paged(s *framework.Stack, a scenarios.ExpectedAlert) scenarios.ExpectedAlert {
	if a.ExplainedBy != nil && len(s.Webhook.Firing(a.ExplainedBy.Match())) > 0 {
		return *a.ExplainedBy
	}
	return a
}

// neverPaged fails the test for each firing notification of an explained alert.
func neverPaged(t *testing.T, s *framework.Stack, id string, a scenarios.ExpectedAlert, explainedBy string) {
	t.Helper()
	for _, n := range s.Webhook.Firing(a.Match()) {
		t.Errorf("%s: %s reached the pager although %s explains it: %v", id, a.Name, explainedBy, n)
	}
}
