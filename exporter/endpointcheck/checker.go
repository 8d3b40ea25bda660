package endpointcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubecause/kubecause/exporter/kube"
)

// Kinds of objects watched. Each (cluster, namespace, kind) gets one informer scoped to that
// namespace (and, for EndpointSlices/Endpoints, to the checked
// Services by label/field selector).
const (
	kindPods      = "pods"
	kindServices  = "services"
	kindSlices    = "endpointslices"
	kindEndpoints = "endpoints"

	localCluster = "local"
	// maxWrongSeries caps kubecause_endpoints_wrong_address (and kubecause_endpoints_address) per check.
	maxWrongSeries = 20
)

// Expectation kinds of the internal spec.
const (
	expPods      = "pods"
	expPodPrefix = "podPrefix" // discovery only: pods named <prefix><replicaset-hash>-<pod-hash>
	expService   = "service"
	expLB        = "loadBalancer"
	expStatic    = "addresses"
	expExternal  = "external"
)

// spec is a check in the form the evaluator uses, from the config or from discovery.
type spec struct {
	name, namespace, service string
	ports                    []int32
	kind                     string
	cluster, srcNamespace    string // where the expectation is read
	selector                 labels.Selector
	srcName                  string // Service name (service, loadBalancer) or pod name prefix
	addresses                []string
}

func (s spec) describe() string {
	where := s.srcNamespace
	if s.cluster != localCluster {
		where = s.cluster + ":" + where
	}
	switch s.kind {
	case expPods:
		return fmt.Sprintf("pod IPs of pods %s in %s", s.selector, where)
	case expPodPrefix:
		return fmt.Sprintf("pod IPs of pods named %s* in %s", s.srcName, where)
	case expService:
		return fmt.Sprintf("pod IPs of the pods selected by Service %s/%s", where, s.srcName)
	case expLB:
		return fmt.Sprintf("LoadBalancer ingress of Service %s/%s", where, s.srcName)
	case expStatic:
		return "addresses " + strings.Join(s.addresses, ",")
	default:
		return "any address (compared across clusters in PromQL); presence and ports checked here"
	}
}

type infKey struct{ cluster, namespace, kind string }

// watched is one running informer and the last list/watch error it reported.
type watched struct {
	inf     cache.SharedIndexInformer
	mu      sync.Mutex
	lastErr error
	errAt   time.Time
}

func (w *watched) setErr(err error, at time.Time) {
	w.mu.Lock()
	w.lastErr, w.errAt = err, at
	w.mu.Unlock()
}

func (w *watched) recentErr(now time.Time, hold time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastErr != nil && now.Sub(w.errAt) < hold {
		return w.lastErr
	}
	return nil
}

// Checker evaluates the endpoint checks on every change of the objects involved and exports the
// results as a prometheus.Collector.
type Checker struct {
	cfg    *Config
	local  kube.Client
	remote map[string]kube.Client
	log    *slog.Logger
	static []spec

	discovery     bool
	discNamespace string

	// needs lists every informer the checks need (except the EndpointSlice/Endpoints ones, whose
	// kind is decided per namespace at start); epServices lists the Services checked per namespace.
	needs      []infKey
	epServices map[string][]string

	// Tunables (tests shorten them).
	now       func() time.Time
	resync    time.Duration // re-evaluation from the caches (no apiserver calls)
	syncGrace time.Duration // how long unsynced informers count as "starting", not "error"
	errorHold time.Duration // how long a reported list/watch error keeps a check in "error"
	probeWait time.Duration

	dirty   chan struct{}
	evals   atomic.Int64 // evaluations done (tests wait on it)
	running atomic.Bool
	synced  atomic.Bool

	infMu     sync.Mutex
	informers map[infKey]*watched
	epKind    map[string]string // local namespace -> kindSlices | kindEndpoints
	started   time.Time

	mu          sync.Mutex
	results     map[string]*result
	errorsTotal map[string]float64
	lastCheck   map[string]float64
	disc        *discoveryResult
	discLogKey  string
	stateLog    map[string]string
}

