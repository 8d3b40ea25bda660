package events

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubecause/kubecause/exporter/causes"
)

// Every kubecause_* family of the event engine is born in this file (see docs/metrics.md): the
// registered ones in newMetrics, the per-object view's two here, rendered by viewtext.go.
const (
	viewEventsName = "kubecause_object_events"
	viewEventsHelp = "Occurrences recorded on the live Events of an object with this reason, cause and target (the shared thing the cause is about)."
	viewLastName   = "kubecause_object_event_last_timestamp_seconds"
	viewLastHelp   = "Time of the latest occurrence on the live Events of an object with this reason, cause and target."
)

const overflow = "_overflow"

// targetMetric is the metric label of kubecause_series and kubecause_series_dropped_total for
// the target label of the per-object view (its distinct values are capped on their own).
const targetMetric = "kubecause_object_events_target"

type aggKey struct {
	namespace, kind, reason, typ, component, cause string
}

type affKey struct {
	namespace, kind, cause string
}

// metrics is where the engine's counts go: it holds the series and their caps, and nothing of the
// engine's state, which reaches it only through its methods.
type metrics struct {
	max int

	events   *prometheus.CounterVec
	known    map[aggKey]prometheus.Counter // guarded by Engine.mu
	affected *prometheus.CounterVec
	affKnown map[affKey]prometheus.Counter // guarded by Engine.mu
	ruleHits *prometheus.CounterVec

	notifications *prometheus.CounterVec
	processed     prometheus.Counter
	unclassified  prometheus.Counter
	// templates keeps the most frequent unclassified (reason, message template) pairs.
	templates    *causes.Unclassified
	invalid      *prometheus.CounterVec
	relists      prometheus.Counter
	possiblyLost prometheus.Counter
	gapLost      prometheus.Counter
	watchErrors  prometheus.Counter
	watchUp      prometheus.GaugeFunc
	lastEvent    prometheus.Gauge
	lastEventTS  int64 // guarded by Engine.mu
	lag          prometheus.Histogram
	series       *prometheus.GaugeVec
	dropped      *prometheus.CounterVec

	// Resolved once, as they count every Event notification or occurrence.
	opAdd, opUpdate, opDelete, opRelist prometheus.Counter
	ruleKnown                           map[classification]prometheus.Counter // guarded by Engine.mu
	// What kubecause_watch_up reads.
	up atomic.Uint32

	tracked   prometheus.Gauge
	synced    prometheus.Gauge
	viewSize  prometheus.Gauge // kubecause_series{metric="kubecause_object_events"}
	viewDrops prometheus.Counter
	// kubecause_object_events_evicted_total, and the view's count it last added up to.
	viewEvictions prometheus.Counter
	viewEvictedN  uint64
	// kubecause_series and kubecause_series_dropped_total{metric="kubecause_object_events_target"}:
	// distinct target values of the view, and live Events whose target went to overflow.
	targetsSize prometheus.Gauge
	targetDrops prometheus.Counter

	// The snapshot of the counting state (snapshot.go): restores at start by result, writes.
	restores       *prometheus.CounterVec
	snapshotWrites *prometheus.CounterVec
}

