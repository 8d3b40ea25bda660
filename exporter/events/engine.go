// Package events counts Kubernetes Event occurrences exactly and classifies them into causes.
//
// The Engine is the store of a client-go reflector (one per watched namespace scope). It keeps a
// compact record per live Event — never the Event object — and turns every notification into
// occurrences as defined in docs/metrics.md:
//
//   - an update adds Δcount (core/v1) or Δseries.count (events.k8s.io); an unchanged update adds 0;
//   - an Event created while watching adds 1, even when its count is above 1 (the recorder re-creates
//     an expired Event with its accumulated count); if kubecause saw the expired predecessor under the
//     same name it adds exactly the occurrences since; if its first occurrence is no older than the
//     last contact with the apiserver (created while the watch was cut), its whole count;
//   - a series appearing (no series → series.count 2) adds 1;
//   - Events present in the first list are a baseline and add nothing (a restart does not jump) —
//     unless a snapshot of the previous process was restored (snapshot.go): then the counters go on
//     from it and the first list is diffed against it, the occurrences while kubecause was away
//     included;
//   - a relist (watch expired, apiserver restart) is diffed against what is remembered; an Event
//     first seen in it whose first occurrence is no older than the source's last contact with the
//     apiserver adds its whole count (it was created in the gap);
//   - Events created and expired inside a gap are estimated, not counted: the rate of new Events
//     before the gap × the part of the gap longer than the Event TTL.
package events

import (
	"hash/maphash"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/labels"
)

// Classifier is what the engine needs of the cause table (*causes.Table implements it).
type Classifier interface {
	// Classify returns the cause of an Event and the ID of the rule that matched ("" for the
	// fallback). It must be safe for concurrent use and cheap; it runs for every new message.
	Classify(reason, message string) causes.Result
	// Outcomes lists every (rule, cause) pair Classify can return, so that each rule's hit
	// counter is exported at 0 before its first hit.
	Outcomes() []causes.Result
}

// Config configures an Engine.
type Config struct {
	// Classifier classifies; nil means every occurrence is of cause unknown.
	Classifier Classifier
	// MaxSeries caps the label sets of kubecause_events_total; further ones go to the overflow series.
	MaxSeries int
	// MaxObjectSeries caps the per-object view.
	MaxObjectSeries int
	// MaxTargets caps the distinct values of the view's target label; an entry whose target would
	// be one more gets the overflow value instead.
	MaxTargets int
	// NormalReasons are the reasons of type=Normal Events that are counted; other Normal Events are
	// ignored. Warning Events are always counted.
	NormalReasons []string
	// TombstoneTTL is how long an expired Event's count is remembered to recognise its re-creation.
	TombstoneTTL time.Duration
	// MaxTombstones bounds that memory.
	MaxTombstones int
	// OnSynced, when set, is called once, when every source has read its first list (without
	// the engine's lock held).
	OnSynced func()
	// Now is the clock (tests replace it).
	Now    func() time.Time
	Logger *slog.Logger
}

// tracked is everything kubecause keeps per live Event (24 bytes plus the 16-byte key).
type tracked struct {
	name  uint64 // hash of namespace/name
	count int32  // occurrences recorded on the object
	view  int32  // slot in the per-object view, or noEntry or refused
	first uint32 // Unix second of its first occurrence (a snapshot over its cap keeps the newest)
	src   uint16 // the source (watch scope) the Event came from
	list  uint8  // the source's list generation that last contained it (0: none since it was added)
	vgen  uint8  // the generation of its view slot when it got it (view.live)
}

// Engine is the counting engine. All methods are safe for concurrent use.
type Engine struct {
	cfg     Config
	normal  map[string]bool
	m       *metrics
	mu      sync.Mutex
	events  *eventTable
	tombs   tombstones
	view    *view
	sources []*Source
	ttl     ttlEstimate
	strs    map[string]string // interned label values of small cardinality
	// classified memoises Classify by a 64-bit hash of (reason, message): a PATCH of count
	// repeats its Event's message, and classifying costs far more than the hash
	// (docs/performance.md).
	classified map[uint64]uint16
	results    []classified
	resultIdx  map[classified]uint16
	seed       maphash.Seed
	// restoring is the snapshot restored at start (snapshot.go), until every source has read
	// its first list.
	restoring *restoreState
	// restoringCounters hides the restored counters from scrapes until the restore ends.
	restoringCounters atomic.Bool
}

type classification struct{ cause, rule string }

// classified is what the memo keeps of a classification: the cause, its rule and its target as
// read from the message (interned, a label value), or that the target is the Event's node.
type classified struct {
	cause, rule, target string
	node                bool
}

// maxClassified bounds the memo (about 20 bytes an entry); past it, it starts over.
const maxClassified = 1 << 15

