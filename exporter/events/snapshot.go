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

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/labels"
)

// SnapshotVersion is the format version written; a file of another version is not read.
const SnapshotVersion = 1

const (
	snapshotMagic = "KCEVSNAP"
	// MaxSnapshotEvents caps the live Events a snapshot holds (30 bytes each, 15 MB at the cap);
	// past it, the Events whose first occurrence is the oldest are left out: at the next start
	// they are a baseline, as older than the snapshot's last contact (an Event left out that
	// began within snapshotClockSlack of it would be counted whole a second time).
	MaxSnapshotEvents = 500_000
	// maxSnapshotBytes caps the file read: the cap on Events, MaxTombstones' default and
	// --events.max-series' default with room for long label values fit well below it.
	maxSnapshotBytes   = 64 << 20
	maxSnapshotSources = 1 << 12
	// maxSnapshotString bounds a string of the file: label values are at most 128 bytes
	// (exporter/labels), a watch scope's name a namespace and a field selector.
	maxSnapshotString = 4096
	// maxSnapshotOverflow bounds the overflow series a counter family of a snapshot folds into
	// (decodeSnapshot): the engine makes one per Event type and cause.
	maxSnapshotOverflow = 1 << 12
	// maxSnapshotRules bounds the rule counters of a snapshot: a cause table, of at most
	// causes.MaxFileSize bytes, has fewer rules.
	maxSnapshotRules = causes.MaxFileSize / 16
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
	RestoreRestored     = "restored"      // the counting state was restored
	RestoreMissing      = "missing"       // no file (the first start of a pod)
	RestoreUnreadable   = "unreadable"    // the file could not be read (permissions, I/O)
	RestoreCorrupt      = "corrupt"       // not a snapshot, truncated, checksum or content invalid
	RestoreTooLarge     = "too_large"     // larger than the cap
	RestoreWrongVersion = "wrong_version" // another format version
	RestoreForeign      = "foreign"       // written by another pod or for another apiserver
	RestoreTooOld       = "too_old"       // older than the Event TTL
)

var restoreResults = []string{RestoreRestored, RestoreMissing, RestoreUnreadable, RestoreCorrupt,
	RestoreTooLarge, RestoreWrongVersion, RestoreForeign, RestoreTooOld}

type snapshot struct {
	identity string
	written  int64 // unix seconds
	ttl      int64 // the Event TTL as the engine knew it, seconds
	// What the engine learnt of the TTL: from deletions (deletionTTL, 0: not yet) and lists.
	deletionTTL, listedAge int64
	sources                []snapSource
	events                 []snapEvent
	tombs                  []snapTomb
	counters               []snapCounter
	affected               []snapAffected
	rules                  []snapRule
	unclassified           float64
	possiblyLost, gapLost  float64
	// folded: series of the file past the reader's --events.max-series, read into the overflow
	// series (decodeSnapshot; never written).
	folded int
}

type snapSource struct {
	name    string
	contact int64
}

type snapEvent struct {
	uid   uidKey
	name  uint64
	count int32
	src   uint16
}

type snapTomb struct {
	name    uint64
	count   int32
	expires int64
}

// snapSeries is a counter series of the snapshot and its value.
type snapSeries[K comparable] struct {
	key   K
	value float64
}

type (
	snapCounter  = snapSeries[aggKey]
	snapAffected = snapSeries[affKey]
)

type snapRule struct {
	rule, cause string
	value       float64
}

// snapshotError is why a file is not used: a result of restoreResults and the detail.
type snapshotError struct {
	result string
	err    error
}

func (e *snapshotError) Error() string { return e.result + ": " + e.err.Error() }

func corrupt(format string, args ...any) error {
	return &snapshotError{RestoreCorrupt, fmt.Errorf(format, args...)}
}

// encode writes the snapshot: magic, version, the sections, and a CRC-32C of everything before it.
func (s *snapshot) encode() []byte {
	b, _ := s.encodeWith(len(s.events), func(f func(snapEvent)) {
		for _, x := range s.events {
			f(x)
		}
	})
	return b
}

