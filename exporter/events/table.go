package events

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// eventTable is the engine's record of the live Events: uidKey → tracked, in place of a
// map[uidKey]tracked (docs/performance.md, "What the state per Event is made of").
//
// A Go map grows by doubling its tables (of up to 1,024 slots) once they are 7/8 full, so its
// slots are 44-88 % used: ~67 B per Event on average for the 40-byte record, and 97 B at a million
// Events, where its tables have just doubled. This table keeps the records in tableSegments
// open-addressing segments (linear probing, no control bytes), each grown by a quarter once it
// is 13/16 full: 65-81 % of the slots are used whatever the number of Events, past a few thousand
// (49-62 B per Event; 55 B at a million), and a growth copies one segment (1/256 of the records),
// not all of them.
//
// The all-zero key marks an empty slot; the Event whose key is all zero (the nil UUID) is kept
// aside. Not safe for concurrent use (the engine's lock guards it).
type eventTable struct {
	seed    [2]uint64
	segs    [tableSegments]tableSegment
	n       int
	zero    tracked
	hasZero bool
	scratch []tableSlot // sweep's per-segment list of the records to remove
}

type tableSlot struct {
	key uidKey
	t   tracked
}

type tableSegment struct {
	slots []tableSlot // len is the capacity; an all-zero key is an empty slot
	n     int
}

const (
	tableSegments = 256
	// A segment grows when an insert would make it fuller than tableMaxLoad (in 1/16ths): 13/16,
	// ~81 %. Linear probing at that load reads ~3 slots to find a record and ~14 to miss.
	tableMaxLoad16 = 13
	tableMinSlots  = 8
)

func newEventTable() *eventTable {
	return &eventTable{seed: [2]uint64{rand.Uint64(), rand.Uint64()}}
}

// hash mixes the 16 bytes of a key with the table's seed (UIDs are random, but a FNV-128 key of a
// malformed UID, or a UID chosen by whoever writes to etcd, need not be): the low byte picks the
// segment, the high bits the slot.
func (m *eventTable) hash(k *uidKey) uint64 {
	a := binary.LittleEndian.Uint64(k[:8]) ^ m.seed[0]
	b := binary.LittleEndian.Uint64(k[8:]) ^ m.seed[1]
	hi, lo := bits.Mul64(a, b^0x9e3779b97f4a7c15)
	h := hi ^ lo
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// home is the first slot of a key's probe sequence in a segment of c slots.
func home(h uint64, c int) int {
	hi, _ := bits.Mul64(h, uint64(c))
	return int(hi)
}

func (m *eventTable) len() int { return m.n }

func (m *eventTable) get(k uidKey) (tracked, bool) {
	if k == (uidKey{}) {
		return m.zero, m.hasZero
	}
	h := m.hash(&k)
	s := &m.segs[uint8(h)]
	c := len(s.slots)
	if c == 0 {
		return tracked{}, false
	}
	for i := home(h, c); ; {
		sl := &s.slots[i]
		if sl.key == k {
			return sl.t, true
		}
		if sl.key == (uidKey{}) {
			return tracked{}, false
		}
		if i++; i == c {
			i = 0
		}
	}
}

// set adds or replaces the record of k.
func (m *eventTable) set(k uidKey, t tracked) {
	if k == (uidKey{}) {
		if !m.hasZero {
			m.n++
		}
		m.zero, m.hasZero = t, true
		return
	}
	h := m.hash(&k)
	s := &m.segs[uint8(h)]
	if (s.n+1)*16 > len(s.slots)*tableMaxLoad16 {
		m.grow(s)
	}
	c := len(s.slots)
	for i := home(h, c); ; {
		sl := &s.slots[i]
		if sl.key == k {
			sl.t = t
			return
		}
		if sl.key == (uidKey{}) {
			*sl = tableSlot{key: k, t: t}
			s.n++
			m.n++
			return
		}
		if i++; i == c {
			i = 0
		}
	}
}

// grow gives a segment a quarter more slots (tableMinSlots at first) and re-places its records.
func (m *eventTable) grow(s *tableSegment) {
	old := s.slots
	c := max(len(old)+len(old)/4, tableMinSlots)
	s.slots = make([]tableSlot, c)
	for i := range old {
		if old[i].key == (uidKey{}) {
			continue
		}
		j := home(m.hash(&old[i].key), c)
		for s.slots[j].key != (uidKey{}) {
			if j++; j == c {
				j = 0
			}
		}
		s.slots[j] = old[i]
	}
}

// del removes the record of k, if any. The records after it in its probe run move back into the
// hole as linear probing needs (no deletion markers: Knuth's algorithm R).
func (m *eventTable) del(k uidKey) {
	if k == (uidKey{}) {
		if m.hasZero {
			m.n--
		}
		m.zero, m.hasZero = tracked{}, false
		return
	}
	h := m.hash(&k)
	s := &m.segs[uint8(h)]
	c := len(s.slots)
	if c == 0 {
		return
	}
	i := home(h, c)
	for s.slots[i].key != k {
		if s.slots[i].key == (uidKey{}) {
			return
		}
		if i++; i == c {
			i = 0
		}
	}
	s.n--
	m.n--
	// i is the hole. A record further in the run moves into it unless its home lies cyclically
	// in (i, j]: then it would become unreachable from its home.
	for j := i; ; {
		if j++; j == c {
			j = 0
		}
		if s.slots[j].key == (uidKey{}) {
			break
		}
		r := home(m.hash(&s.slots[j].key), c)
		if i <= j && i < r && r <= j || j < i && (i < r || r <= j) {
			continue
		}
		s.slots[i] = s.slots[j]
		i = j
	}
	s.slots[i] = tableSlot{}
}

// each calls f for every record, in no particular order, until f returns false. f must not
// change the table.
func (m *eventTable) each(f func(uidKey, tracked) bool) {
	if m.hasZero && !f(uidKey{}, m.zero) {
		return
	}
	for si := range m.segs {
		for _, sl := range m.segs[si].slots {
			if sl.key != (uidKey{}) && !f(sl.key, sl.t) {
				return
			}
		}
	}
}

// update calls f on every record, which it may change but not remove.
func (m *eventTable) update(f func(*tracked)) {
	if m.hasZero {
		f(&m.zero)
	}
	for si := range m.segs {
		for i := range m.segs[si].slots {
			if sl := &m.segs[si].slots[i]; sl.key != (uidKey{}) {
				f(&sl.t)
			}
		}
	}
}

// sweep calls remove for every record gone says is gone, one segment at a time; remove may
// delete records (it is called after the segment was read, not while it is).
func (m *eventTable) sweep(gone func(uidKey, tracked) bool, remove func(uidKey, tracked)) {
	if m.hasZero && gone(uidKey{}, m.zero) {
		remove(uidKey{}, m.zero)
	}
	for si := range m.segs {
		m.scratch = m.scratch[:0]
		for _, sl := range m.segs[si].slots {
			if sl.key != (uidKey{}) && gone(sl.key, sl.t) {
				m.scratch = append(m.scratch, sl)
			}
		}
		for _, sl := range m.scratch {
			remove(sl.key, sl.t)
		}
	}
	if cap(m.scratch) > 1024 {
		m.scratch = nil // a relist that removed many: not kept
	}
}
