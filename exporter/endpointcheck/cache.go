package endpointcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubecause/kubecause/exporter/kube"
)

// cacheKey names one informer: a resource in one namespace of one cluster. EndpointSlice and
// Endpoints informers are further scoped to the checked Services by label or field selector.
type cacheKey struct {
	cluster, namespace string
	resource           kube.Resource
}

// watched is one running informer and the last list/watch error it reported.
type watched struct {
	inf     cache.SharedIndexInformer
	mu      sync.Mutex
	lastErr error
	errAt   time.Time
}

func (w *watched) setErr(err error, at time.Time) (first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first = w.lastErr == nil
	w.lastErr, w.errAt = err, at
	return first
}

// clearErr forgets the last error; it reports whether there was one.
func (w *watched) clearErr() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := w.lastErr != nil
	w.lastErr = nil
	return had
}

func (w *watched) recentErr(now time.Time, hold time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastErr != nil && now.Sub(w.errAt) < hold {
		return w.lastErr
	}
	return nil
}

// informerCache holds the informers the checks read, keyed by cluster, namespace and resource. It
// knows nothing about the checks: it starts informers on request, tells onChange when any of them
// changes, and answers reads from their stores.
type informerCache struct {
	clients  map[string]kube.Client // by cluster name, localCluster included
	log      *slog.Logger
	now      func() time.Time
	onChange func()

	syncGrace time.Duration // how long unsynced informers count as starting, not as an error
	errorHold time.Duration // how long a reported list/watch error keeps a read in error
	probeWait time.Duration // between attempts to probe the EndpointSlice API

	started time.Time
	pending atomic.Int32 // endpoint probes not yet decided

	mu        sync.Mutex
	informers map[cacheKey]*watched
	epKind    map[string]kube.Resource // local namespace -> kube.EndpointSlices or kube.Endpoints
}

// start runs the informer of k unless it runs already. svcs scopes EndpointSlice and Endpoints
// informers to those Services.
func (c *informerCache) start(ctx context.Context, k cacheKey, svcs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.informers[k] != nil {
		return
	}
	var tweak func(*metav1.ListOptions)
	switch k.resource {
	case kube.EndpointSlices:
		ls := sliceSelector(svcs)
		tweak = func(o *metav1.ListOptions) { o.LabelSelector = ls }
	case kube.Endpoints:
		if len(svcs) == 1 {
			fs := fields.OneTermEqualSelector("metadata.name", svcs[0]).String()
			tweak = func(o *metav1.ListOptions) { o.FieldSelector = fs }
		}
	}
	inf := newInformer(c.clients[k.cluster], k.namespace, k.resource, tweak)
	_ = inf.SetTransform(slim)
	w := &watched{inf: inf}
	log := c.log.With("cluster", k.cluster, "namespace", k.namespace, "kind", k.resource.String())
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		if w.setErr(err, c.now()) {
			log.Warn("list/watch failed", "err", err)
		}
		c.onChange()
	})
	changed := func() {
		if w.clearErr() {
			log.Info("list/watch recovered")
		}
		c.onChange()
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(any, any) { changed() },
		DeleteFunc: func(any) { changed() },
	})
	c.informers[k] = w
	go inf.RunWithContext(ctx)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			c.onChange()
		}
	}()
}

// startEndpoints decides whether the Services svcs of local namespace ns are read through
// discovery.k8s.io/v1 EndpointSlices or, when the cluster has no such API (404) or the RBAC does
// not allow it (403), through core/v1 Endpoints, and starts that informer in the background.
func (c *informerCache) startEndpoints(ctx context.Context, ns string, svcs []string) {
	c.pending.Add(1)
	go func() {
		defer c.pending.Add(-1)
		r, ok := c.probeEndpoints(ctx, ns, svcs)
		if !ok {
			return
		}
		c.mu.Lock()
		c.epKind[ns] = r
		c.mu.Unlock()
		c.start(ctx, cacheKey{localCluster, ns, r}, svcs)
		c.onChange()
	}()
}

func (c *informerCache) probeEndpoints(ctx context.Context, ns string, svcs []string) (kube.Resource, bool) {
	for attempt := 0; ; attempt++ {
		_, err := c.clients[localCluster].List(ctx, kube.EndpointSlices, ns, metav1.ListOptions{Limit: 1, LabelSelector: sliceSelector(svcs)})
		if err == nil {
			return kube.EndpointSlices, true
		}
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			c.log.Info("EndpointSlices cannot be read, falling back to core/v1 Endpoints", "namespace", ns, "reason", err)
			return kube.Endpoints, true
		}
		if attempt >= 2 {
			// The apiserver is not answering; the informer's own retries report the error.
			c.log.Warn("probing EndpointSlices failed, using them anyway", "namespace", ns, "err", err)
			return kube.EndpointSlices, true
		}
		select {
		case <-ctx.Done():
			return 0, false
		case <-time.After(c.probeWait):
		}
	}
}

// endpointsKey is the informer the endpoints of local namespace ns are read from; ok is false
// while the probe has not decided it yet.
func (c *informerCache) endpointsKey(ns string) (k cacheKey, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.epKind[ns]
	if !ok {
		r = kube.EndpointSlices
	}
	return cacheKey{localCluster, ns, r}, ok
}

func sliceSelector(svcs []string) string {
	req, err := k8slabels.NewRequirement(discoveryv1.LabelServiceName, selection.In, svcs)
	if err != nil {
		return ""
	}
	return k8slabels.NewSelector().Add(*req).String()
}