// New prepares a Checker. cfg may be nil (zero-config discovery). remote holds a client for every
// cluster named in cfg.clusters (see Config.RemoteClients).
func New(cfg *Config, local kube.Client, remote map[string]kube.Client, logger *slog.Logger) (*Checker, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if local == nil {
		return nil, errors.New("endpoint checks: no Kubernetes client")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Checker{
		cfg: cfg, local: local, remote: remote, log: logger,
		discovery: cfg.discoveryEnabled(), discNamespace: cfg.Discovery.Namespace,
		epServices: map[string][]string{},
		now:        time.Now, resync: 30 * time.Second, syncGrace: 30 * time.Second,
		errorHold: time.Minute, probeWait: 2 * time.Second,
		dirty:       make(chan struct{}, 1),
		informers:   map[infKey]*watched{},
		epKind:      map[string]string{},
		results:     map[string]*result{},
		errorsTotal: map[string]float64{},
		lastCheck:   map[string]float64{},
		stateLog:    map[string]string{},
	}
	if c.discNamespace == "" {
		c.discNamespace = DefaultNamespace
	}
	for _, cl := range cfg.Clusters {
		if remote[cl.Name] == nil {
			return nil, fmt.Errorf("endpoint checks: no client for cluster %q (see Config.RemoteClients)", cl.Name)
		}
	}
	need := map[infKey]bool{}
	addEP := func(ns, svc string) {
		for _, s := range c.epServices[ns] {
			if s == svc {
				return
			}
		}
		c.epServices[ns] = append(c.epServices[ns], svc)
	}
	for _, ch := range cfg.Checks {
		s := spec{name: ch.Name, namespace: ch.Namespace, service: ch.Service, ports: ch.Ports, cluster: localCluster, srcNamespace: ch.Namespace}
		e := ch.Expect
		switch {
		case e.Pods != nil:
			s.kind, s.cluster, s.srcNamespace = expPods, orLocal(e.Pods.Cluster), or(e.Pods.Namespace, ch.Namespace)
			s.selector, _ = labels.Parse(e.Pods.Selector) // validated
			need[infKey{s.cluster, s.srcNamespace, kindPods}] = true
		case e.Service != nil:
			s.kind, s.cluster, s.srcNamespace, s.srcName = expService, orLocal(e.Service.Cluster), or(e.Service.Namespace, ch.Namespace), e.Service.Name
			need[infKey{s.cluster, s.srcNamespace, kindPods}] = true
			need[infKey{s.cluster, s.srcNamespace, kindServices}] = true
		case e.LoadBalancer != nil:
			s.kind, s.cluster, s.srcNamespace, s.srcName = expLB, orLocal(e.LoadBalancer.Cluster), or(e.LoadBalancer.Namespace, ch.Namespace), e.LoadBalancer.Service
			need[infKey{s.cluster, s.srcNamespace, kindServices}] = true
		case len(e.Addresses) > 0:
			s.kind, s.addresses = expStatic, append([]string(nil), e.Addresses...)
		default:
			s.kind = expExternal
		}
		addEP(ch.Namespace, ch.Service)
		c.static = append(c.static, s)
		c.errorsTotal[s.name] = 0
	}
	if c.discovery {
		addEP(c.discNamespace, DefaultService)
		need[infKey{localCluster, c.discNamespace, kindPods}] = true
		need[infKey{localCluster, c.discNamespace, kindServices}] = true
		if cp := cfg.Discovery.ControlPlaneCluster; cp != "" {
			need[infKey{cp, c.discNamespace, kindServices}] = true
		}
	}
	for k := range need {
		c.needs = append(c.needs, k)
	}
	sort.Slice(c.needs, func(i, j int) bool {
		a, b := c.needs[i], c.needs[j]
		return a.cluster+"/"+a.namespace+"/"+a.kind < b.cluster+"/"+b.namespace+"/"+b.kind
	})
	return c, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orLocal(c string) string { return or(c, localCluster) }

func (c *Checker) client(cluster string) kube.Client {
	if cluster == localCluster {
		return c.local
	}
	return c.remote[cluster]
}

// Namespaces returns, per cluster ("local" for the one kubecause runs in), the namespaces and kinds
// the checks read — what the RBAC has to allow (get/list/watch).
func (c *Checker) Namespaces() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	add := func(cl, ns, kind string) {
		if out[cl] == nil {
			out[cl] = map[string][]string{}
		}
		for _, k := range out[cl][ns] {
			if k == kind {
				return
			}
		}
		out[cl][ns] = append(out[cl][ns], kind)
		sort.Strings(out[cl][ns])
	}
	for _, k := range c.needs {
		add(k.cluster, k.namespace, k.kind)
	}
	for ns := range c.epServices {
		add(localCluster, ns, kindSlices)
	}
	return out
}

// Synced reports whether every informer has completed its initial list.
func (c *Checker) Synced() bool { return c.synced.Load() }

// Run starts the informers and evaluates the checks on every change (and every resync period from
// the caches) until ctx is done. It returns nil when there is nothing to check.
func (c *Checker) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("endpoint checks: Run called twice")
	}
	if len(c.static) == 0 && !c.discovery {
		c.log.Info("no endpoint checks configured and discovery disabled")
		c.synced.Store(true)
		<-ctx.Done()
		return nil
	}
	c.infMu.Lock()
	c.started = c.now()
	c.infMu.Unlock()
	for _, k := range c.needs {
		c.startInformer(ctx, k, nil)
	}
	for ns, svcs := range c.epServices {
		go c.probeAndWatchEndpoints(ctx, ns, svcs)
	}
	ticker := time.NewTicker(c.resync)
	defer ticker.Stop()
	c.kick()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.dirty:
		case <-ticker.C:
		}
		c.evaluate()
	}
}

