package events

import "hash/maphash"

// The per-object view: one entry per (namespace, kind, name, reason, cause) that has at least one
// live Event. It is what lets an alert name the affected pod, and it is present from the first
// occurrence on, so such an alert does not miss the first occurrence the way increase() on a
// brand-new counter series does.

type viewKey struct {
	namespace, kind, name, reason, cause string
}

// viewEntry keeps the object's name and an index into the shared (namespace, kind, reason, cause)
// tuples: many objects share a tuple, so an entry costs 40 bytes instead of 104.
type viewEntry struct {
	name   string
	tuple  uint32
	events int32 // live Events contributing
	occ    int64 // occurrences recorded on them
	last   int64 // latest occurrence, unix seconds
}

type tupleKey struct {
	namespace, kind, reason, cause string
}

// tuples is a refcounted table of the label tuples live view entries use; a tuple is freed with its
// last entry, so the table is bounded by the view.
type tuples struct {
	idx  map[tupleKey]uint32
	keys []tupleKey
	refs []int32
	free []uint32
}

func (t *tuples) acquire(k tupleKey) uint32 {
	i, ok := t.idx[k]
	if !ok {
		if n := len(t.free); n > 0 {
			i = t.free[n-1]
			t.free = t.free[:n-1]
			t.keys[i] = k
		} else {
			i = uint32(len(t.keys))
			t.keys = append(t.keys, k)
			t.refs = append(t.refs, 0)
		}
		t.idx[k] = i
	}
	t.refs[i]++
	return i
}

func (t *tuples) release(i uint32) {
	t.refs[i]--
	if t.refs[i] <= 0 {
		delete(t.idx, t.keys[i])
		t.keys[i] = tupleKey{}
		t.free = append(t.free, i)
	}
}

func (k viewKey) tuple() tupleKey {
	return tupleKey{namespace: k.namespace, kind: k.kind, reason: k.reason, cause: k.cause}
}

// key rebuilds the full key of entry i.
func (v *view) key(i int32) viewKey {
	en := &v.entries[i]
	t := v.tuples.keys[en.tuple]
	return viewKey{namespace: t.namespace, kind: t.kind, name: en.name, reason: t.reason, cause: t.cause}
}

func (v *view) is(i int32, k viewKey) bool {
	en := &v.entries[i]
	return en.name == k.name && v.tuples.keys[en.tuple] == k.tuple()
}

// view indexes entries by a 64-bit hash of their key (the key itself lives only in the entry, which
// halves the memory per entry); the rare second key with the same hash goes to coll.
type view struct {
	max     int
	seed    maphash.Seed
	idx     map[uint64]int32
	coll    map[viewKey]int32
	entries []viewEntry
	free    []int32
	tuples  tuples
	// scrapes is the number of scrapes rendering the view; while there are any, freed slots are
	// not reused (viewtext.go), up to 2×max slots. Past that they are, and epoch tells the
	// scrapes to stop.
	scrapes int
	epoch   uint64
}

func newView(max int) *view {
	return &view{max: max, seed: maphash.MakeSeed(), idx: map[uint64]int32{}, coll: map[viewKey]int32{},
		tuples: tuples{idx: map[tupleKey]uint32{}}}
}

func (v *view) len() int { return len(v.idx) + len(v.coll) }

func (v *view) hash(k viewKey) uint64 {
	var h maphash.Hash
	h.SetSeed(v.seed)
	for _, s := range [...]string{k.namespace, k.kind, k.name, k.reason, k.cause} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	return h.Sum64()
}

func (v *view) lookup(k viewKey, h uint64) (int32, bool) {
	if i, ok := v.idx[h]; ok && v.is(i, k) {
		return i, true
	}
	if len(v.coll) > 0 {
		i, ok := v.coll[k]
		return i, ok
	}
	return -1, false
}

func (v *view) insert(k viewKey, h uint64, i int32) {
	if _, taken := v.idx[h]; taken {
		v.coll[k] = i
		return
	}
	v.idx[h] = i
}

func (v *view) remove(i int32) {
	k := v.key(i)
	h := v.hash(k)
	if j, ok := v.idx[h]; ok && j == i {
		delete(v.idx, h)
		return
	}
	delete(v.coll, k)
}

// move accounts an Event whose occurrences went from oldCount to newCount into the entry for l,
// leaving entry old if it belonged elsewhere. It returns the Event's entry, -1 when the view is full.
// A new entry born while watching (born) counts the object as newly affected.
func (v *view) move(old int32, l eventLabels, oldCount, newCount int32, ts int64, born bool, m *metrics) int32 {
	key := viewKey{namespace: l.namespace, kind: l.kind, name: l.name, reason: l.reason, cause: l.cause}
	if old >= 0 && v.is(old, key) {
		en := &v.entries[old]
		en.occ += int64(newCount - oldCount)
		if ts > en.last {
			en.last = ts
		}
		return old
	}
	v.release(old, oldCount)
	h := v.hash(key)
	i, ok := v.lookup(key, h)
	if !ok {
		if v.len() >= v.max {
			m.dropped.WithLabelValues("kubecause_object_events").Inc()
			return -1
		}
		if n := len(v.free); n > 0 && (v.scrapes == 0 || len(v.entries) >= 2*v.max) {
			if v.scrapes > 0 {
				v.epoch++
			}
			i = v.free[n-1]
			v.free = v.free[:n-1]
		} else {
			i = int32(len(v.entries))
			v.entries = append(v.entries, viewEntry{})
		}
		v.entries[i] = viewEntry{name: key.name, tuple: v.tuples.acquire(key.tuple())}
		v.insert(key, h, i)
		if born {
			m.affect(key)
		}
	}
	en := &v.entries[i]
	en.events++
	en.occ += int64(newCount)
	if ts > en.last {
		en.last = ts
	}
	return i
}

// release removes an Event's contribution from entry i.
func (v *view) release(i int32, count int32) {
	if i < 0 {
		return
	}
	en := &v.entries[i]
	en.events--
	en.occ -= int64(count)
	if en.events <= 0 {
		v.remove(i)
		v.tuples.release(en.tuple)
		*en = viewEntry{}
		v.free = append(v.free, i)
	}
}