// maxResults bounds the distinct results the memo keeps (a result and its index entry are about
// 150 bytes: at most ~0.6 MB); past it, the memo starts over.
const maxResults = 1 << 12

// classify is Config.Classify through the memo. Called with e.mu held.
func (e *Engine) classify(reason, message string) classified {
	var h maphash.Hash
	h.SetSeed(e.seed)
	h.WriteString(reason)
	h.WriteByte(0)
	h.WriteString(message)
	k := h.Sum64()
	if i, ok := e.classified[k]; ok {
		return e.results[i]
	}
	r := e.cfg.Classifier.Classify(reason, message)
	c := classified{cause: r.Cause, rule: r.Rule, node: r.TargetNode}
	if r.Target != "" {
		c.target = e.internCopy(labels.Value(r.Target))
	}
	i, ok := e.resultIdx[c]
	if !ok {
		// Targets make results as many as the registries, plugins and drivers seen (whoever can
		// create a pod can name any registry): past maxResults, the memo starts over with them.
		if len(e.results) >= maxResults {
			clear(e.classified)
			clear(e.resultIdx)
			e.results = e.results[:0]
		}
		i = uint16(len(e.results))
		e.results = append(e.results, c)
		e.resultIdx[c] = i
	}
	if len(e.classified) >= maxClassified {
		clear(e.classified)
	}
	e.classified[k] = i
	return c
}

// maxInterned bounds the intern table; past it, values are simply not shared.
const maxInterned = 1 << 16

// intern returns a shared copy of s, so the many Events of a namespace or reason do not each keep
// their own decoded copy alive.
func (e *Engine) intern(s string) string {
	if v, ok := e.strs[s]; ok {
		return v
	}
	if len(e.strs) < maxInterned {
		e.strs[s] = s
	}
	return s
}

// internCopy is intern for a value that may share memory with a larger string (a target read out
// of an Event's message): what is kept is a copy, never the message.
func (e *Engine) internCopy(s string) string {
	if v, ok := e.strs[s]; ok {
		return v
	}
	s = strings.Clone(s)
	if len(e.strs) < maxInterned {
		e.strs[s] = s
	}
	return s
}

// New returns an Engine and registers nothing; use Collectors to expose its metrics.
func New(cfg Config) *Engine {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = 10000
	}
	if cfg.MaxObjectSeries <= 0 {
		cfg.MaxObjectSeries = 10000
	}
	if cfg.MaxTargets <= 0 {
		cfg.MaxTargets = 1000
	}
	if cfg.TombstoneTTL <= 0 {
		cfg.TombstoneTTL = 2 * time.Hour
	}
	if cfg.MaxTombstones <= 0 {
		cfg.MaxTombstones = 100000
	}
	if cfg.Classifier == nil {
		cfg.Classifier = unclassified{}
	}
	e := &Engine{
		cfg:    cfg,
		normal: map[string]bool{},
		events: newEventTable(),
		tombs: tombstones{m: map[uint64]tombstone{}, ttl: int64(cfg.TombstoneTTL / time.Second),
			max: cfg.MaxTombstones},
		view: newView(cfg.MaxObjectSeries, cfg.MaxTargets),
		strs: map[string]string{},

		classified: map[uint64]uint16{},
		resultIdx:  map[classified]uint16{},
		seed:       maphash.MakeSeed(),
	}
	for _, r := range cfg.NormalReasons {
		e.normal[r] = true
	}
	e.m = newMetrics(cfg.MaxSeries, cfg.Classifier.Outcomes())
	return e
}

// unclassified is the Classifier of an engine without a cause table.
type unclassified struct{}

func (unclassified) Classify(string, string) causes.Result {
	return causes.Result{Cause: causes.Unknown}
}
func (unclassified) Outcomes() []causes.Result { return []causes.Result{{Cause: causes.Unknown}} }

// wanted reports whether an Event type/reason is counted at all.
func (e *Engine) wanted(ev *corev1.Event) bool {
	if ev.Type == corev1.EventTypeNormal {
		return e.normal[ev.Reason]
	}
	return true
}

// eventLabels are the bounded labels of one occurrence.
type eventLabels struct {
	namespace, kind, name, reason, typ, component, cause, rule string
	// target of the per-object view (not of the aggregate counters): see targetOf.
	target string
	// template is the message's template when the cause is unknown, for
	// kubecause_unclassified_messages; made only for occurrences counted (counted).
	template string
}

// counted is l as the metrics record an occurrence: with the message's template when the cause is
// unknown. Templating a message costs more than classifying it (BenchmarkTemplate in causes), so
// it is done only for what is counted: not for the Events of the first list, nor for updates that
// add nothing.
func counted(l eventLabels, message string) eventLabels {
	if l.cause == causes.Unknown {
		l.template = causes.Template(message)
	}
	return l
}

