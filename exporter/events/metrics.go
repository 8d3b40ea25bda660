package events

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events/snapshotfile"
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

// The label sets of kubecause_events_total and kubecause_objects_affected_total, as the snapshot
// file holds them.
type (
	aggKey = snapshotfile.CounterKey
	affKey = snapshotfile.AffectedKey
)

// overAgg and overAff are the overflow series a label set goes to past the cap: one per Event
// type and cause.
func overAgg(k aggKey) aggKey {
	return aggKey{Namespace: overflow, Kind: overflow, Reason: overflow, Type: k.Type, Component: overflow, Cause: k.Cause}
}

func overAff(k affKey) affKey { return affKey{Namespace: overflow, Kind: overflow, Cause: k.Cause} }

// capped is a counter family whose label sets are capped: past max series, what a new label set
// counts goes to its overflow series and is counted as dropped. Guarded by Engine.mu.
type capped[K comparable] struct {
	vec     *prometheus.CounterVec
	known   map[K]prometheus.Counter
	max     int
	over    func(K) K
	values  func(K) []string
	size    prometheus.Gauge   // kubecause_series{metric=...}
	dropped prometheus.Counter // kubecause_series_dropped_total{metric=...}
}

func newCapped[K comparable](vec *prometheus.CounterVec, max int, over func(K) K, values func(K) []string, m *metrics, name string) *capped[K] {
	return &capped[K]{vec: vec, known: map[K]prometheus.Counter{}, max: max, over: over, values: values,
		size: m.series.WithLabelValues(name), dropped: m.dropped.WithLabelValues(name)}
}

// add adds n to the series of k, or past the cap to its overflow series (fold).
func (c *capped[K]) add(k K, n float64) {
	ctr, ok := c.known[k]
	if !ok {
		if len(c.known) >= c.max {
			c.fold(k, n)
			return
		}
		ctr = c.series(k)
	}
	ctr.Add(n)
}

// fold adds n of k, which gets no series of its own, to its overflow series and counts it dropped.
func (c *capped[K]) fold(k K, n float64) {
	c.dropped.Add(n)
	k = c.over(k)
	ctr, ok := c.known[k]
	if !ok {
		ctr = c.series(k)
	}
	ctr.Add(n)
}

func (c *capped[K]) series(k K) prometheus.Counter {
	ctr := c.vec.WithLabelValues(c.values(k)...)
	c.known[k] = ctr
	c.size.Set(float64(len(c.known)))
	return ctr
}

// take returns the series and their values, for a snapshot.
func (c *capped[K]) take() []snapshotfile.Series[K] {
	out := make([]snapshotfile.Series[K], 0, len(c.known))
	for k, ctr := range c.known {
		out = append(out, snapshotfile.Series[K]{Key: k, Value: counterValue(ctr)})
	}
	return out
}

// restore adds a snapshot's series as they are counted: each through the cap, and those the file
// held past the reader's cap (folded by Decode) as dropped.
func (c *capped[K]) restore(written, folded []snapshotfile.Series[K]) {
	for _, s := range written {
		c.add(s.Key, s.Value)
	}
	for _, s := range folded {
		c.fold(s.Key, s.Value)
	}
}

func counterValue(c interface{ Write(*dto.Metric) error }) float64 {
	var d dto.Metric
	if c.Write(&d) != nil || d.Counter == nil {
		return 0
	}
	return d.Counter.GetValue()
}

// metrics is where the engine's counts go: it holds the series and their caps, and nothing of the
// engine's state, which reaches it only through its methods.
type metrics struct {
	events   *capped[aggKey] // kubecause_events_total
	affected *capped[affKey] // kubecause_objects_affected_total
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
	m.events = newCapped(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubecause_events_total",
		Help: "Occurrences of Kubernetes Events by involved object namespace and kind, reason, type, reporting component and cause.",
	}, []string{"namespace", "kind", "reason", "type", "component", "cause"}), max, overAgg, func(k aggKey) []string {
		return []string{k.Namespace, k.Kind, k.Reason, k.Type, k.Component, k.Cause}
	}, m, "kubecause_events_total")
	m.affected = newCapped(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubecause_objects_affected_total",
		Help: "Objects that began to show a cause (first live Event of the object with this cause, seen while watching).",
	}, []string{"namespace", "kind", "cause"}), max, overAff, func(k affKey) []string {
		return []string{k.Namespace, k.Kind, k.Cause}
	}, m, "kubecause_objects_affected_total")
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
	m.events.add(aggKey{Namespace: l.namespace, Kind: l.kind, Reason: l.reason, Type: l.typ, Component: l.component, Cause: l.cause}, n)
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
	m.affected.add(affKey{Namespace: v.namespace, Kind: v.kind, Cause: v.cause}, 1)
}

// take writes the counters a snapshot carries into s.
func (m *metrics) take(s *snapshotfile.Snapshot) {
	s.Counters, s.Affected = m.events.take(), m.affected.take()
	for k, c := range m.ruleKnown {
		if v := counterValue(c); v > 0 {
			s.Rules = append(s.Rules, snapshotfile.Rule{Rule: ruleLabel(k.rule), Cause: k.cause, Value: v})
		}
	}
	s.Unclassified, s.PossiblyLost, s.GapLost = counterValue(m.unclassified), counterValue(m.possiblyLost), counterValue(m.gapLost)
}

// restore adds the counters of a snapshot as they are counted, through the caps. Only the rules
// of the table in use: a rule the table no longer has is not exported again.
func (m *metrics) restore(s *snapshotfile.Snapshot) {
	m.events.restore(s.Counters, s.CountersFolded)
	m.affected.restore(s.Affected, s.AffectedFolded)
	for _, r := range s.Rules {
		rule := r.Rule
		if rule == "fallback" {
			rule = ""
		}
		if c, ok := m.ruleKnown[classification{cause: r.Cause, rule: rule}]; ok {
			c.Add(r.Value)
		}
	}
	m.unclassified.Add(s.Unclassified)
	m.possiblyLost.Add(s.PossiblyLost)
	m.gapLost.Add(s.GapLost)
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
		g(m.events.vec), g(m.affected.vec), g(m.ruleHits),
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
