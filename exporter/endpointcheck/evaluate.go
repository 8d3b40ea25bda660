package endpointcheck

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubecause/kubecause/exporter/kube"
)

// States of a check (the `state` label of kubecause_endpoints_state).
const (
	StateMatch    = "match"
	StateMismatch = "mismatch"
	StateUnknown  = "unknown"
	StateError    = "error"
)

// Problems of a wrong address (the `problem` label of kubecause_endpoints_wrong_address).
const (
	ProblemUnexpected = "unexpected"
	ProblemMissing    = "missing"
	ProblemWrongPort  = "wrong_port"
)

var states = []string{StateMatch, StateMismatch, StateUnknown, StateError}
var problems = []string{ProblemUnexpected, ProblemMissing, ProblemWrongPort}

type addrPort struct{ address, port string }

type wrongAddr struct{ address, port, problem string }

// result is the outcome of one evaluation of one check.
type result struct {
	spec   spec
	state  string
	reason string
	// expected is the number of expected address:port pairs; -1 when not known (unknown, error,
	// external expectation).
	expected int
	// actual is the number of address:port pairs found; -1 when the endpoints could not be read.
	actual    int
	addresses []addrPort  // found, sorted
	wrong     []wrongAddr // all, sorted by problem, address, port
}

func errorResult(s spec, err error) *result {
	return &result{spec: s, state: StateError, reason: err.Error(), expected: -1, actual: -1}
}

// evaluate re-runs discovery and every check from the informer caches and publishes the results.
func (c *Checker) evaluate() {
	now := c.now()
	c.synced.Store(c.cache.synced() && !c.discPending.Load())
	specs := append([]spec(nil), c.static...)
	results := map[string]*result{}

	c.mu.Lock()
	disc := c.disc
	c.mu.Unlock()
	if c.discovery && !c.discPending.Load() {
		if denied := c.discDenied.Load(); denied != nil {
			disc = &discoveryResult{off: *denied}
		} else if d, ready, err := c.discover(now); err != nil {
			results[DiscoveredCheck] = errorResult(spec{name: DiscoveredCheck, namespace: c.discNamespace, service: DefaultService},
				fmt.Errorf("discovery: %w", err))
		} else if ready {
			disc = d
		}
		if disc != nil && disc.spec != nil && results[DiscoveredCheck] == nil {
			specs = append(specs, *disc.spec)
		}
	}
	for _, s := range specs {
		if r := c.evalSpec(s, now); r != nil {
			results[s.name] = r
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if disc != nil {
		key := disc.logKey()
		if key != c.discLogKey {
			c.discLogKey = key
			if disc.spec == nil {
				c.log.Info("istiod-remote discovery: check off", "reason", disc.off)
			} else {
				c.log.Info("istiod-remote discovery: hosted mesh found", "check", DiscoveredCheck, "mesh_id", disc.meshID,
					"role", disc.role, "source", disc.source, "service", disc.spec.namespace+"/"+disc.spec.service,
					"expect", disc.spec.describe())
			}
		}
	}
	c.disc = disc
	ts := float64(now.UnixNano()) / 1e9
	for name := range c.lastCheck {
		if results[name] == nil {
			delete(c.lastCheck, name) // e.g. discovery turned the check off
		}
	}
	for name, r := range results {
		if _, ok := c.errorsTotal[name]; !ok {
			c.errorsTotal[name] = 0
		}
		if r.state == StateError {
			c.errorsTotal[name]++
		}
		c.lastCheck[name] = ts
		if key := r.state + "|" + r.reason; c.stateLog[name] != key {
			c.stateLog[name] = key
			attrs := []any{"check", name, "service", r.spec.namespace + "/" + r.spec.service, "state", r.state}
			if r.reason != "" {
				attrs = append(attrs, "reason", r.reason)
			}
			if r.state == StateMatch {
				c.log.Info("endpoint check", attrs...)
			} else {
				c.log.Warn("endpoint check", attrs...)
			}
		}
	}
	c.results = results
	c.evals.Add(1)
}

// evalSpec evaluates one check; nil while its informers are still starting.
func (c *Checker) evalSpec(s spec, now time.Time) *result {
	epk, _ := c.cache.endpointsKey(s.namespace)
	keys := []cacheKey{epk}
	switch s.kind {
	case expPods, expPodPrefix:
		keys = append(keys, cacheKey{s.cluster, s.srcNamespace, kube.Pods})
	case expService:
		keys = append(keys, cacheKey{s.cluster, s.srcNamespace, kube.Services}, cacheKey{s.cluster, s.srcNamespace, kube.Pods})
	case expLB:
		keys = append(keys, cacheKey{s.cluster, s.srcNamespace, kube.Services})
	}
	ok, err := c.cache.ready(now, keys...)
	if err != nil {
		return errorResult(s, err)
	}
	if !ok {
		return nil
	}
	actual := c.cache.endpoints(epk, s.namespace, s.service)
	if s.kind == expExternal {
		return compare(s, nil, actual, true)
	}
	expected, why := c.expected(s)
	if why != "" {
		r := compare(s, nil, actual, true)
		r.state, r.reason, r.wrong, r.expected = StateUnknown, why, nil, -1
		return r
	}
	return compare(s, expected, actual, false)
}

// expected returns the expected addresses, or a reason why they are unknown right now.
func (c *Checker) expected(s spec) (sets.Set[string], string) {
	switch s.kind {
	case expStatic:
		return sets.New(s.addresses...), ""
	case expPods:
		ips := c.cache.podIPs(s.cluster, s.srcNamespace, func(p *corev1.Pod) bool { return s.selector.Matches(k8slabels.Set(p.Labels)) })
		if ips.Len() == 0 {
			return nil, fmt.Sprintf("no running pod with an IP matches %q in %s", s.selector, s.srcNamespace)
		}
		return ips, ""
	case expPodPrefix:
		ips := c.cache.podIPs(s.cluster, s.srcNamespace, func(p *corev1.Pod) bool { return isHostedPod(p.Name, s.srcName) })
		if ips.Len() == 0 {
			return nil, fmt.Sprintf("no running pod named %s* with an IP in %s", s.srcName, s.srcNamespace)
		}
		return ips, ""
	case expService:
		svc := c.cache.service(s.cluster, s.srcNamespace, s.srcName)
		if svc == nil {
			return nil, fmt.Sprintf("Service %s/%s not found", s.srcNamespace, s.srcName)
		}
		if len(svc.Spec.Selector) == 0 {
			return nil, fmt.Sprintf("Service %s/%s has no selector", s.srcNamespace, s.srcName)
		}
		sel := k8slabels.SelectorFromSet(svc.Spec.Selector)
		ips := c.cache.podIPs(s.cluster, s.srcNamespace, func(p *corev1.Pod) bool { return sel.Matches(k8slabels.Set(p.Labels)) })
		if ips.Len() == 0 {
			return nil, fmt.Sprintf("no running pod with an IP behind Service %s/%s", s.srcNamespace, s.srcName)
		}
		return ips, ""
	case expLB:
		svc := c.cache.service(s.cluster, s.srcNamespace, s.srcName)
		if svc == nil {
			return nil, fmt.Sprintf("Service %s/%s not found in cluster %s", s.srcNamespace, s.srcName, s.cluster)
		}
		ips := sets.New[string]()
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				ips.Insert(in.IP)
			} else if in.Hostname != "" {
				ips.Insert(in.Hostname)
			}
		}
		if ips.Len() == 0 {
			return nil, fmt.Sprintf("LoadBalancer Service %s/%s has no ingress address (no LoadBalancer implementation such as metalLB?)", s.srcNamespace, s.srcName)
		}
		return ips, ""
	}
	return nil, "no expectation"
}

