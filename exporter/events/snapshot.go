package events

// The snapshot: what the engine needs to go on counting exactly after a restart of kubecause, kept
// in a file (--events.snapshot-file) that survives the restart (the chart's emptyDir survives a
// container restart).
//
// It holds, consistently (taken under the engine's lock), each live Event's UID, name and the count
// last counted, the tombstones of expired Events, each watch scope's last contact with the
// apiserver, and the values of the occurrence counters (kubecause_events_total,
// kubecause_objects_affected_total, kubecause_rule_hits_total and the unclassified, possibly-lost
// and gap counters). At start, the restored counters go on from their values, and the first list of
// each scope is diffed against the snapshot as a relist is against what is remembered: an Event
// the snapshot knows adds its occurrences since (count now − count in the snapshot), an Event
// created after the snapshot's last contact its whole count, an older Event not in it is a
// baseline. So the counters are exact through the restart, the downtime's occurrences included,
// whenever the snapshot was written: what the old process counted after the snapshot is counted
// again from the snapshot's values, never twice. The watch scopes may differ from the snapshot's
// (other flags, or an upgrade that changed the default selector): the snapshot's Events are found
// by UID whichever scope lists them, a scope of the snapshot no source takes up keeps its counters,
// and the restore ends once every source has read its first list.
//
// A snapshot that cannot be trusted — missing, unreadable, corrupt or truncated (checksum), larger
// than the cap, of another format version, written by another pod or for another apiserver, or
// older than the Event TTL (Events could have come and gone unseen) — is not used: kubecause starts
// as without one (the first list is a baseline), says why in one log line and counts it in
// kubecause_snapshot_restores_total{result}.
//
// The file's format is package snapshotfile's. Each part of the state takes and restores its own
// part of a snapshot: the tombstones, the TTL estimate, and the counters (metrics), through their
// caps as they count; the per-object view is not in it (it is rebuilt from the first lists).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/events/snapshotfile"
)

// SnapshotVersion is the format version written; a file of another version is not read.
const SnapshotVersion = snapshotfile.Version

const (
	// MaxSnapshotEvents caps the live Events a snapshot holds; past it, the Events whose first
	// occurrence is the oldest are left out: at the next start they are a baseline, as older than
	// the snapshot's last contact (an Event left out that began within snapshotClockSlack of it
	// would be counted whole a second time).
	MaxSnapshotEvents = snapshotfile.MaxEvents
	// snapshotClockSlack is how much earlier than a scope's last contact an Event not in the
	// snapshot may have begun and still count as created after it, in seconds: its notification
	// may have been on the way behind others when the snapshot was taken (a watch lagging under
	// load), and recorders' clocks differ from kubecause's. An Event not in the snapshot that began
	// that shortly before has no other reason to be missing from it (the cap of Events aside).
	snapshotClockSlack = 30
)

// maxSnapshotEvents is MaxSnapshotEvents (tests lower it).
var maxSnapshotEvents = MaxSnapshotEvents

// Results of a restore: the values of kubecause_snapshot_restores_total's result label.
const (
	RestoreRestored     = "restored" // the counting state was restored
	RestoreMissing      = snapshotfile.Missing
	RestoreUnreadable   = snapshotfile.Unreadable
	RestoreCorrupt      = snapshotfile.Corrupt
	RestoreTooLarge     = snapshotfile.TooLarge
	RestoreWrongVersion = snapshotfile.WrongVersion
	RestoreForeign      = snapshotfile.Foreign
	RestoreTooOld       = snapshotfile.TooOld
)

var restoreResults = []string{RestoreRestored, RestoreMissing, RestoreUnreadable, RestoreCorrupt,
	RestoreTooLarge, RestoreWrongVersion, RestoreForeign, RestoreTooOld}

// snapshotLimits are the caps of this engine, which bound each section of a snapshot it reads as
// the engine bounds what it writes there: the series of each counter family (--events.max-series,
// then the overflow series) and the tombstones.
func (e *Engine) snapshotLimits() snapshotfile.Limits {
	return snapshotfile.Limits{Series: e.m.events.max, Tombs: e.cfg.MaxTombstones, FoldCounter: overAgg, FoldAffected: overAff}
}

