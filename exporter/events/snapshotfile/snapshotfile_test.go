package snapshotfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"reflect"
	"testing"
	"time"
)

const testIdentity = "kubecause-6d9f7c5b8-x2k4q https://10.96.0.1:443"

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// testLimits are the caps of an engine with the defaults (--events.max-series 10,000, 100,000
// tombstones), folding as it does: into one series per Event type and cause.
var testLimits = Limits{Series: 10000, Tombs: 100000,
	FoldCounter: func(k CounterKey) CounterKey {
		return CounterKey{Namespace: "_overflow", Kind: "_overflow", Reason: "_overflow", Type: k.Type, Component: "_overflow", Cause: k.Cause}
	},
	FoldAffected: func(k AffectedKey) AffectedKey {
		return AffectedKey{Namespace: "_overflow", Kind: "_overflow", Cause: k.Cause}
	},
}

// testSnapshot is what an engine writes after one kubelet Event repeated 3 times (live) and one
// events.k8s.io Event of the scheduler seen twice and deleted (a tombstone).
func testSnapshot() *Snapshot {
	return &Snapshot{Identity: testIdentity, Written: t0.Unix(), TTL: 3600, ListedAge: 120,
		Sources: []Source{{Name: "all", Contact: t0.Unix()}},
		Events:  []Event{{UID: [16]byte{0x0f, 0x3c, 0x2a, 0x9e}, Name: 0x9e3779b97f4a7c15, Count: 3}},
		Tombs:   []Tomb{{Name: 0x7f4a7c159e3779b9, Count: 2, Expires: t0.Unix() + 7200}},
		Counters: []Series[CounterKey]{
			{Key: CounterKey{Namespace: "istio-system", Kind: "Pod", Reason: "FailedMount", Type: "Warning", Component: "kubelet", Cause: "configmap_not_found"}, Value: 3},
			{Key: CounterKey{Namespace: "mesh", Kind: "Pod", Reason: "FailedScheduling", Type: "Warning", Component: "default-scheduler", Cause: "scheduling_insufficient_resources"}, Value: 2},
		},
		Affected: []Series[AffectedKey]{{Key: AffectedKey{Namespace: "istio-system", Kind: "Pod", Cause: "configmap_not_found"}, Value: 1},
			{Key: AffectedKey{Namespace: "mesh", Kind: "Pod", Cause: "scheduling_insufficient_resources"}, Value: 1}},
		Rules: []Rule{{Rule: "volume.configmap_not_found", Cause: "configmap_not_found", Value: 3},
			{Rule: "scheduling.insufficient", Cause: "scheduling_insufficient_resources", Value: 2}},
	}
}

// TestRoundTrip: what is encoded decodes to the same snapshot; every truncation is refused, none
// panics.
func TestRoundTrip(t *testing.T) {
	s := testSnapshot()
	b := s.Encode()
	got, err := Decode(b, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
	}
	for n := 0; n < len(b); n++ {
		if _, err := Decode(b[:n], testLimits); err == nil {
			t.Fatalf("truncated to %d of %d bytes: decoded", n, len(b))
		}
	}
}

// TestSeriesPastTheLimitAreFolded: a file written with a larger --events.max-series than the
// reader's holds its series as written up to the reader's cap, and the rest summed into the series
// the fold names, counted in Folded; without a fold, it is refused.
func TestSeriesPastTheLimitAreFolded(t *testing.T) {
	s := testSnapshot()
	k := s.Counters[0].Key
	for _, ns := range []string{"apps", "web"} {
		k.Namespace = ns
		s.Counters = append(s.Counters, Series[CounterKey]{Key: k, Value: 5})
	}
	lim := testLimits
	lim.Series = 1
	got, err := Decode(s.Encode(), lim)
	if err != nil {
		t.Fatal(err)
	}
	wantFolded := []Series[CounterKey]{
		{Key: lim.FoldCounter(s.Counters[1].Key), Value: 2},
		{Key: lim.FoldCounter(s.Counters[0].Key), Value: 5 + 5},
	}
	if !reflect.DeepEqual(got.Counters, s.Counters[:1]) || !reflect.DeepEqual(got.CountersFolded, wantFolded) {
		t.Fatalf("counters %+v folded %+v, want %+v and %+v", got.Counters, got.CountersFolded, s.Counters[:1], wantFolded)
	}
	if got.Folded != 3+1 { // three counters and one affected series past the cap
		t.Fatalf("Folded = %d, want 4", got.Folded)
	}
	lim.FoldCounter = nil
	var se *Error
	if _, err := Decode(s.Encode(), lim); !errors.As(err, &se) || se.Result != Corrupt {
		t.Fatalf("past the limit without a fold: %v, want a corrupt snapshot", err)
	}
}