func (e *Engine) labelsOf(ev *corev1.Event) eventLabels {
	ns := ev.InvolvedObject.Namespace
	if ns == "" && ev.InvolvedObject.Kind == "" {
		ns = ev.Namespace
	}
	c := e.classify(ev.Reason, ev.Message)
	return eventLabels{
		namespace: e.intern(labels.Value(ns)),
		kind:      e.intern(labels.Value(ev.InvolvedObject.Kind)),
		name:      labels.Value(ev.InvolvedObject.Name),
		reason:    e.intern(labels.Value(ev.Reason)),
		typ:       e.intern(labels.Value(ev.Type)),
		component: e.intern(labels.Value(component(ev))),
		cause:     c.cause,
		rule:      c.rule,
		target:    e.targetOf(c, ev),
	}
}

// targetOf is the target of an Event's view entry: what the cause table read from the message, or
// for a cause whose target is the node, the node the Event names (source.host) or the Node it is
// about.
func (e *Engine) targetOf(c classified, ev *corev1.Event) string {
	if !c.node {
		return c.target
	}
	if n := eventNode(ev); n != "" {
		return e.intern(labels.Value(n))
	}
	return ""
}

// eventNode is the node an Event is about: the one its reporter ran on (source.host, the
// kubelet's), or the Node it is about.
func eventNode(ev *corev1.Event) string {
	if ev.Source.Host != "" {
		return ev.Source.Host
	}
	if ev.InvolvedObject.Kind == "Node" {
		return ev.InvolvedObject.Name
	}
	return ""
}

// Target is the target label the per-object view gives an Event classified as r: what the cause
// table read from the message, or the Event's node for a cause whose target is the node; a label
// value (labels.Value). kubecause explain shows it.
func Target(r causes.Result, ev *corev1.Event) string {
	if r.TargetNode {
		return labels.Value(eventNode(ev))
	}
	return labels.Value(r.Target)
}

// validate returns the problem that makes an object uncountable, or "".
func validate(obj interface{}) (*corev1.Event, uidKey, string) {
	ev, ok := obj.(*corev1.Event)
	if !ok || ev == nil {
		return nil, uidKey{}, "not_an_event"
	}
	k, ok := keyOf(ev.UID)
	if !ok {
		return nil, k, "no_uid"
	}
	if ev.Reason == "" {
		return nil, k, "no_reason"
	}
	return ev, k, ""
}

// observed is what observe made of one Event.
type observed struct {
	key   uidKey
	state bool  // valid and wanted: the Event is part of its source's state
	delta int32 // occurrences counted
}

// observe handles one Event seen (added, updated or listed) from source src, validating it once,
// and returns what it counted.
// baseline: the Event belongs to the first list and adds no occurrences.
// watching: the occurrence is live (lag is measured), as opposed to found in a relist.
func (e *Engine) observe(src uint16, obj interface{}, baseline, watching bool) observed {
	ev, k, problem := validate(obj)
	if problem != "" {
		e.m.invalid.WithLabelValues(problem).Inc()
		return observed{key: k}
	}
	if !e.wanted(ev) {
		return observed{key: k}
	}
	if !watching {
		if age, ok := writtenAgo(ev, e.cfg.Now().Unix()); ok {
			e.ttl.listed(age)
		}
	}
	n := Occurrences(ev)
	t, known := e.events.get(k)
	if known && t.count == n {
		return observed{key: k, state: true} // resync or a change that is no new occurrence
	}
	var delta int32     // Events of the first list are a baseline: 0
	fromBefore := false // known from the snapshot of the process before a restart
	switch {
	case known && !baseline:
		delta = max(n-t.count, 0) // counts never go down; remember the new value and go on
	case !known:
		t = tracked{name: nameHash(ev.Namespace, ev.Name), view: noEntry, src: src,
			first: uint32(min(max(firstTime(ev), 0), math.MaxUint32))}
		if baseline {
			break
		}
		if watching {
			e.sources[src].created++
		}
		if s := e.sources[src]; s.restored {
			var handled bool
			if delta, handled, fromBefore = e.fromSnapshot(s, k, t.name, ev, n); handled {
				break
			}
		}
		delta = 1
		if ts, ok := e.tombs.unbury(t.name); ok {
			if d := n - ts.count; d > 1 {
				delta = d
			}
		} else if n > 1 {
			// New to kubecause with several occurrences: if its first occurrence is no older than
			// the source's last contact with the apiserver, it was created while the watch was cut
			// (seen in a relist, or as an ADD of a watch resumed after the gap), and every
			// occurrence it carries is new. Otherwise it is an expired Event re-created with its
			// accumulated count, standing for one new occurrence; found in a relist, the rest may
			// include occurrences of the gap that cannot be told apart: reported as possibly lost.
			if firstTime(ev) >= e.sources[src].contact {
				delta = n
			} else if !watching {
				e.m.possiblyLost.Add(float64(n - 1))
			}
		}
	}
	l := e.labelsOf(ev)
	old := t.count
	t.count = n
	// An event time in the future (a recorder's clock, or a forged Event) is taken as now, so it
	// cannot pin the latest-occurrence gauges ahead of every later occurrence.
	ts := min(eventTime(ev), e.cfg.Now().Unix())
	key := viewKey{namespace: l.namespace, kind: l.kind, name: l.name, reason: l.reason, cause: l.cause, target: l.target}
	// An Event moving between entries that differ only in their target (into or out of the
	// target overflow) is the same problem of the same object: not a newly affected object.
	// An Event whose entry was evicted (view.evict) had its object counted when the entry was born.
	retarget, evicted := false, false
	if t.view >= 0 {
		if evicted = !e.view.live(t.view, t.vgen); !evicted {
			ok := e.view.entries[t.view].key
			ok.target = key.target
			retarget = ok == key
		}
	}
	i, vgen, change, over := e.view.move(t.view, t.vgen, key, old, n, ts, e.intern(labels.Value(ev.Source.Host)))
	if over {
		e.m.targetOverflow()
	}
	if e.restoring != nil && e.sources[src].restored {
		e.restoredView(i, change == viewBorn && !baseline && !retarget, fromBefore)
		if change == viewBorn {
			change = viewSame // whether the object is newly affected is decided when the restore ends
		}
	}
	switch change {
	case viewBorn:
		if !baseline && !retarget && !evicted {
			e.m.affect(key)
		}
	case viewRefused:
		if t.view != refused {
			e.m.viewRefused() // once per Event, not on each of its updates
		}
	}
	t.view, t.vgen = i, vgen
	e.events.set(k, t)
	e.m.state(e.events.len(), e.view.len(), len(e.view.targets))
	e.m.viewEvicted(e.view.evicted)
	e.m.processed.Inc()
	if delta > 0 {
		e.m.count(counted(l, ev.Message), float64(delta))
		if watching {
			e.m.observeLag(e.cfg.Now(), ts)
		}
	}
	return observed{key: k, state: true, delta: delta}
}