// compare sets the state: every expected address must be present with every required port, and no
// other address may be present. Ports beyond the required ones are allowed. With anyAddress (an
// external expectation) only presence and ports are checked.
func compare(s spec, expected sets.Set[string], actual map[string]sets.Set[int32], anyAddress bool) *result {
	r := &result{spec: s, expected: -1}
	req := s.ports
	portStr := func(p int32) string { return strconv.Itoa(int(p)) }
	for addr, ports := range actual {
		if ports.Len() == 0 {
			r.addresses = append(r.addresses, addrPort{addr, ""})
		}
		for _, p := range sets.List(ports) {
			r.addresses = append(r.addresses, addrPort{addr, portStr(p)})
		}
		if !anyAddress && !expected.Has(addr) {
			if ports.Len() == 0 {
				r.wrong = append(r.wrong, wrongAddr{addr, "", ProblemUnexpected})
			}
			for _, p := range sets.List(ports) {
				r.wrong = append(r.wrong, wrongAddr{addr, portStr(p), ProblemUnexpected})
			}
			continue
		}
		for _, p := range req {
			if !ports.Has(p) {
				r.wrong = append(r.wrong, wrongAddr{addr, portStr(p), ProblemWrongPort})
			}
		}
	}
	r.actual = len(r.addresses)
	if !anyAddress {
		perAddr := max(1, len(req))
		r.expected = expected.Len() * perAddr
		for _, addr := range sets.List(expected) {
			if _, ok := actual[addr]; ok {
				continue
			}
			if len(req) == 0 {
				r.wrong = append(r.wrong, wrongAddr{addr, "", ProblemMissing})
			}
			for _, p := range req {
				r.wrong = append(r.wrong, wrongAddr{addr, portStr(p), ProblemMissing})
			}
		}
	}
	sort.Slice(r.addresses, func(i, j int) bool {
		a, b := r.addresses[i], r.addresses[j]
		return a.address < b.address || a.address == b.address && a.port < b.port
	})
	order := map[string]int{ProblemUnexpected: 0, ProblemMissing: 1, ProblemWrongPort: 2}
	sort.Slice(r.wrong, func(i, j int) bool {
		a, b := r.wrong[i], r.wrong[j]
		if a.problem != b.problem {
			return order[a.problem] < order[b.problem]
		}
		if a.address != b.address {
			return a.address < b.address
		}
		return a.port < b.port
	})
	switch {
	case len(actual) == 0:
		r.state, r.reason = StateMismatch, "no endpoints"
	case len(r.wrong) > 0:
		r.state, r.reason = StateMismatch, summarize(r.wrong)
	default:
		r.state = StateMatch
	}
	return r
}

func summarize(w []wrongAddr) string {
	var parts []string
	for i, x := range w {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(w)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s:%s", x.problem, x.address, x.port))
	}
	return strings.Join(parts, ", ")
}
