package endpointcheck

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubecause/kubecause/exporter/labels"
)

var (
	checkLabels = []string{"check", "namespace", "service"}

	descMatch = prometheus.NewDesc("kubecause_endpoints_match",
		"1 when the endpoints equal the expectation, 0 when they do not; absent while the state is unknown or error.",
		checkLabels, nil)
	descState = prometheus.NewDesc("kubecause_endpoints_state",
		"1 for the current state of the endpoint check (match, mismatch, unknown, error), 0 for the others.",
		append(checkLabels, "state"), nil)
	descExpected = prometheus.NewDesc("kubecause_endpoints_expected_addresses",
		"Number of expected address:port pairs.", checkLabels, nil)
	descActual = prometheus.NewDesc("kubecause_endpoints_actual_addresses",
		"Number of ready address:port pairs found in the EndpointSlices (or Endpoints).", checkLabels, nil)
	descWrong = prometheus.NewDesc("kubecause_endpoints_wrong_address",
		"One series per wrong address:port (unexpected, missing, wrong_port), at most 20 per check.",
		append(checkLabels, "address", "port", "problem"), nil)
	descWrongCount = prometheus.NewDesc("kubecause_endpoints_wrong_addresses",
		"Number of wrong address:port pairs per problem, including those beyond the series cap.",
		append(checkLabels, "problem"), nil)
	descAddress = prometheus.NewDesc("kubecause_endpoints_address",
		"One series per address:port found in the endpoints (at most 20 per check), for comparisons across clusters.",
		append(checkLabels, "address", "port"), nil)
	descErrors = prometheus.NewDesc("kubecause_endpoints_check_errors_total",
		"Evaluations of the endpoint check that could not be completed.", []string{"check"}, nil)
	descLast = prometheus.NewDesc("kubecause_endpoints_last_check_timestamp_seconds",
		"Unix time of the last evaluation of the endpoint check.", []string{"check"}, nil)
	descDiscovery = prometheus.NewDesc("kubecause_endpoints_discovery_info",
		"What auto-discovery of the mspider hosted mesh found.", []string{"check", "mesh_id", "role", "source"}, nil)
)

// Describe implements prometheus.Collector.
func (c *Checker) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMatch, descState, descExpected, descActual, descWrong, descWrongCount,
		descAddress, descErrors, descLast, descDiscovery} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it renders the results of the last evaluation.
func (c *Checker) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		for i := range lv {
			lv[i] = labels.Value(lv[i])
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	names := make([]string, 0, len(c.results))
	for n := range c.results {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		r := c.results[name]
		ns, svc := r.spec.namespace, r.spec.service
		for _, st := range states {
			v := 0.0
			if st == r.state {
				v = 1
			}
			gauge(descState, v, name, ns, svc, st)
		}
		if r.state == StateMatch || r.state == StateMismatch {
			v := 0.0
			if r.state == StateMatch {
				v = 1
			}
			gauge(descMatch, v, name, ns, svc)
			counts := map[string]int{}
			for _, w := range r.wrong {
				counts[w.problem]++
			}
			for _, p := range problems {
				gauge(descWrongCount, float64(counts[p]), name, ns, svc, p)
			}
			for i, w := range r.wrong {
				if i == maxWrongSeries {
					break
				}
				gauge(descWrong, 1, name, ns, svc, w.address, w.port, w.problem)
			}
		}
		if r.expected >= 0 {
			gauge(descExpected, float64(r.expected), name, ns, svc)
		}
		if r.actual >= 0 {
			gauge(descActual, float64(r.actual), name, ns, svc)
			for i, a := range r.addresses {
				if i == maxWrongSeries {
					break
				}
				gauge(descAddress, 1, name, ns, svc, a.address, a.port)
			}
		}
	}
	enames := make([]string, 0, len(c.errorsTotal))
	for n := range c.errorsTotal {
		enames = append(enames, n)
	}
	sort.Strings(enames)
	for _, n := range enames {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, c.errorsTotal[n], labels.Value(n))
		if ts, ok := c.lastCheck[n]; ok {
			gauge(descLast, ts, n)
		}
	}
	if d := c.disc; d != nil && d.spec != nil {
		gauge(descDiscovery, 1, DiscoveredCheck, d.meshID, d.role, d.source)
	}
}