// takeSnapshot copies the counting state. Called with e.mu held.
func (e *Engine) takeSnapshot(identity string) *snapshotfile.Snapshot {
	s := e.takeSnapshotMeta(identity)
	s.Events = make([]snapshotfile.Event, 0, e.snapshotEventCount())
	e.snapshotEvents(func(x snapshotfile.Event) { s.Events = append(s.Events, x) })
	return s
}

// snapshotEventCount is how many live Events a snapshot holds: all of them, up to the cap. Called
// with e.mu held.
func (e *Engine) snapshotEventCount() int { return min(e.events.len(), maxSnapshotEvents) }

// snapshotEvents calls f for each of the snapshotEventCount live Events a snapshot holds. Called
// with e.mu held.
func (e *Engine) snapshotEvents(f func(snapshotfile.Event)) {
	kept := 0
	// Over the cap, the newest Events are kept: those that began after the cut-off second, then
	// those of the cut-off second until the cap is reached. The cut-off is found from the Events
	// per second of first occurrence (a few thousand seconds, not an Event each: ~50 ms at
	// 1,000,000 Events where sorting them took 0.25-0.5 s with the lock held).
	cut, over := uint32(0), e.events.len() > maxSnapshotEvents
	if over {
		perSecond := map[uint32]int{}
		e.events.each(func(_ uidKey, t tracked) bool {
			perSecond[t.first]++
			return true
		})
		secs := slices.Sorted(maps.Keys(perSecond))
		for i, newer := len(secs)-1, 0; i >= 0; i-- {
			if newer += perSecond[secs[i]]; newer >= maxSnapshotEvents {
				cut = secs[i]
				break
			}
		}
		e.events.each(func(k uidKey, t tracked) bool {
			if t.first > cut {
				f(snapshotfile.Event{UID: k, Name: t.name, Count: t.count, Src: t.src})
				kept++
			}
			return true
		})
	}
	e.events.each(func(k uidKey, t tracked) bool {
		if kept == maxSnapshotEvents {
			return false
		}
		if !over || t.first == cut {
			f(snapshotfile.Event{UID: k, Name: t.name, Count: t.count, Src: t.src})
			kept++
		}
		return true
	})
}

// takeSnapshotMeta copies the counting state but the live Events, each part from its owner.
// Called with e.mu held.
func (e *Engine) takeSnapshotMeta(identity string) *snapshotfile.Snapshot {
	now := e.cfg.Now().Unix()
	s := &snapshotfile.Snapshot{Identity: identity, Written: now}
	for _, src := range e.sources {
		s.Sources = append(s.Sources, snapshotfile.Source{Name: src.name, Contact: src.contact})
	}
	e.ttl.take(s)
	e.tombs.take(s, now)
	e.m.take(s)
	return s
}

// restoredEvent is a live Event of the snapshot not yet seen in its scope's first list.
type restoredEvent struct {
	name  uint64
	count int32
	src   uint16 // the index of its scope in the snapshot
}

// pendingSource is a scope of the snapshot, until NewSource takes it up.
type pendingSource struct {
	idx     uint16
	contact int64
}

// noScope is the snapIdx of a source that took up no scope of the snapshot (the watch scopes
// changed: --events.namespace, --events.field-selector, --events.normal-reason, or an upgrade
// that changed the default selector).
const noScope = math.MaxUint16

// restoreState is what a restore keeps until every source has read its first list.
type restoreState struct {
	events  map[uidKey]restoredEvent
	names   map[uint64]uidKey // name hash → UID of the snapshot's Events, for re-creations
	pending map[string]pendingSource
	// contact is the snapshot's latest contact with the apiserver: what a source that took up
	// no scope diffs its first list against.
	contact int64
	// taken and matched: sources that took up a scope of the snapshot, and Events of the
	// snapshot found in a first list (for the log line that ends the restore).
	taken, matched int
	// born: view entries born in a first list diffed against the snapshot, and whether they are
	// newly affected objects: true while only Events created after the snapshot are in them, false
	// once one the snapshot knew joins (whatever the order of the list).
	born map[viewKey]bool
}