// encodeWith is encode with the n live Events given by events instead of s.events: Write encodes
// them straight from the engine's table, with its lock held, rather than copying them first (the
// copy was 32 bytes per Event next to the file's 30: 16 MB at the cap, every interval).
func (s *snapshot) encodeWith(nEvents int, events func(func(snapEvent))) ([]byte, error) {
	b := make([]byte, 0, 128+nEvents*30+len(s.tombs)*20+len(s.counters)*96)
	b = append(b, snapshotMagic...)
	b = binary.LittleEndian.AppendUint16(b, SnapshotVersion)
	str := func(v string) { b = binary.AppendUvarint(b, uint64(len(v))); b = append(b, v...) }
	i64 := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	f64 := func(v float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) }
	n := func(v int) { b = binary.AppendUvarint(b, uint64(v)) }
	str(s.identity)
	i64(s.written)
	i64(s.ttl)
	i64(s.deletionTTL)
	i64(s.listedAge)
	n(len(s.sources))
	for _, x := range s.sources {
		str(x.name)
		i64(x.contact)
	}
	n(nEvents)
	written := 0
	events(func(x snapEvent) {
		b = append(b, x.uid[:]...)
		b = binary.LittleEndian.AppendUint64(b, x.name)
		b = binary.LittleEndian.AppendUint32(b, uint32(x.count))
		b = binary.LittleEndian.AppendUint16(b, x.src)
		written++
	})
	if written != nEvents {
		return nil, fmt.Errorf("snapshot of %d live Events announced, %d encoded", nEvents, written)
	}
	n(len(s.tombs))
	for _, x := range s.tombs {
		b = binary.LittleEndian.AppendUint64(b, x.name)
		b = binary.LittleEndian.AppendUint32(b, uint32(x.count))
		i64(x.expires)
	}
	n(len(s.counters))
	for _, x := range s.counters {
		for _, v := range []string{x.key.namespace, x.key.kind, x.key.reason, x.key.typ, x.key.component, x.key.cause} {
			str(v)
		}
		f64(x.value)
	}
	n(len(s.affected))
	for _, x := range s.affected {
		str(x.key.namespace)
		str(x.key.kind)
		str(x.key.cause)
		f64(x.value)
	}
	n(len(s.rules))
	for _, x := range s.rules {
		str(x.rule)
		str(x.cause)
		f64(x.value)
	}
	f64(s.unclassified)
	f64(s.possiblyLost)
	f64(s.gapLost)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable)), nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// reader reads the sections of a snapshot; the first problem sticks and every later read is a
// zero value.
type reader struct {
	b   []byte
	err error
	// strs shares the strings read (the label values of the series repeat), so that a section
	// of many records allocates for the values it has, not for each record.
	strs map[string]string
}

// maxReaderStrings bounds reader.strs; past it, strings are not shared.
const maxReaderStrings = 1 << 14

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = corrupt("truncated: %d bytes wanted, %d left", n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) i64() int64 {
	if v := r.take(8); v != nil {
		return int64(binary.LittleEndian.Uint64(v))
	}
	return 0
}

func (r *reader) u64() uint64 { return uint64(r.i64()) }

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