func newMetrics(max int, outcomes []causes.Result) *metrics {
	m := &metrics{
		max: max,
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_events_total",
			Help: "Occurrences of Kubernetes Events by involved object namespace and kind, reason, type, reporting component and cause.",
		}, []string{"namespace", "kind", "reason", "type", "component", "cause"}),
		known: map[aggKey]prometheus.Counter{},
		affected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_objects_affected_total",
			Help: "Objects that began to show a cause (first live Event of the object with this cause, seen while watching).",
		}, []string{"namespace", "kind", "cause"}),
		affKnown: map[affKey]prometheus.Counter{},
		ruleHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_rule_hits_total",
			Help: "Occurrences classified by each rule of the cause table.",
		}, []string{"rule", "cause"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_event_notifications_total",
			Help: "Event notifications received from the apiserver, by operation (a relist counts once).",
		}, []string{"op"}),
		processed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_events_processed_total",
			Help: "Event objects processed (classified and counted).",
		}),
		unclassified: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_events_unclassified_total",
			Help: "Occurrences whose cause is unknown.",
		}),
		templates: causes.NewUnclassified(UnclassifiedTemplates),
		invalid: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_events_invalid_total",
			Help: "Event objects that could not be counted and were dropped, by problem.",
		}, []string{"problem"}),
		relists: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_relists_total",
			Help: "Full lists of Events after the first one (watch expired, apiserver restart).",
		}),
		possiblyLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_events_possibly_lost_total",
			Help: "Occurrences a relist could not attribute: carried by Events first seen in a relist that began before the watch lost contact, beyond the one counted.",
		}),
		gapLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_events_gap_estimated_lost_total",
			Help: "Estimated occurrences of Events created and expired inside watch gaps: the rate of new Events before each gap times the part of the gap longer than the Event TTL (an estimate, not a count).",
		}),
		watchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_watch_errors_total",
			Help: "Failed lists and watches of Events.",
		}),
		lastEvent: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubecause_last_event_timestamp_seconds",
			Help: "Event time of the newest occurrence processed.",
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kubecause_event_processing_lag_seconds",
			Help:    "Time from an occurrence (its event time) to its processing, for occurrences counted while watching.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900},
		}),
		series: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kubecause_series",
			Help: "Current number of series of each capped metric.",
		}, []string{"metric"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_series_dropped_total",
			Help: "What got no series of its own because a cap was reached: occurrences (kubecause_events_total), objects (kubecause_objects_affected_total), live Events (kubecause_object_events), live Events whose target went to the overflow value (kubecause_object_events_target).",
		}, []string{"metric"}),
		tracked: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubecause_tracked_events",
			Help: "Live Events held in the compact state.",
		}),
		synced: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubecause_synced",
			Help: "1 once the initial list of Events has been read.",
		}),
		viewEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_object_events_evicted_total",
			Help: "Entries of the per-object view evicted at its cap for a new entry of another namespace: the least recently updated entry of the namespace with the most entries, taken when the new entry's namespace has fewer by two at least.",
		}),
		restores: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_snapshot_restores_total",
			Help: "Starts with --events.snapshot-file, by what became of the snapshot: restored, or why it was not used (then Events that existed at start are a baseline).",
		}, []string{"result"}),
		snapshotWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubecause_snapshot_writes_total",
			Help: "Snapshots of the counting state written to --events.snapshot-file, by result (written, failed).",
		}, []string{"result"}),
	}
	for _, r := range restoreResults {
		m.restores.WithLabelValues(r)
	}
	m.snapshotWrites.WithLabelValues("written")
	m.snapshotWrites.WithLabelValues("failed")
	m.watchUp = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kubecause_watch_up",
		Help: "1 while the last list or watch of Events succeeded, 0 while the apiserver cannot be reached.",
	}, func() float64 { return float64(m.up.Load()) })
	m.opAdd, m.opUpdate = m.notifications.WithLabelValues("add"), m.notifications.WithLabelValues("update")
	m.opDelete, m.opRelist = m.notifications.WithLabelValues("delete"), m.notifications.WithLabelValues("relist")
	m.ruleKnown = map[classification]prometheus.Counter{}
	for _, o := range outcomes {
		m.ruleKnown[classification{cause: o.Cause, rule: o.Rule}] = m.ruleHits.WithLabelValues(ruleLabel(o.Rule), o.Cause)
	}
	for _, p := range []string{"no_uid", "no_reason", "not_an_event"} {
		m.invalid.WithLabelValues(p)
	}
	for _, name := range []string{"kubecause_events_total", "kubecause_objects_affected_total", "kubecause_object_events", targetMetric} {
		m.dropped.WithLabelValues(name)
		m.series.WithLabelValues(name)
	}
	m.viewSize = m.series.WithLabelValues("kubecause_object_events")
	m.viewDrops = m.dropped.WithLabelValues("kubecause_object_events")
	m.targetsSize = m.series.WithLabelValues(targetMetric)
	m.targetDrops = m.dropped.WithLabelValues(targetMetric)
	return m
}

func ruleLabel(rule string) string {
	if rule == "" {
		return "fallback"
	}
	return rule
}

// count adds occurrences. Called with Engine.mu held.
func (m *metrics) count(l eventLabels, n float64) {
	k := aggKey{namespace: l.namespace, kind: l.kind, reason: l.reason, typ: l.typ, component: l.component, cause: l.cause}
	c, ok := m.known[k]
	if !ok {
		if len(m.known) >= m.max {
			m.dropped.WithLabelValues("kubecause_events_total").Add(n)
			k = aggKey{namespace: overflow, kind: overflow, reason: overflow, typ: l.typ, component: overflow, cause: l.cause}
			c, ok = m.known[k]
		}
		if !ok {
			c = m.events.WithLabelValues(k.namespace, k.kind, k.reason, k.typ, k.component, k.cause)
			m.known[k] = c
			m.series.WithLabelValues("kubecause_events_total").Set(float64(len(m.known)))
		}
	}
	c.Add(n)
	// Bounded by the cause table: (rule, cause) pairs are what it can produce.
	rk := classification{cause: l.cause, rule: l.rule}
	r, ok := m.ruleKnown[rk]
	if !ok {
		r = m.ruleHits.WithLabelValues(ruleLabel(l.rule), l.cause)
		m.ruleKnown[rk] = r
	}
	r.Add(n)
	if l.cause == causes.Unknown {
		m.unclassified.Add(n)
		m.templates.Add(l.reason, l.template, uint64(n))
	}
}