// reseal recomputes the checksum of a forged snapshot, so that the decoder's other checks are
// what refuses it.
func reseal(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, crcTable))
}

// TestRefusesForgedContent: files with a valid checksum but content kubecause never
// writes are refused without allocating what they claim.
func TestRefusesForgedContent(t *testing.T) {
	base := &Snapshot{Identity: testIdentity, Written: t0.Unix(), TTL: 3600,
		Sources: []Source{{Name: "all", Contact: t0.Unix()}}}
	for _, tc := range []struct {
		name string
		s    func() []byte
	}{
		{"a billion events", func() []byte {
			b := base.Encode()
			// The events section's length follows the sources; claim 10^9 Events in a short file.
			i := bytes.Index(b, []byte("all")) + 3 + 8
			forged := append(bytes.Clone(b[:i]), binary.AppendUvarint(nil, 1e9)...)
			return reseal(append(forged, b[i+1:]...))
		}},
		{"NaN counter", func() []byte {
			s := *base
			s.Counters = []Series[CounterKey]{{Key: CounterKey{Namespace: "apps", Cause: "disk_full"}, Value: math.NaN()}}
			return s.Encode()
		}},
		{"negative counter", func() []byte {
			s := *base
			s.Rules = []Rule{{Rule: "sandbox.disk_full", Cause: "disk_full", Value: -3}}
			return s.Encode()
		}},
		{"label value kubecause never writes", func() []byte {
			s := *base
			s.Counters = []Series[CounterKey]{{Key: CounterKey{Namespace: string(bytes.Repeat([]byte("a"), 300))}, Value: 1}}
			return s.Encode()
		}},
		{"a series twice", func() []byte {
			s := *base
			k := CounterKey{Namespace: "apps", Kind: "Pod", Reason: "FailedMount", Type: "Warning", Component: "kubelet", Cause: "configmap_not_found"}
			s.Counters = []Series[CounterKey]{{Key: k, Value: 2}, {Key: k, Value: 3}}
			return s.Encode()
		}},
		{"more tombstones than the engine keeps", func() []byte {
			s := *base
			s.Tombs = make([]Tomb, testLimits.Tombs+1)
			for i := range s.Tombs {
				s.Tombs[i] = Tomb{Name: uint64(i), Count: 1, Expires: t0.Unix() + 60}
			}
			return s.Encode()
		}},
		{"event of no source", func() []byte {
			s := *base
			s.Events = []Event{{Count: 2, Src: 3}}
			return s.Encode()
		}},
		{"event with count 0", func() []byte {
			s := *base
			s.Events = []Event{{Count: 0}}
			return s.Encode()
		}},
		{"bytes after the end", func() []byte {
			b := base.Encode()
			return reseal(append(append(bytes.Clone(b[:len(b)-4]), 0), b[len(b)-4:]...))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.s(), testLimits)
			var se *Error
			if !errors.As(err, &se) || se.Result != Corrupt {
				t.Fatalf("decoded: %v, want a corrupt snapshot", err)
			}
		})
	}
	if _, err := Decode(base.Encode(), testLimits); err != nil {
		t.Fatalf("the unforged snapshot: %v", err)
	}
}

// FuzzSnapshotDecode: no input makes the decoder panic or accept content kubecause never writes;
// what it accepts encodes back to the same bytes.
func FuzzSnapshotDecode(f *testing.F) {
	good := testSnapshot().Encode()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(Magic + "\x01\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b, testLimits)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error without a result: %v", err)
			}
			return
		}
		for _, ev := range s.Events {
			if ev.Count < 1 || int(ev.Src) >= len(s.Sources) {
				t.Fatalf("accepted event %+v", ev)
			}
		}
		if !bytes.Equal(s.Encode(), b) {
			t.Fatalf("accepted bytes that do not encode back")
		}
	})
}
