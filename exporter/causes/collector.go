package causes

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubecause/kubecause/exporter/labels"
)

// The cause table's own families are born here (docs/metrics.md); what the engine counts with the
// table (kubecause_rule_hits_total) is born in exporter/events.
var (
	causeInfoDesc = prometheus.NewDesc("kubecause_cause_info",
		"One series per cause of the loaded cause table, with its category and runbook.",
		[]string{"cause", "category", "runbook_url"}, nil)
	tableInfoDesc = prometheus.NewDesc("kubecause_causes_table_info",
		"The cause table in use.",
		[]string{"version", "source"}, nil)
)

// collector exports a loaded table: it never changes, so its series are built once.
type collector struct{ metrics []prometheus.Metric }

// NewCollector returns a collector of the table's info series: kubecause_causes_table_info
// (version, and source: "builtin" or the file it was loaded from) and one kubecause_cause_info per
// cause, its runbook linked through runbookPattern (see RunbookURL).
func NewCollector(t *Table, source, runbookPattern string) prometheus.Collector {
	c := &collector{}
	c.metrics = append(c.metrics, prometheus.MustNewConstMetric(tableInfoDesc, prometheus.GaugeValue, 1,
		labels.Value(t.Version()), labels.Value(source)))
	for _, cause := range t.causes {
		c.metrics = append(c.metrics, prometheus.MustNewConstMetric(causeInfoDesc, prometheus.GaugeValue, 1,
			cause.Name, cause.Category, RunbookURL(runbookPattern, cause.Runbook)))
	}
	return c
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- causeInfoDesc
	ch <- tableInfoDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.metrics {
		ch <- m
	}
}