// affect counts an object newly showing a cause. Called with Engine.mu held.
func (m *metrics) affect(v viewKey) {
	k := affKey{namespace: v.namespace, kind: v.kind, cause: v.cause}
	c, ok := m.affKnown[k]
	if !ok {
		if len(m.affKnown) >= m.max {
			m.dropped.WithLabelValues("kubecause_objects_affected_total").Inc()
			k = affKey{namespace: overflow, kind: overflow, cause: v.cause}
			c, ok = m.affKnown[k]
		}
		if !ok {
			c = m.affected.WithLabelValues(k.namespace, k.kind, k.cause)
			m.affKnown[k] = c
			m.series.WithLabelValues("kubecause_objects_affected_total").Set(float64(len(m.affKnown)))
		}
	}
	c.Inc()
}

// setUp sets kubecause_watch_up (0 or 1). It writes only on a change: every notification calls it.
func (m *metrics) setUp(v uint32) {
	if m.up.Load() != v {
		m.up.Store(v)
	}
}

// observeLag records processing lag and the newest event time. Called with Engine.mu held.
func (m *metrics) observeLag(now time.Time, ts int64) {
	if ts <= 0 {
		return
	}
	if ts > m.lastEventTS {
		m.lastEventTS = ts
		m.lastEvent.Set(float64(ts))
	}
	lag := now.Sub(time.Unix(ts, 0)).Seconds()
	if lag < 0 {
		lag = 0
	}
	m.lag.Observe(lag)
}

// state sets the gauges of the engine's size. Called with Engine.mu held, after every change.
func (m *metrics) state(tracked, viewSeries, targets int) {
	m.tracked.Set(float64(tracked))
	m.viewSize.Set(float64(viewSeries))
	m.targetsSize.Set(float64(targets))
}

// targetOverflow counts a live Event whose target went to the overflow value.
func (m *metrics) targetOverflow() { m.targetDrops.Inc() }

// viewRefused counts a live Event that got no view entry because the view is at its cap.
func (m *metrics) viewRefused() { m.viewDrops.Inc() }

// viewEvicted brings kubecause_object_events_evicted_total up to the view's count of evictions.
// Called with Engine.mu held.
func (m *metrics) viewEvicted(n uint64) {
	if n > m.viewEvictedN {
		m.viewEvictions.Add(float64(n - m.viewEvictedN))
		m.viewEvictedN = n
	}
}

// Collectors returns every collector of the engine, for registration.
func (e *Engine) Collectors() []prometheus.Collector {
	m := e.m
	// The counters a snapshot restores are hidden while it is being restored (snapshot.go).
	g := func(c prometheus.Collector) prometheus.Collector { return gated{c, &e.restoringCounters} }
	return []prometheus.Collector{
		g(m.events), g(m.affected), g(m.ruleHits),
		m.notifications, m.processed, g(m.unclassified), m.invalid, m.relists, g(m.possiblyLost), g(m.gapLost), m.watchErrors, m.watchUp,
		m.lastEvent, m.lag, m.series, m.dropped, m.viewEvictions, m.tracked, m.synced, m.restores, m.snapshotWrites,
		unclassifiedCollector{m.templates},
	}
}

// UnclassifiedTemplates is how many (reason, template) pairs of unclassified messages are kept.
const UnclassifiedTemplates = 100

var (
	unclassifiedDesc = prometheus.NewDesc("kubecause_unclassified_messages",
		"Occurrences of the most frequent unclassified messages since start, by reason and message template "+
			"(names, UIDs, IPs, numbers, quoted strings and paths masked); at most 100 pairs, the least frequent "+
			"replaced when full (then the count is an upper bound).",
		[]string{"reason", "template"}, nil)
	unclassifiedEvictionsDesc = prometheus.NewDesc("kubecause_unclassified_templates_evicted_total",
		"Unclassified (reason, template) pairs replaced by a new one because the 100 kept were full.", nil, nil)
)

// unclassifiedCollector exposes the kept pairs; their set changes, so they are built per scrape.
type unclassifiedCollector struct{ u *causes.Unclassified }

func (c unclassifiedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- unclassifiedDesc
	ch <- unclassifiedEvictionsDesc
}

func (c unclassifiedCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.u.Snapshot()
	for _, e := range snap.Entries {
		// Template and the reason are valid UTF-8 by construction; a pair that is not is left out
		// rather than failing the scrape.
		if m, err := prometheus.NewConstMetric(unclassifiedDesc, prometheus.GaugeValue, float64(e.Count), e.Reason, e.Template); err == nil {
			ch <- m
		}
	}
	ch <- prometheus.MustNewConstMetric(unclassifiedEvictionsDesc, prometheus.CounterValue, float64(snap.Overflow))
}