// value reads a counter value: finite and not negative.
func (r *reader) value() float64 {
	v := math.Float64frombits(r.u64())
	if r.err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
		r.err = corrupt("counter value %g", v)
		return 0
	}
	return v
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != max(1, (bits.Len64(v)+6)/7) { // only the shortest form, as written
		r.err = corrupt("bad length")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a section's length: at most max, and no more records than the bytes left could
// hold (each at least size bytes), so a forged length allocates nothing.
func (r *reader) count(what string, max, size int) int {
	v := r.uvarint()
	if r.err == nil && (v > uint64(max) || v > uint64(len(r.b)/size)) {
		r.err = corrupt("%d %s: more than %d or than the file holds", v, what, max)
		return 0
	}
	return int(v)
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err == nil && n > maxSnapshotString {
		r.err = corrupt("string of %d bytes", n)
		return ""
	}
	v := r.take(int(n))
	if r.err != nil {
		return ""
	}
	if s, ok := r.strs[string(v)]; ok {
		return s
	}
	if !utf8.Valid(v) {
		r.err = corrupt("string not UTF-8")
		return ""
	}
	s := string(v)
	if len(r.strs) < maxReaderStrings {
		r.strs[s] = s
	}
	return s
}

// label reads a label value, which must be as kubecause writes them (exporter/labels).
func (r *reader) label() string {
	v := r.str()
	if r.err == nil && labels.Value(v) != v {
		r.err = corrupt("label value %q is not one kubecause writes", v)
		return ""
	}
	return v
}

// snapshotLimits are the caps of the engine that reads a snapshot, which bound each section as the
// engine bounds what it writes there: the series of each counter family (--events.max-series,
// then one overflow series per type and cause) and the tombstones.
type snapshotLimits struct {
	series, tombs int
}

func (e *Engine) snapshotLimits() snapshotLimits {
	return snapshotLimits{series: e.m.max, tombs: e.cfg.MaxTombstones}
}

// readSeries reads a counter family's section: the series as written up to limit, and those past
// it (written with a larger --events.max-series) added to the overflow series over returns for
// them, as the engine counts past its cap — so a file of more series than the cap costs no more
// memory than the cap. A series written twice is content kubecause never writes.
func readSeries[K comparable](r *reader, what string, limit, size int, read func() K, over func(K) K) (out []snapSeries[K], folded int) {
	n := r.count(what, math.MaxInt32, size)
	at := make(map[K]int, min(n, limit))
	made := map[K]bool{} // overflow series made here (a series written may have the same key)
	out = make([]snapSeries[K], 0, min(n, limit))
	for range n {
		k, v := read(), r.value()
		if r.err != nil {
			return nil, 0
		}
		i, ok := at[k]
		switch {
		case ok && !made[k]:
			r.err = corrupt("%s: the series %+v twice", what, k)
			return nil, 0
		case !ok && len(at)-len(made) >= limit:
			k, folded = over(k), folded+1
			if i, ok = at[k]; !ok {
				if len(made) >= maxSnapshotOverflow {
					r.err = corrupt("%s: more than %d overflow series", what, maxSnapshotOverflow)
					return nil, 0
				}
				made[k] = true
			}
		}
		if !ok {
			at[k] = len(out)
			out = append(out, snapSeries[K]{key: k, value: v})
		} else if out[i].value += v; math.IsInf(out[i].value, 0) {
			r.err = corrupt("%s: counter value overflows", what)
			return nil, 0
		}
	}
	return out, folded
}

// decodeSnapshot reads a snapshot within the reader's limits; errors are *snapshotError.
func decodeSnapshot(b []byte, lim snapshotLimits) (*snapshot, error) {
	if len(b) < len(snapshotMagic)+2 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, corrupt("not a kubecause snapshot")
	}
	if v := binary.LittleEndian.Uint16(b[len(snapshotMagic):]); v != SnapshotVersion {
		return nil, &snapshotError{RestoreWrongVersion, fmt.Errorf("format version %d, this kubecause reads %d", v, SnapshotVersion)}
	}
	if len(b) < len(snapshotMagic)+2+4 {
		return nil, corrupt("truncated")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, corrupt("checksum mismatch (truncated or damaged)")
	}
	r := &reader{b: body[len(snapshotMagic)+2:], strs: map[string]string{}}
	s := &snapshot{identity: r.str(), written: r.i64(), ttl: r.i64(), deletionTTL: r.i64(), listedAge: r.i64()}
	s.sources = make([]snapSource, r.count("sources", maxSnapshotSources, 9))
	for i := range s.sources {
		s.sources[i] = snapSource{name: r.str(), contact: r.i64()}
	}
	s.events = make([]snapEvent, r.count("events", MaxSnapshotEvents, 30))
	for i := range s.events {
		x := &s.events[i]
		copy(x.uid[:], r.take(16))
		x.name, x.count, x.src = r.u64(), int32(r.u32()), r.u16()
		if r.err == nil && (x.count < 1 || int(x.src) >= len(s.sources)) {
			r.err = corrupt("event with count %d of source %d", x.count, x.src)
		}
	}
	s.tombs = make([]snapTomb, r.count("tombstones", lim.tombs, 20))
	for i := range s.tombs {
		s.tombs[i] = snapTomb{name: r.u64(), count: int32(r.u32()), expires: r.i64()}
		if r.err == nil && s.tombs[i].count < 1 {
			r.err = corrupt("tombstone with count %d", s.tombs[i].count)
		}
	}
	var folded int
	s.counters, s.folded = readSeries(r, "counters", lim.series, 14, func() aggKey {
		return aggKey{namespace: r.label(), kind: r.label(), reason: r.label(), typ: r.label(), component: r.label(), cause: r.label()}
	}, func(k aggKey) aggKey {
		return aggKey{namespace: overflow, kind: overflow, reason: overflow, typ: k.typ, component: overflow, cause: k.cause}
	})
	s.affected, folded = readSeries(r, "affected counters", lim.series, 11, func() affKey {
		return affKey{namespace: r.label(), kind: r.label(), cause: r.label()}
	}, func(k affKey) affKey { return affKey{namespace: overflow, kind: overflow, cause: k.cause} })
	s.folded += folded
	s.rules = make([]snapRule, r.count("rule counters", maxSnapshotRules, 10))
	for i := range s.rules {
		s.rules[i] = snapRule{rule: r.label(), cause: r.label(), value: r.value()}
	}
	s.unclassified, s.possiblyLost, s.gapLost = r.value(), r.value(), r.value()
	if r.err == nil && len(r.b) != 0 {
		r.err = corrupt("%d bytes after the end", len(r.b))
	}
	if r.err == nil && (s.ttl <= 0 || s.written <= 0) {
		r.err = corrupt("written at %d with TTL %d", s.written, s.ttl)
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// takeSnapshot copies the counting state. Called with e.mu held.
func (e *Engine) takeSnapshot(identity string) *snapshot {
	s := e.takeSnapshotMeta(identity)
	s.events = make([]snapEvent, 0, e.snapshotEventCount())
	e.snapshotEvents(func(x snapEvent) { s.events = append(s.events, x) })
	return s
}

// snapshotEventCount is how many live Events a snapshot holds: all of them, up to the cap. Called
// with e.mu held.
func (e *Engine) snapshotEventCount() int { return min(e.events.len(), maxSnapshotEvents) }

// snapshotEvents calls f for each of the snapshotEventCount live Events a snapshot holds. Called
// with e.mu held.
func (e *Engine) snapshotEvents(f func(snapEvent)) {
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
				f(snapEvent{uid: k, name: t.name, count: t.count, src: t.src})
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
			f(snapEvent{uid: k, name: t.name, count: t.count, src: t.src})
			kept++
		}
		return true
	})
}

