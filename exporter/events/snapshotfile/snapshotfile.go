// Package snapshotfile is the file format of the Event engine's snapshot (--events.snapshot-file):
// its layout, its encoding, decoding within the reader's caps, the checksum, the checks that say
// whether a file can be used, and writing it atomically. What the snapshot holds, and how it is
// taken and restored, is the engine's (package events).
//
// A file is the magic, the format version, the sections, and a CRC-32C of everything before it. A
// file that cannot be trusted is refused with an *Error whose Result says why (the values of
// kubecause_snapshot_restores_total's result label).
package snapshotfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"time"
	"unicode/utf8"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/labels"
)

// Version is the format version written; a file of another version is not read.
const Version = 1

// Magic begins every snapshot file.
const Magic = "KCEVSNAP"

const (
	// MaxEvents caps the live Events a snapshot holds (30 bytes each, 15 MB at the cap).
	MaxEvents = 500_000
	// MaxBytes caps the file read: the cap on Events, the engine's default caps on tombstones and
	// series with room for long label values fit well below it.
	MaxBytes   = 64 << 20
	maxSources = 1 << 12
	// maxString bounds a string of the file: label values are at most 128 bytes (exporter/labels),
	// a watch scope's name a namespace and a field selector.
	maxString = 4096
	// maxFolded bounds the overflow series a counter family of a file folds into (Decode): the
	// engine makes one per Event type and cause.
	maxFolded = 1 << 12
	// maxRules bounds the rule counters: a cause table, of at most causes.MaxFileSize bytes, has
	// fewer rules.
	maxRules = causes.MaxFileSize / 16
)

// Why a file is not used: the Result of an *Error.
const (
	Missing      = "missing"       // no file (the first start of a pod)
	Unreadable   = "unreadable"    // the file could not be read (permissions, I/O)
	Corrupt      = "corrupt"       // not a snapshot, truncated, checksum or content invalid
	TooLarge     = "too_large"     // larger than MaxBytes
	WrongVersion = "wrong_version" // another format version
	Foreign      = "foreign"       // written by another pod or for another apiserver
	TooOld       = "too_old"       // older than the Event TTL
)

// Snapshot is the content of a file.
type Snapshot struct {
	Identity string
	Written  int64 // Unix seconds
	TTL      int64 // the Event TTL as the engine knew it, seconds
	// What the engine learnt of the TTL: from deletions (0: not yet) and from lists.
	DeletionTTL, ListedAge int64
	Sources                []Source
	Events                 []Event
	Tombs                  []Tomb
	Counters               []Series[CounterKey]
	Affected               []Series[AffectedKey]
	Rules                  []Rule
	Unclassified           float64
	PossiblyLost, GapLost  float64

	// Never written: the series of a file past the reader's Limits.Series, summed into the series
	// its fold names (Decode), and how many there were.
	CountersFolded []Series[CounterKey]
	AffectedFolded []Series[AffectedKey]
	Folded         int
}

// Source is a watch scope and its last contact with the apiserver (Unix seconds).
type Source struct {
	Name    string
	Contact int64
}

// Event is a live Event: its UID, the hash of its namespace/name, the count last counted and the
// index of its scope in Sources.
type Event struct {
	UID   [16]byte
	Name  uint64
	Count int32
	Src   uint16
}

// Tomb is the count of an expired Event, by the hash of its namespace/name, until it expires.
type Tomb struct {
	Name    uint64
	Count   int32
	Expires int64
}

// Series is a counter series and its value.
type Series[K comparable] struct {
	Key   K
	Value float64
}

// CounterKey is the label set of a kubecause_events_total series.
type CounterKey struct {
	Namespace, Kind, Reason, Type, Component, Cause string
}

// AffectedKey is the label set of a kubecause_objects_affected_total series.
type AffectedKey struct {
	Namespace, Kind, Cause string
}

// Rule is a kubecause_rule_hits_total series.
type Rule struct {
	Rule, Cause string
	Value       float64
}

// Error is why a file is not used: a Result and the detail.
type Error struct {
	Result string
	Err    error
}

func (e *Error) Error() string { return e.Result + ": " + e.Err.Error() }

func corrupt(format string, args ...any) error {
	return &Error{Corrupt, fmt.Errorf(format, args...)}
}

// Encode writes the snapshot.
func (s *Snapshot) Encode() []byte {
	b, _ := s.EncodeWith(len(s.Events), func(f func(Event)) {
		for _, x := range s.Events {
			f(x)
		}
	})
	return b
}