// restore installs a checked snapshot into a new engine, before its sources are added: each part
// of the state restores its own, the counters through their caps.
func (e *Engine) restore(s *snapshotfile.Snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ttl.restore(s)
	rs := &restoreState{
		events:  make(map[uidKey]restoredEvent, len(s.Events)),
		names:   make(map[uint64]uidKey, len(s.Events)),
		pending: make(map[string]pendingSource, len(s.Sources)),
		born:    map[viewKey]bool{},
	}
	for i, src := range s.Sources {
		rs.pending[src.Name] = pendingSource{idx: uint16(i), contact: src.Contact}
		rs.contact = max(rs.contact, src.Contact)
	}
	for _, ev := range s.Events {
		rs.events[ev.UID] = restoredEvent{name: ev.Name, count: ev.Count, src: ev.Src}
		rs.names[ev.Name] = ev.UID
	}
	e.restoring = rs
	e.restoringCounters.Store(true)
	e.tombs.restore(s, e.cfg.Now().Unix())
	e.m.restore(s)
}

// takeUp makes a new source added during a restore diff its first list against the snapshot: it
// goes on from its scope in the snapshot if there is one of its name, and otherwise from the
// snapshot's latest contact. Called with e.mu held.
func (e *Engine) takeUp(s *Source) {
	rs := e.restoring
	if rs == nil {
		return
	}
	s.restored, s.snapIdx, s.contact = true, noScope, rs.contact
	if p, ok := rs.pending[s.name]; ok {
		delete(rs.pending, s.name)
		s.snapIdx, s.contact = p.idx, p.contact
		rs.taken++
	}
}

// fromSnapshot decides the occurrences of an Event new to this process, seen in the first list of
// a source restored from a snapshot. handled is false when the engine's own rules apply (the Event
// re-creates one of the tombstones); old is true when the Event was already there before the
// restart (no newly affected object). The snapshot's Events are looked up by UID (or name) in
// every scope of the snapshot, not only the source's own: the scopes may have changed since, and
// an Event is the same Event whichever watch lists it (the scopes of one process are disjoint).
// Called with e.mu held.
func (e *Engine) fromSnapshot(s *Source, k uidKey, name uint64, ev *corev1.Event, n int32) (delta int32, handled, old bool) {
	rs := e.restoring
	if rs == nil {
		return 0, false, false
	}
	if r, ok := rs.events[k]; ok {
		delete(rs.events, k)
		rs.matched++
		return max(n-r.count, 0), true, true
	}
	if u, ok := rs.names[name]; ok {
		if r, ok := rs.events[u]; ok {
			// The snapshot's Event expired while kubecause was away and the recorder re-created it
			// under its name with the accumulated count: the occurrences since the snapshot.
			delete(rs.events, u)
			rs.matched++
			return max(n-r.count, 1), true, true
		}
	}
	if e.tombs.has(name) {
		return 0, false, false
	}
	if firstTime(ev)+snapshotClockSlack < s.contact {
		return 0, true, true // there before the snapshot without being in it: a baseline
	}
	return n, true, false // created after the snapshot's last contact, or on its way then: all of it
}

// restoredView records what an Event of a first list diffed against the snapshot did to view
// slot i: born, an entry was born for an Event new since the snapshot; fromBefore, the Event was
// known to the snapshot. Called with e.mu held.
func (e *Engine) restoredView(i int32, born, fromBefore bool) {
	if i < 0 {
		return
	}
	k := e.view.entries[i].key
	switch {
	case fromBefore:
		if _, ok := e.restoring.born[k]; ok {
			e.restoring.born[k] = false
		}
	case born:
		e.restoring.born[k] = true
	}
}

