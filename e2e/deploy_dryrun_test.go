//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubecause/kubecause/deploy"
	"github.com/kubecause/kubecause/e2e/framework"

	"github.com/kubecause/kubecause/internal/repo"
)

// warnings collects the apiserver's warning headers (e.g. Pod Security "warn" results).
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

// applier server-side applies rendered objects through the dynamic client.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func (a *applier) apply(ctx context.Context, o deploy.Object, dryRun bool) error {
	u := &unstructured.Unstructured{Object: o}
	gvk := u.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s: no API for %s: %w", o.ID(), gvk, err)
	}
	var r dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		r = a.dyn.Resource(m.Resource).Namespace(ns)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: "kubecause-e2e", Force: ptrTo(true), FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := r.Patch(ctx, u.GetName(), types.ApplyPatchType, body, opts); err != nil {
		return fmt.Errorf("%s: %w", o.ID(), err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// clusterState is what a cluster has installed, which decides the objects it accepts: objects in istio-system
// need that namespace, ServiceMonitors and PrometheusRules need the prometheus-operator CRDs.
type clusterState struct {
	name  string
	istio bool // namespace istio-system exists
	crds  bool // the prometheus-operator CRDs are installed
}

// accepts tells whether a cluster in state s can take o.
func (s clusterState) accepts(o deploy.Object) bool {
	if o.Meta("namespace") == deploy.IstioNamespace && !s.istio {
		return false
	}
	if strings.HasPrefix(o.APIVersion(), "monitoring.coreos.com/") && !s.crds {
		return false
	}
	return true
}

// TestDeployDryRun applies every rendering of the Helm chart and of the kustomize overlays and
// components with a server-side apply dry run against a real kube-apiserver, in three states of the
// cluster: without istio-system and without the prometheus-operator CRDs, with the CRDs, and with both.
// Renderings that need neither (the defaults) are accepted whole in every state; the others are accepted
// exactly where the state allows, and rejected otherwise (which also shows the dry run checks). Each
// rendering's pods are created (dry run) under Pod Security "restricted" enforcement.
func TestDeployDryRun(t *testing.T) {
	ctx := testContext(t)
	renderings, err := deploy.Renderings()
	check(t, err)

	dir := t.TempDir()
	c, err := framework.StartCluster(dir, framework.ClusterOptions{LogDir: dir})
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "kube-apiserver.log")); err == nil && len(b) > 4000 {
				t.Logf("kube-apiserver log (tail):\n%s", b[len(b)-4000:])
			}
		}
		_ = c.Stop()
	})
	warn := &warnings{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = warn
	dyn := must[*dynamic.DynamicClient](t)(dynamic.NewForConfig(cfg))
	disco := must[*discovery.DiscoveryClient](t)(discovery.NewDiscoveryClientForConfig(cfg))
	a := &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}

	// Namespaces the manifests live in exist in a real cluster before anything is installed: the
	// release namespaces and those of events.namespaces. istio-system only in the last state.
	nsSet := map[string]bool{}
	for _, r := range renderings {
		for _, o := range r.Objects {
			if ns := o.Meta("namespace"); ns != "" && ns != deploy.IstioNamespace {
				nsSet[ns] = true
			}
		}
	}
	var namespaces []string
	for ns := range nsSet {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	check(t, c.EnsureNamespaces(ctx, namespaces...))
	t.Logf("namespaces: %s", strings.Join(namespaces, ", "))

	// A namespace that enforces Pod Security "restricted", for the pods of the Deployments.
	restricted := deploy.Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": "pss-restricted", "labels": map[string]any{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}}}
	check(t, a.apply(ctx, restricted, false))

	// The dry run must reject what a real install would reject, or it proves nothing.
	t.Run("dry run rejects an invalid pod", func(t *testing.T) {
		priv := deploy.Object{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "privileged", "namespace": "pss-restricted"},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x", "securityContext": map[string]any{"privileged": true}}}}}
		if err := a.apply(ctx, priv, true); err == nil || !apierrors.IsForbidden(err) {
			t.Fatalf("a privileged pod in a restricted namespace: want Forbidden, got %v", err)
		}
	})

	states := []clusterState{
		{name: "no Istio, no prometheus-operator CRDs"},
		{name: "no Istio, prometheus-operator CRDs", crds: true},
		{name: "Istio and prometheus-operator CRDs", istio: true, crds: true},
	}
	for _, st := range states {
		if st.crds {
			installCRDs(ctx, t, a, dyn)
			t.Run(st.name+"/dry run rejects an invalid ServiceMonitor", func(t *testing.T) {
				bad := deploy.Object{"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
					"metadata": map[string]any{"name": "bad", "namespace": namespaces[0]},
					"spec":     map[string]any{"endpoints": []any{map[string]any{"port": "http", "interval": "every minute"}}, "selector": map[string]any{}}}
				if err := a.apply(ctx, bad, true); err == nil {
					t.Fatal("a ServiceMonitor with interval \"every minute\" was accepted")
				}
			})
		}
		if st.istio {
			check(t, c.EnsureNamespaces(ctx, deploy.IstioNamespace))
		}
		for _, r := range renderings {
			t.Run(st.name+"/"+r.Name, func(t *testing.T) {
				whole := (st.crds || !r.NeedsCRDs()) && (st.istio || !r.EndpointChecks)
				kinds := map[string]int{}
				rejected := 0
				for _, o := range r.Objects {
					err := a.apply(ctx, o, true)
					switch {
					case st.accepts(o) && err != nil:
						t.Errorf("server-side apply (dry run): %v", err)
						continue
					case !st.accepts(o) && err == nil:
						t.Errorf("%s accepted by a cluster with %s", o.ID(), st.name)
						continue
					case err != nil:
						rejected++
						continue
					}
					kinds[o.Kind()]++
					if w := warn.take(); len(w) > 0 {
						t.Errorf("%s: apiserver warnings: %v", o.ID(), w)
					}
				}
				t.Logf("%d objects accepted: %v; %d rejected as expected", len(r.Objects)-rejected, kinds, rejected)
				if whole != (rejected == 0) {
					t.Errorf("%d objects rejected; the rendering should install whole here: %v", rejected, whole)
				}
				if !whole {
					return
				}
				if r.ServiceMonitor && kinds["ServiceMonitor"] != 1 {
					t.Errorf("%d ServiceMonitors applied, want 1", kinds["ServiceMonitor"])
				}
				if r.PrometheusRule && kinds["PrometheusRule"] != 1 {
					t.Errorf("%d PrometheusRules applied, want 1", kinds["PrometheusRule"])
				}

				// The pods (the Deployment's, the helm test's) pass Pod Security "restricted" admission.
				for _, o := range r.Objects {
					var podSpec, podMeta map[string]any
					switch o.Kind() {
					case "Deployment":
						u := &unstructured.Unstructured{Object: o}
						tmpl, ok, _ := unstructured.NestedMap(u.Object, "spec", "template")
						if !ok {
							t.Fatalf("%s: no pod template", o.ID())
						}
						podSpec, _ = tmpl["spec"].(map[string]any)
						podMeta, _ = tmpl["metadata"].(map[string]any)
					case "Pod":
						podSpec, _ = o["spec"].(map[string]any)
						podMeta, _ = o["metadata"].(map[string]any)
					default:
						continue
					}
					pod := deploy.Object{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
						"name": o.Meta("name"), "namespace": "pss-restricted", "labels": podMeta["labels"]},
						"spec": podSpec}
					if err := a.apply(ctx, pod, true); err != nil {
						t.Errorf("the pod of %s under Pod Security restricted: %v", o.ID(), err)
					}
					if w := warn.take(); len(w) > 0 {
						t.Errorf("the pod of %s: apiserver warnings: %v", o.ID(), w)
					}
				}

				// Dry run means dry: nothing was stored.
				for _, o := range r.Objects {
					if o.Kind() != "Deployment" {
						continue
					}
					_, err := c.Client.AppsV1().Deployments(o.Meta("namespace")).Get(ctx, o.Meta("name"), metav1.GetOptions{})
					if !apierrors.IsNotFound(err) {
						t.Errorf("%s exists after a dry run (err %v)", o.ID(), err)
					}
				}
			})
		}
	}
}