// takeSnapshotMeta copies the counting state but the live Events. Called with e.mu held.
func (e *Engine) takeSnapshotMeta(identity string) *snapshot {
	s := &snapshot{identity: identity, written: e.cfg.Now().Unix(), ttl: e.eventTTL(),
		deletionTTL: e.deletionTTL(), listedAge: e.listedAge}
	for _, src := range e.sources {
		s.sources = append(s.sources, snapSource{name: src.name, contact: src.contact})
	}
	now := e.cfg.Now().Unix()
	for h, t := range e.tombs {
		if t.expires > now {
			s.tombs = append(s.tombs, snapTomb{name: h, count: t.count, expires: t.expires})
		}
	}
	m := e.m
	for k, c := range m.known {
		s.counters = append(s.counters, snapCounter{key: k, value: counterValue(c)})
	}
	for k, c := range m.affKnown {
		s.affected = append(s.affected, snapAffected{key: k, value: counterValue(c)})
	}
	for k, c := range m.ruleKnown {
		if v := counterValue(c); v > 0 {
			s.rules = append(s.rules, snapRule{rule: ruleLabel(k.rule), cause: k.cause, value: v})
		}
	}
	s.unclassified, s.possiblyLost, s.gapLost = counterValue(m.unclassified), counterValue(m.possiblyLost), counterValue(m.gapLost)
	return s
}

