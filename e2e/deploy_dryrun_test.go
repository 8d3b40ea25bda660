//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

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

// TestDeployDryRun applies every rendering of the Helm chart and of the kustomize overlays with a
// server-side apply dry run against a real kube-apiserver that has the prometheus-operator CRDs
// installed, and creates each rendering's pod under Pod Security "restricted" enforcement (dry run).
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

	// The CRDs a prometheus-operator installation brings (ServiceMonitor, PrometheusRule), for real.
	root := must[string](t)(repo.Root())
	crdFiles := must[[]string](t)(filepath.Glob(filepath.Join(root, "deploy", "test", "crds", "*.yaml")))
	if len(crdFiles) == 0 {
		t.Fatal("no CRDs in deploy/test/crds")
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, f := range crdFiles {
		objs := must[[]deploy.Object](t)(deploy.ParseManifests(must[[]byte](t)(os.ReadFile(f))))
		for _, o := range objs {
			check(t, a.apply(ctx, o, false))
			name := o.Meta("name")
			err := framework.Poll(ctx, 30*time.Second, func() (bool, error) {
				crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, nil
				}
				conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
				for _, cond := range conds {
					m, _ := cond.(map[string]any)
					if m["type"] == "Established" && m["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			})
			if err != nil {
				t.Fatalf("CRD %s not established: %v", name, err)
			}
		}
	}
	a.mapper.Reset()

	// Namespaces the manifests live in exist in a real cluster before anything is installed:
	// istio-system (endpoint checks), the namespaces of events.namespaces, the release namespace.
	nsSet := map[string]bool{}
	for _, r := range renderings {
		for _, o := range r.Objects {
			if ns := o.Meta("namespace"); ns != "" {
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
	t.Run("dry run rejects an invalid object", func(t *testing.T) {
		bad := deploy.Object{"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
			"metadata": map[string]any{"name": "bad", "namespace": namespaces[0]},
			"spec":     map[string]any{"endpoints": []any{map[string]any{"port": "http", "interval": "every minute"}}, "selector": map[string]any{}}}
		if err := a.apply(ctx, bad, true); err == nil {
			t.Fatal("a ServiceMonitor with interval \"every minute\" was accepted")
		}
		priv := deploy.Object{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "privileged", "namespace": "pss-restricted"},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x", "securityContext": map[string]any{"privileged": true}}}}}
		if err := a.apply(ctx, priv, true); err == nil || !apierrors.IsForbidden(err) {
			t.Fatalf("a privileged pod in a restricted namespace: want Forbidden, got %v", err)
		}
	})

	for _, r := range renderings {
		t.Run(r.Name, func(t *testing.T) {
			kinds := map[string]int{}
			for _, o := range r.Objects {
				if err := a.apply(ctx, o, true); err != nil {
					t.Errorf("server-side apply (dry run): %v", err)
					continue
				}
				kinds[o.Kind()]++
				if w := warn.take(); len(w) > 0 {
					t.Errorf("%s: apiserver warnings: %v", o.ID(), w)
				}
			}
			t.Logf("%d objects accepted: %v", len(r.Objects), kinds)
			if r.ServiceMonitor && kinds["ServiceMonitor"] != 1 {
				t.Errorf("%d ServiceMonitors applied, want 1", kinds["ServiceMonitor"])
			}
			if r.PrometheusRule && kinds["PrometheusRule"] != 1 {
				t.Errorf("%d PrometheusRules applied, want 1", kinds["PrometheusRule"])
			}

			// The Deployment's pod passes Pod Security "restricted" admission.
			for _, o := range r.Objects {
				if o.Kind() != "Deployment" {
					continue
				}
				u := &unstructured.Unstructured{Object: o}
				tmpl, ok, _ := unstructured.NestedMap(u.Object, "spec", "template")
				if !ok {
					t.Fatalf("%s: no pod template", o.ID())
				}
				pod := deploy.Object{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
					"name": u.GetName(), "namespace": "pss-restricted", "labels": tmpl["metadata"].(map[string]any)["labels"]},
					"spec": tmpl["spec"]}
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
