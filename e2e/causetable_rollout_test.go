//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/causes"
)

// writeUserTable writes a user's own cause table: the built-in one with its version set and each
// edit (a line of the built-in file and what replaces it) applied once, and checks that it loads.
func writeUserTable(t *testing.T, path, version string, edits ...[2]string) *causes.Table {
	t.Helper()
	src := string(causes.DefaultYAML())
	builtin := fmt.Sprintf("version: %q\n", causes.Default().Version())
	for _, e := range append([][2]string{{builtin, fmt.Sprintf("version: %q\n", version)}}, edits...) {
		if n := strings.Count(src, e[0]); n != 1 {
			t.Fatalf("the built-in table holds %q %d times, want once", e[0], n)
		}
		src = strings.Replace(src, e[0], e[1], 1)
	}
	tab, err := causes.Parse([]byte(src))
	if err != nil {
		t.Fatalf("the user's table does not load: %v", err)
	}
	check(t, os.WriteFile(path, []byte(src), 0o644))
	return tab
}

// nextMinor is the version after v (major.minor.patch) by its minor: a table newer than v.
func nextMinor(t *testing.T, v string) string {
	t.Helper()
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("the built-in table's version %q: %v", v, err)
	}
	return fmt.Sprintf("%d.%d.0", major, minor+1)
}

// ruleEvaluationFailures is the sum of Prometheus' prometheus_rule_evaluation_failures_total,
// read from its own /metrics (the stack's Prometheus does not scrape itself).
func ruleEvaluationFailures(t *testing.T, p *framework.Prometheus) float64 {
	t.Helper()
	fams, err := framework.ScrapeMetrics(p.URL("/metrics"))
	check(t, err)
	v, ok := framework.MetricValue(fams, "prometheus_rule_evaluation_failures_total", nil)
	if !ok {
		t.Fatal("prometheus exports no prometheus_rule_evaluation_failures_total")
	}
	return v
}