// endRestore ends the first list of a restored source: the snapshot's Events of its scope that the
// list did not show expired (or were deleted) while kubecause was away; they become tombstones, so
// that a re-creation is counted exactly. Called with e.mu held.
func (e *Engine) endRestore(s *Source) {
	s.restored = false
	rs := e.restoring
	if rs == nil || s.snapIdx == noScope {
		return
	}
	now := e.cfg.Now().Unix()
	for k, r := range rs.events {
		if r.src == s.snapIdx {
			delete(rs.events, k)
			e.tombs.bury(r.name, r.count, now)
		}
	}
	e.tombs.prune(now)
}

// finishRestore ends the restore once every source has read its first list, whichever scopes they
// took up: the counters are served again. Every counter of the snapshot is carried (they are not
// per scope: a counter of Events no scope watches now keeps its value, as it would had the scopes
// changed without a restart). The snapshot's Events that no first list showed — gone while
// kubecause was away, or in a scope no longer watched — become tombstones. Called with e.mu held.
func (e *Engine) finishRestore() {
	rs := e.restoring
	if rs == nil || !e.syncedLocked() {
		return
	}
	now := e.cfg.Now().Unix()
	gone := len(rs.events)
	for _, r := range rs.events {
		e.tombs.bury(r.name, r.count, now)
	}
	e.tombs.prune(now)
	// Objects that began to show a cause while kubecause was away: entries born for Events
	// created since the snapshot that no Event the snapshot knew joined.
	for k, fresh := range rs.born {
		if fresh {
			e.m.affect(k)
		}
	}
	untaken := make([]string, 0, len(rs.pending))
	for name := range rs.pending {
		untaken = append(untaken, name)
	}
	slices.Sort(untaken)
	if n := len(untaken); n > 10 { // a forged file may name 4,096
		untaken = append(untaken[:10], fmt.Sprintf("and %d more", n-10))
	}
	e.cfg.Logger.Info("snapshot restore ended: the counters are served, carried from the snapshot",
		"sources", len(e.sources), "scopes_taken_up", rs.taken, "scopes_no_longer_watched", untaken,
		"events_found", rs.matched, "events_gone", gone)
	e.restoring = nil
	e.restoringCounters.Store(false)
}

// gated hides a counter family from scrapes while hidden is set: while the first lists are diffed
// against a restored snapshot. The old process may have counted past its last snapshot (a SIGKILL)
// and been scraped, so the restored values, and any value until the diff is complete, can be lower
// than the last one Prometheus has: a decrease it would take for a counter reset, and count the
// whole value again. Absent, the series are as during the scrapes missed while kubecause was down,
// and they come back no lower than they were.
type gated struct {
	prometheus.Collector
	hidden *atomic.Bool
}

func (g gated) Collect(ch chan<- prometheus.Metric) {
	if !g.hidden.Load() {
		g.Collector.Collect(ch)
	}
}

// Snapshots keeps the engine's counting state in a file across restarts of kubecause.
type Snapshots struct {
	e        *Engine
	path     string
	identity string
	every    time.Duration
	logger   *slog.Logger
	done     chan struct{}
}

// SnapshotIdentity identifies this process's view for the snapshot: the host name (a pod's name)
// and the apiserver it reads. A snapshot written under another identity is not used.
func SnapshotIdentity(server string) string {
	h, _ := os.Hostname()
	return h + " " + server
}