func (c *Checker) kick() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}

// probeAndWatchEndpoints decides whether namespace ns is read through discovery.k8s.io/v1
// EndpointSlices or, when the cluster has no such API (404) or the RBAC does not allow it (403),
// through core/v1 Endpoints — then starts that informer.
func (c *Checker) probeAndWatchEndpoints(ctx context.Context, ns string, svcs []string) {
	kind := kindSlices
	for attempt := 0; ; attempt++ {
		_, err := c.local.List(ctx, kube.EndpointSlices, ns, metav1.ListOptions{Limit: 1, LabelSelector: sliceSelector(svcs)})
		if err == nil {
			break
		}
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			kind = kindEndpoints
			c.log.Info("EndpointSlices cannot be read, falling back to core/v1 Endpoints", "namespace", ns, "reason", err)
			break
		}
		if attempt >= 2 {
			// The apiserver is not answering; the informer's own retries report the error.
			c.log.Warn("probing EndpointSlices failed, using them anyway", "namespace", ns, "err", err)
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.probeWait):
		}
	}
	c.infMu.Lock()
	c.epKind[ns] = kind
	c.infMu.Unlock()
	c.startInformer(ctx, infKey{localCluster, ns, kind}, svcs)
	c.kick()
}

func sliceSelector(svcs []string) string {
	req, err := labels.NewRequirement(discoveryv1.LabelServiceName, selection.In, svcs)
	if err != nil {
		return ""
	}
	return labels.NewSelector().Add(*req).String()
}