// promAlert waits until Prometheus holds a firing alert matching match whose annotations satisfy
// cond, and returns it.
func promAlert(t *testing.T, s *framework.Stack, match map[string]string, what string, cond func(framework.ActiveAlert) bool) framework.ActiveAlert {
	t.Helper()
	var found framework.ActiveAlert
	var seen []framework.ActiveAlert
	err := framework.Poll(context.Background(), alertTimeout, func() (bool, error) {
		alerts, err := s.Prometheus.API.Alerts(context.Background())
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, a := range alerts {
			if a.State == "firing" && labelsInclude(a.Labels, match) {
				seen = append(seen, a)
				if cond(a) {
					found = a
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("prometheus holds no firing alert %v %s: firing: %+v", match, what, seen)
	}
	return found
}

// TestRolloutAcrossCauseTables is a rolling upgrade of kubecause onto a newer cause table whose
// properties differ for a cause that pages: the old replica runs the built-in table, the new one
// the user's table, its version the built-in's next minor, with another runbook for
// configmap_not_found. The same Prometheus scrapes both. A pod's alert fires while the old replica is alone; the new replica
// starts (both serve their tables); a second pod's alert fires; the old replica stops and its
// series age out of the rules' 2m windows. Throughout, no rule evaluation fails (the rules join
// the tables' properties once, the newer table's: no many-to-many match), each alert fires once
// and stays firing (same activeAt, no resolved and no second firing notification), and once the
// newer table is scraped both alerts link its runbook.
func TestRolloutAcrossCauseTables(t *testing.T) {
	ctx := testContext(t)
	const ns, cause = "apps", "configmap_not_found"
	builtinRunbook := "#" + cause // the built-in runbook's section of kubecausepodvolumefailing.md
	userRunbook := "https://wiki.example.internal/runbooks/" + cause
	version := nextMinor(t, causes.Default().Version()) + "-acme.1"
	path := filepath.Join(t.TempDir(), "causes.yaml")
	tab := writeUserTable(t, path, version,
		[2]string{"    runbook: kubecausepodvolumefailing#" + cause + "\n", "    runbook: " + userRunbook + "\n"})
	if causes.VersionNumber(tab.Version()) <= causes.VersionNumber(causes.Default().Version()) {
		t.Fatalf("the user's table %s is not newer than the built-in %s", tab.Version(), causes.Default().Version())
	}
	s := startStack(t, framework.StackOptions{Namespaces: []string{ns}, KubecauseReplicas: 2, KubecauseDeferred: 1,
		KubecauseReplicaArgs: [][]string{nil, {"--causes.file=" + path}}})
	old, upgraded := s.Kubecause[0], s.Kubecause[1]
	failures0 := ruleEvaluationFailures(t, s.Prometheus)
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	firing := func(name string) {
		t.Helper()
		pod := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, ns, name, framework.PodOptions{Node: "worker-1"}))
		must[*corev1.Pod](t)(s.Objects.SetWaiting(ctx, pod, "ContainerCreating", ""))
		must[*framework.CoreEvent](t)(kubelet.Emit(ctx, framework.PodRef(pod), corev1.EventTypeWarning, "FailedMount", s1Message))
	}
	alertOf := func(pod string) map[string]string {
		return map[string]string{"alertname": "KubecausePodVolumeFailing", "namespace": ns, "pod": pod, "cause": cause}
	}
	latest := fmt.Sprintf(`cluster_cause:kubecause_cause_info:latest{cause=%q}`, cause)

	// The old replica alone: the built-in runbook.
	firing("web-0")
	got, err := s.Webhook.WaitFiring(alertTimeout, alertOf("web-0"))
	check(t, err)
	if u := got[0].Annotations["runbook_url"]; !strings.HasSuffix(u, builtinRunbook) {
		t.Fatalf("old replica alone: runbook_url %q, want the built-in …%s", u, builtinRunbook)
	}
	first := promAlert(t, s, alertOf("web-0"), "", func(framework.ActiveAlert) bool { return true })
	t.Logf("old replica alone: %v", got[0])

	// The new replica starts: both tables are scraped; the newer one's properties win.
	check(t, upgraded.Restart())
	promValue(t, s, fmt.Sprintf(`kubecause_causes_table_version{instance=%q}`, upgraded.Addr), causes.VersionNumber(version))
	promValue(t, s, fmt.Sprintf(`count(last_over_time(kubecause_cause_info{cause=%q}[2m]))`, cause), 2)
	v, err := s.Prometheus.API.WaitFor(ctx, latest, metricTimeout, func(v framework.Vector) bool {
		return len(v) == 1 && v[0].Labels["runbook_url"] == userRunbook
	})
	check(t, err)
	t.Logf("both replicas scraped: %s", v)
	promAlert(t, s, alertOf("web-0"), "linking the newer table's runbook", func(a framework.ActiveAlert) bool {
		return a.Annotations["runbook_url"] == userRunbook
	})
	firing("api-0")
	got, err = s.Webhook.WaitFiring(alertTimeout, alertOf("api-0"))
	check(t, err)
	if u := got[0].Annotations["runbook_url"]; u != userRunbook {
		t.Errorf("both replicas: runbook_url %q, want the newer table's %s", u, userRunbook)
	}
	second := promAlert(t, s, alertOf("api-0"), "", func(framework.ActiveAlert) bool { return true })
	t.Logf("both replicas: %v", got[0])

	// The old replica stops; the rules read its series for 2m more (last_over_time), then the
	// new table alone.
	check(t, old.Stop())
	stopped := time.Now()
	if _, err := s.Prometheus.API.WaitFor(ctx, fmt.Sprintf(`count(last_over_time(kubecause_cause_info{instance=%q}[2m]))`, old.Addr), 4*time.Minute,
		func(v framework.Vector) bool { return len(v) == 0 }); err != nil {
		t.Fatal(err)
	}
	left := time.Now()
	t.Logf("the old replica's series left the rules' windows %s after it stopped", left.Sub(stopped).Round(time.Second))
	// The record as evaluated after that: the new table alone.
	v, err = s.Prometheus.API.WaitFor(ctx, fmt.Sprintf(`timestamp(%s) > %d`, latest, left.Unix()+1), metricTimeout, func(v framework.Vector) bool { return len(v) > 0 })
	check(t, err)
	v, err = s.Prometheus.API.Query(ctx, latest)
	check(t, err)
	if len(v) != 1 || v[0].Labels["runbook_url"] != userRunbook {
		t.Errorf("the new replica alone: %s = %s, want one series linking %s", latest, v, userRunbook)
	}

	for _, want := range []framework.ActiveAlert{first, second} {
		a := promAlert(t, s, want.Labels, "", func(framework.ActiveAlert) bool { return true })
		if !a.ActiveAt.Equal(want.ActiveAt) {
			t.Errorf("%s of %s: active since %s, was since %s: it resolved in between", a.Labels["alertname"], a.Labels["pod"], a.ActiveAt, want.ActiveAt)
		}
		if u := a.Annotations["runbook_url"]; u != userRunbook {
			t.Errorf("%s of %s: runbook_url %q after the rollout, want %s", a.Labels["alertname"], a.Labels["pod"], u, userRunbook)
		}
	}
	for _, pod := range []string{"web-0", "api-0"} {
		var n []string
		for _, x := range s.Webhook.All() {
			if labelsInclude(x.Labels, alertOf(pod)) {
				n = append(n, x.String())
			}
		}
		if len(n) != 1 || !strings.HasPrefix(n[0], "[firing]") {
			t.Errorf("%s: want one firing notification and nothing after it, got %d:\n%s", pod, len(n), strings.Join(n, "\n"))
		}
	}
	f := ruleEvaluationFailures(t, s.Prometheus)
	if f != 0 {
		t.Errorf("prometheus_rule_evaluation_failures_total = %g after the rollout (%g before it), want 0; the rules' errors: %s", f, failures0, s.Logs(3000))
	}
	t.Logf("rollout across two tables: %g rule evaluation failures, each alert fired once and stayed firing (pager: %v)", f, s.Webhook.All())
}