// installCRDs installs the CRDs a prometheus-operator installation brings (ServiceMonitor,
// PrometheusRule), for real, and waits until they are established.
func installCRDs(ctx context.Context, t *testing.T, a *applier, dyn dynamic.Interface) {
	t.Helper()
	root := must[string](t)(repo.Root())
	crdFiles := must[[]string](t)(filepath.Glob(filepath.Join(root, "deploy", "test", "crds", "*.yaml")))
	if len(crdFiles) == 0 {
		t.Fatal("no CRDs in deploy/test/crds")
	}
	installCRDFiles(ctx, t, a, dyn, crdFiles)
}

// TestDeployInstallRun installs the kustomize base for real on a cluster without istio-system and
// without the prometheus-operator CRDs, and runs the exporter with the Deployment's arguments under the
// Deployment's ServiceAccount (impersonated): the read-only RBAC it installs is enough to become ready,
// nothing is forbidden, and no endpoint check runs. Then, with istio-system created, the endpoint-checks
// component is installed and the exporter runs with the checks on, again without a forbidden request.
func TestDeployInstallRun(t *testing.T) {
	ctx := testContext(t)
	bins, err := framework.FindBinaries(true)
	check(t, err)
	dir := t.TempDir()
	c, err := framework.StartCluster(dir, framework.ClusterOptions{LogDir: dir})
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	dyn := must[*dynamic.DynamicClient](t)(dynamic.NewForConfig(c.Config))
	disco := must[*discovery.DiscoveryClient](t)(discovery.NewDiscoveryClientForConfig(c.Config))
	a := &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}

	run := func(t *testing.T, dirName string, wantChecks bool) {
		objs := must[[]deploy.Object](t)(deploy.KustomizeBuild(dirName))
		var args []string
		var ns, sa, healthAddr string
		for _, o := range objs {
			check(t, a.apply(ctx, o, false))
			if o.Kind() == "Deployment" {
				u := &unstructured.Unstructured{Object: o}
				containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				for _, x := range containers[0].(map[string]any)["args"].([]any) {
					// StartKubecause listens on a free port of 127.0.0.1 instead, and logs at debug level;
					// the health listener (the probes' port) moves to a free port of 127.0.0.1 too.
					s := x.(string)
					switch {
					case strings.HasPrefix(s, "--web.health-listen-address="):
						healthAddr = must[string](t)(framework.FreeAddr())
						args = append(args, "--web.health-listen-address="+healthAddr)
					case strings.HasPrefix(s, "--events.snapshot-file="):
						// The pod's emptyDir: a file of the test's own directory.
						args = append(args, "--events.snapshot-file="+filepath.Join(t.TempDir(), "events.snapshot"))
					case !strings.HasPrefix(s, "--web.listen-address=") && !strings.HasPrefix(s, "--log.level="):
						args = append(args, s)
					}
				}
				ns = u.GetNamespace()
				sa, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "serviceAccountName")
			}
		}
		if ns == "" || sa == "" {
			t.Fatalf("%s: no Deployment with a ServiceAccount", dirName)
		}
		want := "--no-endpoint-checks.enabled"
		if wantChecks {
			want = "--endpoint-checks.enabled"
		}
		if !slices.Contains(args, want) {
			t.Fatalf("args %v lack %s", args, want)
		}
		if healthAddr == "" {
			t.Fatalf("args %v lack --web.health-listen-address (the probes' port)", args)
		}

		// A kubeconfig that acts as the ServiceAccount, as the pod's token would.
		kc := must[*clientcmdapi.Config](t)(clientcmd.LoadFromFile(c.KubeconfigPath))
		for _, ai := range kc.AuthInfos {
			ai.Impersonate = "system:serviceaccount:" + ns + ":" + sa
			ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
		}
		kcPath := filepath.Join(t.TempDir(), "kubeconfig")
		check(t, clientcmd.WriteToFile(*kc, kcPath))

		k, err := framework.StartKubecause(bins.Kubecause, kcPath, dir, "kubecause-"+filepath.Base(dirName), args...)
		if err != nil {
			t.Fatalf("kubecause under the ServiceAccount %s/%s did not become ready: %v", ns, sa, err)
		}
		defer func() { _ = k.Stop() }()
		// What the kubelet's probes ask: plain HTTP on the health listener, no credentials.
		for _, path := range []string{"/readyz", "/healthz"} {
			resp, err := http.Get("http://" + healthAddr + path)
			if err != nil {
				t.Fatalf("health listener %s: %v", path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("health listener %s: %d, want 200", path, resp.StatusCode)
			}
		}
		fams := must[map[string]*dto.MetricFamily](t)(k.Metrics())
		if _, ok := fams["kubecause_build_info"]; !ok {
			t.Errorf("no kubecause_build_info")
		}
		if v, found := framework.MetricValue(fams, "kubecause_endpoints_check_errors_total", nil); found && v > 0 {
			t.Errorf("endpoint check errors: %v", v)
		}
		if !wantChecks {
			// Checks off: no endpoint check series at all (with them on, which series exist depends on
			// what discovery finds; an empty istio-system has nothing to check).
			for name := range fams {
				if strings.HasPrefix(name, "kubecause_endpoints_") {
					t.Errorf("endpoint checks are off, but %s is exported", name)
				}
			}
		}
		if log := k.Log(0); strings.Contains(strings.ToLower(log), "forbidden") {
			t.Errorf("a request was forbidden:\n%s", k.Log(4000))
		}
	}

	t.Run("no Istio: the base", func(t *testing.T) {
		if _, err := c.Client.CoreV1().Namespaces().Get(ctx, deploy.IstioNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("namespace %s exists (err %v)", deploy.IstioNamespace, err)
		}
		run(t, "deploy/kustomize/base", false)
	})
	t.Run("Istio: the endpoint-checks component", func(t *testing.T) {
		check(t, c.EnsureNamespaces(ctx, deploy.IstioNamespace))
		run(t, "deploy/test/kustomize/endpoint-checks", true)
	})
}