func (c *Checker) startInformer(ctx context.Context, k infKey, svcs []string) {
	var sel func(*metav1.ListOptions)
	switch k.kind {
	case kindSlices:
		ls := sliceSelector(svcs)
		sel = func(o *metav1.ListOptions) { o.LabelSelector = ls }
	case kindEndpoints:
		if len(svcs) == 1 {
			fs := fields.OneTermEqualSelector("metadata.name", svcs[0]).String()
			sel = func(o *metav1.ListOptions) { o.FieldSelector = fs }
		}
	}
	inf := newInformer(c.client(k.cluster), k.namespace, k.kind, sel)
	_ = inf.SetTransform(slim)
	w := &watched{inf: inf}
	log := c.log.With("cluster", k.cluster, "namespace", k.namespace, "kind", k.kind)
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		w.mu.Lock()
		first := w.lastErr == nil
		w.mu.Unlock()
		w.setErr(err, c.now())
		if first {
			log.Warn("list/watch failed", "err", err)
		}
		c.kick()
	})
	changed := func() {
		w.mu.Lock()
		if w.lastErr != nil {
			log.Info("list/watch recovered")
		}
		w.lastErr = nil
		w.mu.Unlock()
		c.kick()
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(any, any) { changed() },
		DeleteFunc: func(any) { changed() },
	})
	c.infMu.Lock()
	c.informers[k] = w
	c.infMu.Unlock()
	go inf.RunWithContext(ctx)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			c.kick()
		}
	}()
}

// newInformer is an informer of one kind in one namespace. It is built from a ListWatch rather than
// client-go's informer factory, whose package links informers and listers of every API group into
// the binary (docs/performance.md).
func newInformer(client kube.Client, ns, kind string, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
	r := kube.Endpoints // the fallback for clusters without EndpointSlices
	switch kind {
	case kindPods:
		r = kube.Pods
	case kindServices:
		r = kube.Services
	case kindSlices:
		r = kube.EndpointSlices
	}
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

func (c *Checker) watchedFor(k infKey) *watched {
	c.infMu.Lock()
	defer c.infMu.Unlock()
	return c.informers[k]
}

func (c *Checker) endpointKey(ns string) (infKey, bool) {
	c.infMu.Lock()
	defer c.infMu.Unlock()
	kind, ok := c.epKind[ns]
	return infKey{localCluster, ns, kind}, ok
}

// ready reports whether all informers of keys have synced; err is set once waiting is an error.
func (c *Checker) ready(now time.Time, keys ...infKey) (ok bool, err error) {
	c.infMu.Lock()
	started := c.started
	c.infMu.Unlock()
	for _, k := range keys {
		w := c.watchedFor(k)
		if w == nil || !w.inf.HasSynced() {
			if now.Sub(started) < c.syncGrace {
				return false, nil
			}
			what := fmt.Sprintf("%s in %s/%s not synced", k.kind, k.cluster, k.namespace)
			if w != nil {
				if e := w.recentErr(now, now.Sub(started)+time.Second); e != nil {
					return false, fmt.Errorf("%s: %w", what, e)
				}
			}
			return false, errors.New(what)
		}
		if e := w.recentErr(now, c.errorHold); e != nil {
			return false, fmt.Errorf("%s in %s/%s: %w", k.kind, k.cluster, k.namespace, e)
		}
	}
	return true, nil
}

func (c *Checker) updateSynced() {
	c.infMu.Lock()
	defer c.infMu.Unlock()
	if len(c.epKind) < len(c.epServices) {
		c.synced.Store(false)
		return
	}
	for _, w := range c.informers {
		if !w.inf.HasSynced() {
			c.synced.Store(false)
			return
		}
	}
	c.synced.Store(true)
}

func (c *Checker) list(k infKey) []any {
	w := c.watchedFor(k)
	if w == nil {
		return nil
	}
	return w.inf.GetStore().List()
}

func (c *Checker) getService(cluster, ns, name string) *corev1.Service {
	w := c.watchedFor(infKey{cluster, ns, kindServices})
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

// podIPs returns the IPs of the live pods in cluster/ns accepted by match.
func (c *Checker) podIPs(cluster, ns string, match func(*corev1.Pod) bool) sets.Set[string] {
	out := sets.New[string]()
	for _, obj := range c.list(infKey{cluster, ns, kindPods}) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Namespace != ns || p.DeletionTimestamp != nil || !match(p) {
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

// actual reads the ready address:port pairs of Service ns/svc from its EndpointSlices (or
// Endpoints). An address without any port maps to an empty set.
func (c *Checker) actual(k infKey, ns, svc string) map[string]sets.Set[int32] {
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