func counterValue(c interface{ Write(*dto.Metric) error }) float64 {
	var d dto.Metric
	if c.Write(&d) != nil || d.Counter == nil {
		return 0
	}
	return d.Counter.GetValue()
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

// checkSnapshot says whether s can be used now by this process.
func (e *Engine) checkSnapshot(s *snapshot, identity string) error {
	now := e.cfg.Now().Unix()
	if s.identity != identity {
		return &snapshotError{RestoreForeign, fmt.Errorf("written by %q, this is %q", s.identity, identity)}
	}
	if s.written > now+60 {
		return corrupt("written in the future (%s)", time.Unix(s.written, 0).UTC().Format(time.RFC3339))
	}
	oldest := s.written
	for _, src := range s.sources {
		if src.contact > s.written {
			return corrupt("scope %q in contact after the snapshot was written", src.name)
		}
		if src.contact > 0 {
			oldest = min(oldest, src.contact)
		}
	}
	// Events created and expired while kubecause was away would be missed without a trace.
	if age := now - oldest; age > s.ttl {
		return &snapshotError{RestoreTooOld, fmt.Errorf("last contact %s ago, longer than the Event TTL %s",
			time.Duration(age)*time.Second, time.Duration(s.ttl)*time.Second)}
	}
	return nil
}

// restore installs a checked snapshot into a new engine, before its sources are added.
func (e *Engine) restore(s *snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.learnTTL(s.deletionTTL)
	e.listedAge = max(e.listedAge, s.listedAge)
	rs := &restoreState{
		events:  make(map[uidKey]restoredEvent, len(s.events)),
		names:   make(map[uint64]uidKey, len(s.events)),
		pending: make(map[string]pendingSource, len(s.sources)),
		born:    map[viewKey]bool{},
	}
	for i, src := range s.sources {
		rs.pending[src.name] = pendingSource{idx: uint16(i), contact: src.contact}
		rs.contact = max(rs.contact, src.contact)
	}
	for _, ev := range s.events {
		rs.events[ev.uid] = restoredEvent{name: ev.name, count: ev.count, src: ev.src}
		rs.names[ev.name] = ev.uid
	}
	e.restoring = rs
	e.restoringCounters.Store(true)
	now := e.cfg.Now().Unix()
	for _, t := range s.tombs {
		if t.expires > now && len(e.tombs) < e.cfg.MaxTombstones {
			e.tombs[t.name] = tombstone{count: t.count, expires: t.expires}
			e.tombQ = append(e.tombQ, t.name)
		}
	}
	m := e.m
	for _, c := range s.counters {
		k := c.key
		if _, ok := m.known[k]; !ok && len(m.known) >= m.max {
			k = aggKey{namespace: overflow, kind: overflow, reason: overflow, typ: k.typ, component: overflow, cause: k.cause}
		}
		ctr, ok := m.known[k]
		if !ok {
			ctr = m.events.WithLabelValues(k.namespace, k.kind, k.reason, k.typ, k.component, k.cause)
			m.known[k] = ctr
		}
		ctr.Add(c.value)
	}
	m.series.WithLabelValues("kubecause_events_total").Set(float64(len(m.known)))
	for _, c := range s.affected {
		k := c.key
		if _, ok := m.affKnown[k]; !ok && len(m.affKnown) >= m.max {
			k = affKey{namespace: overflow, kind: overflow, cause: k.cause}
		}
		ctr, ok := m.affKnown[k]
		if !ok {
			ctr = m.affected.WithLabelValues(k.namespace, k.kind, k.cause)
			m.affKnown[k] = ctr
		}
		ctr.Add(c.value)
	}
	m.series.WithLabelValues("kubecause_objects_affected_total").Set(float64(len(m.affKnown)))
	// Only the rules of the table in use: a rule the table no longer has is not exported again.
	for _, r := range s.rules {
		rule := r.rule
		if rule == "fallback" {
			rule = ""
		}
		if c, ok := m.ruleKnown[classification{cause: r.cause, rule: rule}]; ok {
			c.Add(r.value)
		}
	}
	m.unclassified.Add(s.unclassified)
	m.possiblyLost.Add(s.possiblyLost)
	m.gapLost.Add(s.gapLost)
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
	if _, ok := e.tombs[name]; ok {
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
			e.tombs[r.name] = tombstone{count: r.count, expires: now + int64(e.cfg.TombstoneTTL/time.Second)}
			e.tombQ = append(e.tombQ, r.name)
		}
	}
	e.pruneTombs(now)
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
		e.tombs[r.name] = tombstone{count: r.count, expires: now + int64(e.cfg.TombstoneTTL/time.Second)}
		e.tombQ = append(e.tombQ, r.name)
	}
	e.pruneTombs(now)
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

