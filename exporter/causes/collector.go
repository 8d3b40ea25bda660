package causes

import (
	"regexp"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubecause/kubecause/exporter/labels"
)

// The cause table's own families are born here (docs/metrics.md); what the engine counts with the
// table (kubecause_rule_hits_total) is born in exporter/events.
var (
	causeInfoDesc = prometheus.NewDesc("kubecause_cause_info",
		"One series per cause of the loaded cause table, with its properties: the mixin's rules select causes by them.",
		[]string{"cause", "category", "symptom", "symptom_of", "pod_start", "target_kind", "runbook_url"}, nil)
	tableInfoDesc = prometheus.NewDesc("kubecause_causes_table_info",
		"The cause table in use.",
		[]string{"version", "source"}, nil)
	tableVersionDesc = prometheus.NewDesc("kubecause_causes_table_version",
		"The cause table's version as a number, major*1e6 + minor*1e3 + patch (0 if not of that form): the newest table wins where two disagree.",
		nil, nil)
)

// collector exports a loaded table: it never changes, so its series are built once.
type collector struct{ metrics []prometheus.Metric }

// NewCollector returns a collector of the table's info series: kubecause_causes_table_info
// (version, and source: "builtin" or the file it was loaded from), its version as a number, and
// one kubecause_cause_info per cause with its properties, its runbook linked through
// runbookPattern (see RunbookURL).
func NewCollector(t *Table, source, runbookPattern string) prometheus.Collector {
	c := &collector{}
	c.metrics = append(c.metrics,
		prometheus.MustNewConstMetric(tableInfoDesc, prometheus.GaugeValue, 1, labels.Value(t.Version()), labels.Value(source)),
		prometheus.MustNewConstMetric(tableVersionDesc, prometheus.GaugeValue, VersionNumber(t.Version())))
	for _, cause := range t.causes {
		c.metrics = append(c.metrics, prometheus.MustNewConstMetric(causeInfoDesc, prometheus.GaugeValue, 1,
			cause.Name, cause.Category, strconv.FormatBool(cause.Symptom), cause.SymptomOf, cause.PodStart,
			targetKind(cause.Target), RunbookURL(runbookPattern, cause.Runbook)))
	}
	return c
}

// targetKind is the target_kind label: "registry", "node", "message" (read by a pattern) or "".
func targetKind(spec string) string {
	switch spec {
	case "", TargetRegistry, TargetNode:
		return spec
	}
	return "message"
}

var versionRE = regexp.MustCompile(`^v?(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:[-+].*)?$`)

// VersionNumber is a table version "major.minor.patch" as major*1e6 + minor*1e3 + patch, so that
// rules can pick the newest of two tables; another form gives 0.
func VersionNumber(v string) float64 {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	n := 0
	for _, p := range m[1:] {
		d, _ := strconv.Atoi(p)
		n = n*1000 + d
	}
	return float64(n)
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- causeInfoDesc
	ch <- tableInfoDesc
	ch <- tableVersionDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.metrics {
		ch <- m
	}
}