// OpenSnapshots restores the engine from the snapshot file, if it can be trusted, and returns what
// writes it (Run). path "" turns snapshots off (a nil *Snapshots, whose methods do nothing). It
// must be called before the engine's sources are added.
func OpenSnapshots(e *Engine, path, identity string, every time.Duration, logger *slog.Logger) *Snapshots {
	if path == "" {
		return nil
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Snapshots{e: e, path: path, identity: identity, every: every, logger: logger, done: make(chan struct{})}
	s.removeTemporaries()
	s.restore()
	return s
}

// removeTemporaries removes the temporary files of snapshots a process was killed while writing,
// so that kills do not fill the volume.
func (s *Snapshots) removeTemporaries() {
	removed, err := snapshotfile.RemoveTemporaries(s.path)
	if err != nil {
		s.logger.Warn("cannot remove stale snapshot temporaries", "file", s.path, "err", err)
	}
	if removed > 0 {
		s.logger.Info("removed stale snapshot temporaries (a write was cut short)", "file", s.path, "files", removed)
	}
}

func (s *Snapshots) restore() {
	start := time.Now()
	snap, err := snapshotfile.ReadFile(s.path, s.e.snapshotLimits())
	if err == nil {
		err = snap.Check(s.identity, s.e.cfg.Now().Unix())
	}
	result := RestoreRestored
	var se *snapshotfile.Error
	switch {
	case err == nil:
		s.e.restore(snap)
	case errors.As(err, &se):
		result = se.Result
	default:
		result = RestoreUnreadable
	}
	s.e.m.restores.WithLabelValues(result).Inc()
	switch result {
	case RestoreRestored:
		s.logger.Info("counting state restored from the snapshot: occurrences while kubecause was away are counted",
			"file", s.path, "written", time.Unix(snap.Written, 0).UTC().Format(time.RFC3339),
			"events", len(snap.Events), "scopes", len(snap.Sources), "took", time.Since(start).Round(time.Microsecond))
		if snap.Folded > 0 {
			s.logger.Warn("the snapshot holds more counter series than --events.max-series: the rest were restored into the overflow series (sums unchanged, counted in kubecause_series_dropped_total)",
				"file", s.path, "series_folded", snap.Folded, "max_series", s.e.m.events.max)
		}
	case RestoreMissing:
		s.logger.Info("no snapshot to restore: Events that exist now are a baseline", "file", s.path)
	default:
		s.logger.Warn("snapshot not used: Events that exist now are a baseline; occurrences while kubecause was away are not counted",
			"file", s.path, "result", result, "err", err)
	}
}

// errNotSynced: no snapshot is written before every scope read its first list, so that a restart
// during a restore keeps the previous snapshot rather than one without the Events not yet listed.
var errNotSynced = errors.New("the initial Event lists are not read yet")

// Write writes a snapshot now, atomically (a temporary file renamed over the file). It returns
// the size written.
func (s *Snapshots) Write() (int, error) {
	if s == nil {
		return 0, nil
	}
	e := s.e
	e.mu.Lock()
	if !e.syncedLocked() {
		e.mu.Unlock()
		return 0, errNotSynced
	}
	// Encoded with the lock held: the live Events go from the table into the file's bytes
	// without a copy of their own (EncodeWith).
	b, err := e.takeSnapshotMeta(s.identity).EncodeWith(e.snapshotEventCount(), e.snapshotEvents)
	e.mu.Unlock()
	if err == nil {
		err = snapshotfile.WriteAtomic(s.path, b)
	}
	result := "written"
	if err != nil {
		result = "failed"
	}
	e.m.snapshotWrites.WithLabelValues(result).Inc()
	return len(b), err
}

// Run writes a snapshot every interval, and a last one when ctx ends (SIGTERM), then returns.
func (s *Snapshots) Run(ctx context.Context) {
	if s == nil {
		return
	}
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	write := func(final bool) {
		start := time.Now()
		n, err := s.Write()
		switch {
		case errors.Is(err, errNotSynced):
			if final {
				s.logger.Info("no snapshot written at shutdown: the initial Event lists were not read yet; the previous one is kept", "file", s.path)
			}
		case err != nil:
			s.logger.Error("cannot write the snapshot", "file", s.path, "err", err)
		case final:
			s.logger.Info("snapshot written at shutdown", "file", s.path, "bytes", n, "took", time.Since(start).Round(time.Microsecond))
		default:
			s.logger.Debug("snapshot written", "file", s.path, "bytes", n, "took", time.Since(start).Round(time.Microsecond))
		}
	}
	for {
		select {
		case <-ctx.Done():
			write(true)
			return
		case <-t.C:
			write(false)
		}
	}
}

// Wait waits until Run wrote its last snapshot (at most timeout).
func (s *Snapshots) Wait(timeout time.Duration) {
	if s == nil {
		return
	}
	select {
	case <-s.done:
	case <-time.After(timeout):
	}
}
