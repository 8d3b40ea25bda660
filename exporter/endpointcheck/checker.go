package endpointcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubecause/kubecause/exporter/kube"
)

const (
	// localCluster names the cluster kubecause runs in, wherever a cluster name is expected.
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
	selector                 k8slabels.Selector
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

// Checker evaluates the endpoint checks on every change of the objects involved and exports the
// results as a prometheus.Collector. It reads the objects from an informerCache.
type Checker struct {
	cfg    *Config
	local  kube.Client
	remote map[string]kube.Client
	log    *slog.Logger
	static []spec

	// needs lists the informers the configured checks read, except the EndpointSlice/Endpoints ones,
	// whose resource is decided per namespace at start; epServices lists the Services they check per
	// namespace. discNeeds and the discovered Service are added only when discovery may read them.
	needs      []cacheKey
	epServices map[string][]string
	discNeeds  []cacheKey

	discovery     bool
	discNamespace string

	// Tunables (tests shorten them).
	now       func() time.Time
	resync    time.Duration // re-evaluation from the caches (no apiserver calls)
	syncGrace time.Duration // how long unsynced informers count as "starting", not "error"
	errorHold time.Duration // how long a reported list/watch error keeps a check in "error"
	probeWait time.Duration

	cache   *informerCache // set by Run
	dirty   chan struct{}
	evals   atomic.Int64 // evaluations done (tests wait on it)
	running atomic.Bool
	synced  atomic.Bool

	// discPending is set until Run has decided whether discovery may read its namespace; discDenied
	// holds why it may not (then discovery is off until kubecause restarts).
	discPending atomic.Bool
	discDenied  atomic.Pointer[string]

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
	need := sets.New[cacheKey]()
	for _, ch := range cfg.Checks {
		s := spec{name: ch.Name, namespace: ch.Namespace, service: ch.Service, ports: ch.Ports, cluster: localCluster, srcNamespace: ch.Namespace}
		e := ch.Expect
		switch {
		case e.Pods != nil:
			s.kind, s.cluster, s.srcNamespace = expPods, orLocal(e.Pods.Cluster), or(e.Pods.Namespace, ch.Namespace)
			s.selector, _ = k8slabels.Parse(e.Pods.Selector) // validated
			need.Insert(cacheKey{s.cluster, s.srcNamespace, kube.Pods})
		case e.Service != nil:
			s.kind, s.cluster, s.srcNamespace, s.srcName = expService, orLocal(e.Service.Cluster), or(e.Service.Namespace, ch.Namespace), e.Service.Name
			need.Insert(cacheKey{s.cluster, s.srcNamespace, kube.Pods}, cacheKey{s.cluster, s.srcNamespace, kube.Services})
		case e.LoadBalancer != nil:
			s.kind, s.cluster, s.srcNamespace, s.srcName = expLB, orLocal(e.LoadBalancer.Cluster), or(e.LoadBalancer.Namespace, ch.Namespace), e.LoadBalancer.Service
			need.Insert(cacheKey{s.cluster, s.srcNamespace, kube.Services})
		case len(e.Addresses) > 0:
			s.kind, s.addresses = expStatic, append([]string(nil), e.Addresses...)
		default:
			s.kind = expExternal
		}
		c.epServices[ch.Namespace] = appendNew(c.epServices[ch.Namespace], ch.Service)
		c.static = append(c.static, s)
		c.errorsTotal[s.name] = 0
	}
	c.needs = sortedKeys(need)
	if c.discovery {
		c.discNeeds = []cacheKey{{localCluster, c.discNamespace, kube.Pods}, {localCluster, c.discNamespace, kube.Services}}
		if cp := cfg.Discovery.ControlPlaneCluster; cp != "" {
			c.discNeeds = append(c.discNeeds, cacheKey{cp, c.discNamespace, kube.Services})
		}
	}
	return c, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func sortedKeys(keys sets.Set[cacheKey]) []cacheKey {
	out := keys.UnsortedList()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.cluster != b.cluster {
			return a.cluster < b.cluster
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.resource < b.resource
	})
	return out
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orLocal(c string) string { return or(c, localCluster) }

// Namespaces returns, per cluster (localCluster for the one kubecause runs in), the namespaces and
// resources the checks read — what the RBAC has to allow (get/list/watch).
func (c *Checker) Namespaces() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	add := func(cl, ns, resource string) {
		if out[cl] == nil {
			out[cl] = map[string][]string{}
		}
		if !slices.Contains(out[cl][ns], resource) {
			out[cl][ns] = append(out[cl][ns], resource)
			sort.Strings(out[cl][ns])
		}
	}
	for _, k := range append(append([]cacheKey(nil), c.needs...), c.discNeeds...) {
		add(k.cluster, k.namespace, k.resource.String())
	}
	for ns := range c.epServices {
		add(localCluster, ns, kube.EndpointSlices.String())
	}
	if c.discovery {
		add(localCluster, c.discNamespace, kube.EndpointSlices.String())
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
	clients := map[string]kube.Client{localCluster: c.local}
	maps.Copy(clients, c.remote)
	c.cache = &informerCache{
		clients: clients, log: c.log, now: c.now, onChange: c.kick,
		syncGrace: c.syncGrace, errorHold: c.errorHold, probeWait: c.probeWait,
		started: c.now(), informers: map[cacheKey]*watched{}, epKind: map[string]kube.Resource{},
	}
	for _, k := range c.needs {
		c.cache.start(ctx, k, nil)
	}
	for ns, svcs := range c.epServices {
		if !c.discovery || ns != c.discNamespace {
			c.cache.startEndpoints(ctx, ns, svcs)
		}
	}
	if c.discovery {
		c.discPending.Store(true)
		go c.startDiscovery(ctx)
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

// startDiscovery decides once, at start, whether there is anything for discovery to read: when
// kubecause may not list the Services and pods of the discovery namespace (403) discovery is off,
// otherwise it starts the informers discovery reads. A namespace that does not exist lists as empty:
// discovery then finds no istiod-remote Service and is off too, until one appears.
func (c *Checker) startDiscovery(ctx context.Context) {
	defer c.kick()
	defer c.discPending.Store(false)
	svcs := c.epServices[c.discNamespace] // of configured checks in the discovery namespace
	if why := c.discoveryDenied(ctx); why != "" {
		c.discDenied.Store(&why)
		if len(svcs) > 0 {
			c.cache.startEndpoints(ctx, c.discNamespace, svcs)
		}
		return
	}
	for _, k := range c.discNeeds {
		c.cache.start(ctx, k, nil)
	}
	c.cache.startEndpoints(ctx, c.discNamespace, appendNew(svcs, DefaultService))
}

// discoveryDenied lists one Service and one pod of the discovery namespace; it returns why
// discovery may not read them, or "" (other errors are left to the informers to report).
func (c *Checker) discoveryDenied(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, r := range []kube.Resource{kube.Services, kube.Pods} {
		_, err := c.local.List(ctx, r, c.discNamespace, metav1.ListOptions{Limit: 1})
		if apierrors.IsForbidden(err) {
			return fmt.Sprintf("kubecause may not list %s in namespace %s (RBAC): nothing to discover", r, c.discNamespace)
		}
	}
	return ""
}

func (c *Checker) kick() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}