// forget removes a tracked Event (deleted, or gone from a relist) and remembers its count so a
// re-creation under the same name counts only what is new.
func (e *Engine) forget(k uidKey, t tracked) {
	e.events.del(k)
	e.view.release(t.view, t.vgen, t.count)
	e.m.state(e.events.len(), e.view.len(), len(e.view.targets))
	now := e.cfg.Now().Unix()
	e.tombs.bury(t.name, t.count, now)
	e.tombs.prune(now)
}

func (e *Engine) add(src uint16, obj interface{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m.opAdd.Inc()
	e.observe(src, obj, false, true)
	e.heard(src, obj)
}

func (e *Engine) update(src uint16, obj interface{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m.opUpdate.Inc()
	e.observe(src, obj, false, true)
	e.heard(src, obj)
}

func (e *Engine) delete(src uint16, obj interface{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.heard(src, obj)
	e.m.opDelete.Inc()
	ev, k, problem := validate(obj)
	if problem != "" {
		e.m.invalid.WithLabelValues(problem).Inc()
		return
	}
	if t, ok := e.events.get(k); ok {
		if age, ok := writtenAgo(ev, e.cfg.Now().Unix()); ok {
			e.ttl.deleted(age)
		}
		// The final state may carry occurrences not yet seen (a missed update before deletion).
		if n := Occurrences(ev); n > t.count && e.wanted(ev) {
			e.m.count(counted(e.labelsOf(ev), ev.Message), float64(n-t.count))
			t.count = n
		}
		e.forget(k, t)
	}
}

// touch records that source src is in contact with the apiserver now (a bookmark, a list).
// Called with e.mu held.
func (e *Engine) touch(src uint16) {
	e.sources[src].contact = e.cfg.Now().Unix()
}

// heard records a notification of source src about obj, after it was counted against the
// previous contact: the watch has delivered what was written up to obj's last write (no later
// than now). Not the time it arrived: a watch resumed after a pause, or reading what its
// connection held, delivers old writes now, and a gap measured from then would be too short.
// Called with e.mu held.
func (e *Engine) heard(src uint16, obj interface{}) {
	if ev, ok := obj.(*corev1.Event); ok && ev != nil {
		s := e.sources[src]
		s.contact = max(s.contact, min(eventTime(ev), e.cfg.Now().Unix()))
	}
}

// Tracked is the number of live Events held.
func (e *Engine) Tracked() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.events.len()
}

// Synced reports whether every source has read its first list.
func (e *Engine) Synced() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.syncedLocked()
}

func (e *Engine) syncedLocked() bool {
	if len(e.sources) == 0 {
		return false
	}
	for _, s := range e.sources {
		if !s.synced {
			return false
		}
	}
	return true
}
