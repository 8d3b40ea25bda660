//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
)

// grafanaVars gives the dashboards' variables the values a user would pick for this stack.
var grafanaVars = strings.NewReplacer(
	"${__data.fields.runbook_url}", "",
	"$__rate_interval", "1m",
	"$__range", "1h",
	"$__interval", "1s",
	"${cluster}", "e2e",
	"$cluster", "e2e",
	"${namespace}", ".*",
	"$namespace", ".*",
)

type panelQuery struct {
	dashboard, panel, expr string
}

// dashboardQueries lists every target expression of every panel (rows included).
func dashboardQueries(t *testing.T, dir string) []panelQuery {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	check(t, err)
	var out []panelQuery
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []panel `json:"panels"`
	}
	var walk func(file string, ps []panel)
	walk = func(file string, ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				if tg.Expr != "" {
					out = append(out, panelQuery{dashboard: filepath.Base(file), panel: p.Title, expr: tg.Expr})
				}
			}
			walk(file, p.Panels)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		check(t, err)
		var d struct {
			Panels []panel `json:"panels"`
		}
		check(t, json.Unmarshal(b, &d))
		walk(f, d.Panels)
	}
	return out
}

// TestDashboardQueries: with the seed scenarios (and a mismatching istiod-remote) playing, every
// panel query of every generated dashboard returns data on the real Prometheus holding real
// kubecause and kube-state-metrics series; the hosted-mesh panels follow the namespace variable.
func TestDashboardQueries(t *testing.T) {
	root, err := framework.RepoRoot()
	check(t, err)
	dir := os.Getenv("KUBECAUSE_E2E_DASHBOARDS")
	if dir == "" {
		dir = filepath.Join(root, "dashboards", "generated")
	}
	queries := dashboardQueries(t, dir)
	if len(queries) == 0 {
		t.Fatalf("no dashboards in %s: run make generate", dir)
	}
	ctx := testContext(t)
	scs := scenarios.SeedScenarios()
	s := startStack(t, framework.StackOptions{Namespaces: scenarios.Namespaces(scs)})
	for _, sc := range scs {
		check(t, sc.Play(ctx, s))
	}
	// S7 on a control-plane cluster, endpoints wrong: the endpoint panels have data.
	const ns = "istio-system"
	must[*corev1.Service](t)(s.Objects.CreateService(ctx, ns, "istiod-remote", false, nil, 15012, 15017))
	must[*corev1.Service](t)(s.Objects.CreateService(ctx, ns, "istiod-mesh-1-hosted", false, map[string]string{"app": "istiod-mesh-1-hosted"}, 15012, 15017))
	p := must[*corev1.Pod](t)(s.Objects.CreatePod(ctx, ns, "istiod-mesh-1-hosted-5c9d8f7b6-x2k9p", framework.PodOptions{Node: "cp-1", Labels: map[string]string{"app": "istiod-mesh-1-hosted"}}))
	must[*corev1.Pod](t)(s.Objects.SetRunning(ctx, p, "10.244.1.5"))
	must[*discoveryv1.EndpointSlice](t)(s.Objects.ApplyEndpointSlice(ctx, ns, "istiod-remote", []string{"10.6.113.50"}, 15012, 15017))
	// A LoadBalancer that did get its address, and a Warning no rule of the cause table knows.
	gw := must[*corev1.Service](t)(s.Objects.CreateService(ctx, ns, "istio-ingressgateway", true, map[string]string{"app": "istio-ingressgateway"}, 80, 443))
	must[*corev1.Service](t)(s.Objects.SetLoadBalancerIngress(ctx, gw, "10.6.10.201"))
	ep := &framework.Recorder{Client: s.Cluster.Client, Component: "endpoint-controller"}
	ue := must[*framework.CoreEvent](t)(ep.Emit(ctx, framework.Ref(gw, "Service", "v1"), corev1.EventTypeWarning, "FailedToUpdateEndpoint",
		`Failed to update endpoint istio-system/istio-ingressgateway: Operation cannot be fulfilled on endpoints "istio-ingressgateway": the object has been modified; please apply your changes to the latest version and try again`))
	check(t, ue.SetCount(ctx, 3))
	promValue(t, s, `sum(kubecause_events_total{cause="unknown",reason="FailedToUpdateEndpoint"})`, 3)
	// Wait for the data the panels show: every expected alert fired.
	for _, sc := range scs {
		for _, a := range sc.Alerts {
			_, err := s.Webhook.WaitFiring(alertTimeout, a.Match())
			check(t, err)
		}
	}
	promValue(t, s, `max(kubecause_endpoints_match{service="istiod-remote"})`, 0)
	waitScrapes(t, s, "kubecause", 5)

	// The SLO panels read rules of 1m-interval groups (windows derived from recorded 5m windows):
	// their first values appear a few evaluations after loading, so each query is polled until it
	// has data, within one shared deadline.
	deadline := time.Now().Add(4 * time.Minute)
	var empty []string
	for _, q := range queries {
		expr := grafanaVars.Replace(q.expr)
		v, err := s.Prometheus.API.Query(ctx, expr)
		for err == nil && len(v) == 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Second)
			v, err = s.Prometheus.API.Query(ctx, expr)
		}
		switch {
		case err != nil:
			t.Errorf("%s / %q: %v\n  %s", q.dashboard, q.panel, err, expr)
		case len(v) == 0:
			empty = append(empty, q.dashboard+" / "+q.panel+": "+expr)
		default:
			t.Logf("%s / %q: %d series, e.g. %s", q.dashboard, q.panel, len(v), v[0])
		}
	}
	sort.Strings(empty)
	for _, e := range empty {
		t.Errorf("panel query returned no data: %s", e)
	}
	t.Logf("dashboards: %d panel queries, %d with data", len(queries), len(queries)-len(empty))

	// The hosted-mesh dashboard honours the namespace variable: every panel has data for the
	// mesh's namespace and none for a namespace without mesh objects (S18's "logging").
	for _, c := range []struct {
		ns       string
		wantData bool
	}{{"istio-system", true}, {"logging", false}} {
		vars := strings.NewReplacer("${namespace}", c.ns, "$namespace", c.ns)
		n := 0
		for _, q := range queries {
			if q.dashboard != "kubecause-hosted-mesh.json" {
				continue
			}
			n++
			expr := grafanaVars.Replace(vars.Replace(q.expr))
			v, err := s.Prometheus.API.Query(ctx, expr)
			switch {
			case err != nil:
				t.Errorf("%s / %q with namespace %s: %v", q.dashboard, q.panel, c.ns, err)
			case c.wantData && len(v) == 0:
				t.Errorf("%s / %q: no data for namespace %s: %s", q.dashboard, q.panel, c.ns, expr)
			case !c.wantData && len(v) > 0:
				t.Errorf("%s / %q: data for namespace %s, which holds no mesh object: %s", q.dashboard, q.panel, c.ns, v)
			}
		}
		if n == 0 {
			t.Fatal("no hosted-mesh dashboard queries")
		}
		t.Logf("hosted-mesh dashboard with namespace %s: %d queries, data expected: %v", c.ns, n, c.wantData)
	}
}