// EncodeWith is Encode with the n live Events given by events instead of s.Events: the engine
// encodes them straight from its table, with its lock held, rather than copying them first (the
// copy was 32 bytes per Event next to the file's 30: 16 MB at the cap, every interval).
func (s *Snapshot) EncodeWith(nEvents int, events func(func(Event))) ([]byte, error) {
	b := make([]byte, 0, 128+nEvents*30+len(s.Tombs)*20+len(s.Counters)*96)
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint16(b, Version)
	str := func(v string) { b = binary.AppendUvarint(b, uint64(len(v))); b = append(b, v...) }
	i64 := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	f64 := func(v float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) }
	n := func(v int) { b = binary.AppendUvarint(b, uint64(v)) }
	str(s.Identity)
	i64(s.Written)
	i64(s.TTL)
	i64(s.DeletionTTL)
	i64(s.ListedAge)
	n(len(s.Sources))
	for _, x := range s.Sources {
		str(x.Name)
		i64(x.Contact)
	}
	n(nEvents)
	written := 0
	events(func(x Event) {
		b = append(b, x.UID[:]...)
		b = binary.LittleEndian.AppendUint64(b, x.Name)
		b = binary.LittleEndian.AppendUint32(b, uint32(x.Count))
		b = binary.LittleEndian.AppendUint16(b, x.Src)
		written++
	})
	if written != nEvents {
		return nil, fmt.Errorf("snapshot of %d live Events announced, %d encoded", nEvents, written)
	}
	n(len(s.Tombs))
	for _, x := range s.Tombs {
		b = binary.LittleEndian.AppendUint64(b, x.Name)
		b = binary.LittleEndian.AppendUint32(b, uint32(x.Count))
		i64(x.Expires)
	}
	n(len(s.Counters))
	for _, x := range s.Counters {
		for _, v := range []string{x.Key.Namespace, x.Key.Kind, x.Key.Reason, x.Key.Type, x.Key.Component, x.Key.Cause} {
			str(v)
		}
		f64(x.Value)
	}
	n(len(s.Affected))
	for _, x := range s.Affected {
		str(x.Key.Namespace)
		str(x.Key.Kind)
		str(x.Key.Cause)
		f64(x.Value)
	}
	n(len(s.Rules))
	for _, x := range s.Rules {
		str(x.Rule)
		str(x.Cause)
		f64(x.Value)
	}
	f64(s.Unclassified)
	f64(s.PossiblyLost)
	f64(s.GapLost)
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
	if r.err == nil && n > maxString {
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

// Limits are the caps of the engine that reads a file, which bound each section as the engine
// bounds what it writes there: the series of each counter family and the tombstones. The series of
// a family past Series are summed into the series the family's fold names (the engine's overflow
// series), so a file of more series than the cap costs no more memory than the cap; without a
// fold, such a file is refused.
type Limits struct {
	Series, Tombs int
	FoldCounter   func(CounterKey) CounterKey
	FoldAffected  func(AffectedKey) AffectedKey
}

// readSeries reads a counter family's section: the series as written up to limit, and those past it
// summed by fold (into at most maxFolded series). A series written twice is content kubecause
// never writes.
func readSeries[K comparable](r *reader, what string, limit, size int, read func() K, fold func(K) K) (written, folded []Series[K], n int) {
	count := r.count(what, math.MaxInt32, size)
	seen := make(map[K]bool, min(count, limit))
	into := map[K]int{} // index in folded
	written = make([]Series[K], 0, min(count, limit))
	for range count {
		k, v := read(), r.value()
		if r.err != nil {
			return nil, nil, 0
		}
		if seen[k] {
			r.err = corrupt("%s: the series %+v twice", what, k)
			return nil, nil, 0
		}
		if len(written) < limit {
			seen[k] = true
			written = append(written, Series[K]{Key: k, Value: v})
			continue
		}
		if fold == nil {
			r.err = corrupt("%s: more than %d series", what, limit)
			return nil, nil, 0
		}
		k, n = fold(k), n+1
		i, ok := into[k]
		if !ok {
			if len(folded) >= maxFolded {
				r.err = corrupt("%s: more than %d overflow series", what, maxFolded)
				return nil, nil, 0
			}
			i, into[k] = len(folded), len(folded)
			folded = append(folded, Series[K]{Key: k})
		}
		if folded[i].Value += v; math.IsInf(folded[i].Value, 0) {
			r.err = corrupt("%s: counter value overflows", what)
			return nil, nil, 0
		}
	}
	return written, folded, n
}

// Decode reads a snapshot within the reader's limits; errors are *Error.
func Decode(b []byte, lim Limits) (*Snapshot, error) {
	if len(b) < len(Magic)+2 || string(b[:len(Magic)]) != Magic {
		return nil, corrupt("not a kubecause snapshot")
	}
	if v := binary.LittleEndian.Uint16(b[len(Magic):]); v != Version {
		return nil, &Error{WrongVersion, fmt.Errorf("format version %d, this kubecause reads %d", v, Version)}
	}
	if len(b) < len(Magic)+2+4 {
		return nil, corrupt("truncated")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, corrupt("checksum mismatch (truncated or damaged)")
	}
	r := &reader{b: body[len(Magic)+2:], strs: map[string]string{}}
	s := &Snapshot{Identity: r.str(), Written: r.i64(), TTL: r.i64(), DeletionTTL: r.i64(), ListedAge: r.i64()}
	s.Sources = make([]Source, r.count("sources", maxSources, 9))
	for i := range s.Sources {
		s.Sources[i] = Source{Name: r.str(), Contact: r.i64()}
	}
	s.Events = make([]Event, r.count("events", MaxEvents, 30))
	for i := range s.Events {
		x := &s.Events[i]
		copy(x.UID[:], r.take(16))
		x.Name, x.Count, x.Src = r.u64(), int32(r.u32()), r.u16()
		if r.err == nil && (x.Count < 1 || int(x.Src) >= len(s.Sources)) {
			r.err = corrupt("event with count %d of source %d", x.Count, x.Src)
		}
	}
	s.Tombs = make([]Tomb, r.count("tombstones", lim.Tombs, 20))
	for i := range s.Tombs {
		s.Tombs[i] = Tomb{Name: r.u64(), Count: int32(r.u32()), Expires: r.i64()}
		if r.err == nil && s.Tombs[i].Count < 1 {
			r.err = corrupt("tombstone with count %d", s.Tombs[i].Count)
		}
	}
	var folded int
	s.Counters, s.CountersFolded, s.Folded = readSeries(r, "counters", lim.Series, 14, func() CounterKey {
		return CounterKey{Namespace: r.label(), Kind: r.label(), Reason: r.label(), Type: r.label(), Component: r.label(), Cause: r.label()}
	}, lim.FoldCounter)
	s.Affected, s.AffectedFolded, folded = readSeries(r, "affected counters", lim.Series, 11, func() AffectedKey {
		return AffectedKey{Namespace: r.label(), Kind: r.label(), Cause: r.label()}
	}, lim.FoldAffected)
	s.Folded += folded
	s.Rules = make([]Rule, r.count("rule counters", maxRules, 10))
	for i := range s.Rules {
		s.Rules[i] = Rule{Rule: r.label(), Cause: r.label(), Value: r.value()}
	}
	s.Unclassified, s.PossiblyLost, s.GapLost = r.value(), r.value(), r.value()
	if r.err == nil && len(r.b) != 0 {
		r.err = corrupt("%d bytes after the end", len(r.b))
	}
	if r.err == nil && (s.TTL <= 0 || s.Written <= 0) {
		r.err = corrupt("written at %d with TTL %d", s.Written, s.TTL)
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// Check says whether s can be used at now by the process of identity: written by it, not in the
// future, and no older than the Event TTL (Events created and expired since would be missed
// without a trace).
func (s *Snapshot) Check(identity string, now int64) error {
	if s.Identity != identity {
		return &Error{Foreign, fmt.Errorf("written by %q, this is %q", s.Identity, identity)}
	}
	if s.Written > now+60 {
		return corrupt("written in the future (%s)", time.Unix(s.Written, 0).UTC().Format(time.RFC3339))
	}
	oldest := s.Written
	for _, src := range s.Sources {
		if src.Contact > s.Written {
			return corrupt("scope %q in contact after the snapshot was written", src.Name)
		}
		if src.Contact > 0 {
			oldest = min(oldest, src.Contact)
		}
	}
	if age := now - oldest; age > s.TTL {
		return &Error{TooOld, fmt.Errorf("last contact %s ago, longer than the Event TTL %s",
			time.Duration(age)*time.Second, time.Duration(s.TTL)*time.Second)}
	}
	return nil
}