// newInformer is an informer of one resource in one namespace. It is built from a ListWatch rather
// than client-go's informer factory, whose package links informers and listers of every API group
// into the binary (docs/performance.md).
func newInformer(client kube.Client, ns string, r kube.Resource, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformerWithOptions(kube.ListWatch(client, r, ns, tweak), kube.Object(r),
		cache.SharedIndexInformerOptions{Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}})
}

// slim keeps only what the checks read, so a namespace full of pods costs little memory.
func slim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion,
				Labels: o.Labels, DeletionTimestamp: o.DeletionTimestamp,
			},
			Status: corev1.PodStatus{Phase: o.Status.Phase, PodIP: o.Status.PodIP, PodIPs: o.Status.PodIPs},
		}
		for _, ct := range o.Spec.Containers {
			for _, e := range ct.Env {
				if e.Name == meshIDEnv && e.Value != "" {
					p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: ct.Name, Env: []corev1.EnvVar{{Name: e.Name, Value: e.Value}}})
				}
			}
		}
		return p, nil
	case *corev1.Service:
		s := o.DeepCopy()
		s.ManagedFields, s.Annotations = nil, nil
		return s, nil
	case *discoveryv1.EndpointSlice:
		s := o.DeepCopy()
		s.ManagedFields, s.Annotations = nil, nil
		return s, nil
	case *corev1.Endpoints: //nolint:staticcheck // fallback
		s := o.DeepCopy()
		s.ManagedFields, s.Annotations = nil, nil
		return s, nil
	}
	return obj, nil
}

func (c *informerCache) watched(k cacheKey) *watched {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.informers[k]
}

// ready reports whether all informers of keys have synced; err is set once waiting is an error.
func (c *informerCache) ready(now time.Time, keys ...cacheKey) (ok bool, err error) {
	for _, k := range keys {
		w := c.watched(k)
		if w == nil || !w.inf.HasSynced() {
			if now.Sub(c.started) < c.syncGrace {
				return false, nil
			}
			what := fmt.Sprintf("%s in %s/%s not synced", k.resource, k.cluster, k.namespace)
			if w != nil {
				if e := w.recentErr(now, now.Sub(c.started)+time.Second); e != nil {
					return false, fmt.Errorf("%s: %w", what, e)
				}
			}
			return false, errors.New(what)
		}
		if e := w.recentErr(now, c.errorHold); e != nil {
			return false, fmt.Errorf("%s in %s/%s: %w", k.resource, k.cluster, k.namespace, e)
		}
	}
	return true, nil
}

// synced reports whether every endpoint probe has decided and every informer has listed.
func (c *informerCache) synced() bool {
	if c.pending.Load() > 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.informers {
		if !w.inf.HasSynced() {
			return false
		}
	}
	return true
}

func (c *informerCache) list(k cacheKey) []any {
	w := c.watched(k)
	if w == nil {
		return nil
	}
	return w.inf.GetStore().List()
}

func (c *informerCache) service(cluster, ns, name string) *corev1.Service {
	w := c.watched(cacheKey{cluster, ns, kube.Services})
	if w == nil {
		return nil
	}
	obj, ok, err := w.inf.GetStore().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	s, _ := obj.(*corev1.Service)
	return s
}

// pods returns the pods of cluster/ns.
func (c *informerCache) pods(cluster, ns string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range c.list(cacheKey{cluster, ns, kube.Pods}) {
		if p, ok := obj.(*corev1.Pod); ok && p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// podIPs returns the IPs of the live pods in cluster/ns accepted by match.
func (c *informerCache) podIPs(cluster, ns string, match func(*corev1.Pod) bool) sets.Set[string] {
	out := sets.New[string]()
	for _, p := range c.pods(cluster, ns) {
		if p.DeletionTimestamp != nil || !match(p) {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Status.PodIP != "" {
			out.Insert(p.Status.PodIP)
		}
		for _, ip := range p.Status.PodIPs {
			if ip.IP != "" {
				out.Insert(ip.IP)
			}
		}
	}
	return out
}

// endpoints reads the ready address:port pairs of Service ns/svc from the EndpointSlices (or
// Endpoints) informer k. An address without any port maps to an empty set.
func (c *informerCache) endpoints(k cacheKey, ns, svc string) map[string]sets.Set[int32] {
	out := map[string]sets.Set[int32]{}
	add := func(addr string, ports []int32) {
		if out[addr] == nil {
			out[addr] = sets.New[int32]()
		}
		out[addr].Insert(ports...)
	}
	for _, obj := range c.list(k) {
		switch o := obj.(type) {
		case *discoveryv1.EndpointSlice:
			if o.Namespace != ns || o.Labels[discoveryv1.LabelServiceName] != svc {
				continue
			}
			var ports []int32
			for _, p := range o.Ports {
				if p.Port != nil {
					ports = append(ports, *p.Port)
				}
			}
			for _, ep := range o.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, a := range ep.Addresses {
					add(a, ports)
				}
			}
		case *corev1.Endpoints: //nolint:staticcheck // fallback
			if o.Namespace != ns || o.Name != svc {
				continue
			}
			for _, ss := range o.Subsets {
				var ports []int32
				for _, p := range ss.Ports {
					ports = append(ports, p.Port)
				}
				for _, a := range ss.Addresses {
					add(a.IP, ports)
				}
			}
		}
	}
	return out
}