// tmpPrefix begins the names of the temporary files writeAtomic writes the snapshot to.
func tmpPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// removeTemporaries removes the temporary files of snapshots a process was killed while writing
// (they are never renamed over the file), so that kills do not fill the volume.
func (s *Snapshots) removeTemporaries() {
	dir, prefix := filepath.Dir(s.path), tmpPrefix(s.path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // the restore says why the file cannot be read
	}
	removed := 0
	for _, d := range entries {
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), prefix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, d.Name())); err != nil {
			s.logger.Warn("cannot remove a stale snapshot temporary", "file", filepath.Join(dir, d.Name()), "err", err)
			continue
		}
		removed++
	}
	if removed > 0 {
		s.logger.Info("removed stale snapshot temporaries (a write was cut short)", "dir", dir, "files", removed)
	}
}

func (s *Snapshots) restore() {
	start := time.Now()
	snap, err := readSnapshotFile(s.path, s.e.snapshotLimits())
	if err == nil {
		err = s.e.checkSnapshot(snap, s.identity)
	}
	result := RestoreRestored
	var se *snapshotError
	switch {
	case err == nil:
		s.e.restore(snap)
	case errors.As(err, &se):
		result = se.result
	default:
		result = RestoreUnreadable
	}
	s.e.m.restores.WithLabelValues(result).Inc()
	switch result {
	case RestoreRestored:
		s.logger.Info("counting state restored from the snapshot: occurrences while kubecause was away are counted",
			"file", s.path, "written", time.Unix(snap.written, 0).UTC().Format(time.RFC3339),
			"events", len(snap.events), "scopes", len(snap.sources), "took", time.Since(start).Round(time.Microsecond))
		if snap.folded > 0 {
			s.logger.Warn("the snapshot holds more counter series than --events.max-series: the rest were restored into the overflow series (sums unchanged)",
				"file", s.path, "series_folded", snap.folded, "max_series", s.e.m.max)
		}
	case RestoreMissing:
		s.logger.Info("no snapshot to restore: Events that exist now are a baseline", "file", s.path)
	default:
		s.logger.Warn("snapshot not used: Events that exist now are a baseline; occurrences while kubecause was away are not counted",
			"file", s.path, "result", result, "err", err)
	}
}

// readSnapshotFile reads and decodes the file; errors are *snapshotError when the result is known.
func readSnapshotFile(path string, lim snapshotLimits) (*snapshot, error) {
	// Stat first: opening a FIFO put at the path would block the start.
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &snapshotError{RestoreMissing, err}
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > maxSnapshotBytes {
		return nil, &snapshotError{RestoreTooLarge, fmt.Errorf("%d bytes, more than %d", st.Size(), maxSnapshotBytes)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (io.ReadAll would allocate about twice the file).
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxSnapshotBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxSnapshotBytes {
		return nil, &snapshotError{RestoreTooLarge, fmt.Errorf("more than %d bytes", maxSnapshotBytes)}
	}
	return decodeSnapshot(buf.Bytes(), lim)
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
	// without a copy of their own (encodeWith).
	b, err := e.takeSnapshotMeta(s.identity).encodeWith(e.snapshotEventCount(), e.snapshotEvents)
	e.mu.Unlock()
	if err == nil {
		err = writeAtomic(s.path, b)
	}
	result := "written"
	if err != nil {
		result = "failed"
	}
	e.m.snapshotWrites.WithLabelValues(result).Inc()
	return len(b), err
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = io.Copy(f, bytes.NewReader(b))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
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
