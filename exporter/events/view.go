package events

// The per-object view: one entry per (namespace, kind, name, reason, cause) that has at least one
// live Event. It is what lets an alert name the affected pod, and it is present from the first
// occurrence on, so such an alert does not miss the first occurrence the way increase() on a
// brand-new counter series does.
//
// Entries live in slots of a slice, found by their key through a map; a freed slot is reused by
// the next new entry, so the slice never holds more than the cap. Each entry records when it was
// born (a sequence number); a scrape writes the entries born before it started (viewtext.go).
//
// At the cap, one tenant must not blind the view for the others: a new entry of a namespace that
// holds fewer entries than the largest namespace, by two at least, takes the slot of the least
// recently updated entry of the largest namespace (evicted); otherwise it is refused. The largest
// namespace is found in O(1) (namespaces are listed by their number of entries, which changes by
// one at a time), and so is the least recently updated of its entries (each namespace's entries
// are linked in the order of their last update). The Events of an evicted entry keep its slot
// number: the slot's generation tells them apart from the Events of the entry that took it (they
// count as ghosts of the slot until they leave it, asking for an entry again at their next update),
// and a slot with ghosts is not evicted again, so one bit of generation would do.

type viewKey struct {
	namespace, kind, name, reason, cause string
	// target is the shared thing the cause is about (a registry, a node, a CNI plugin, …: the
	// cause's target in the cause table), interned; "" when it has none; overflow when the view
	// already has maxTargets distinct values.
	target string
}

type viewEntry struct {
	key    viewKey
	born   uint64 // view.seq when the entry was created; 0 for a free slot
	events int32  // live Events contributing
	occ    int64  // occurrences recorded on them
	last   int64  // latest occurrence, unix seconds
	node   string // the node of the latest Event that named one (source.host), interned
	// older, newer: the entries of the same namespace updated before and after this one (slots,
	// or noEntry), in the namespace's list.
	older, newer int32
	// Kept when the slot is freed or taken: ghosts, the live Events of the entry evicted from the
	// slot (of generation gen-1); gen, the generation of the slot's Events.
	ghosts int32
	gen    uint8
}

// nsEntries is what the view keeps of a namespace with entries.
type nsEntries struct {
	n int32
	// lru, mru: its least and most recently updated entries (slots).
	lru, mru int32
	// prev, next: the other namespaces with n entries.
	prev, next *nsEntries
}

// Values of tracked.view that are no slot.
const (
	noEntry = -1 // the Event is not in the view (not yet placed)
	refused = -2 // the view was full when the Event asked for an entry; it asks again on updates
)

type view struct {
	max        int
	maxTargets int
	// targets counts the entries of each target value ("" and overflow are not counted): its
	// length is the number of distinct values, which maxTargets caps.
	targets map[string]int32
	idx     map[viewKey]int32
	entries []viewEntry
	free    []int32
	seq     uint64
	// ns: the namespaces with entries; byCount[c] heads the list of those with c entries, the
	// largest of which have largest.
	ns      map[string]*nsEntries
	byCount []*nsEntries
	largest int32
	// evicted counts entries evicted for another namespace's.
	evicted uint64
}

func newView(max, maxTargets int) *view {
	return &view{max: max, maxTargets: maxTargets, targets: map[string]int32{}, idx: map[viewKey]int32{},
		ns: map[string]*nsEntries{}}
}

// live reports whether an Event placed in slot i with generation gen still has its entry there
// (not evicted since). i must be a slot.
func (v *view) live(i int32, gen uint8) bool { return v.entries[i].gen == gen }

func (v *view) len() int { return len(v.idx) }

// viewChange is what a move did to the set of entries.
type viewChange uint8

const (
	viewSame    viewChange = iota // the Event went to an existing entry (or left one that lives on)
	viewBorn                      // a new entry was created for it
	viewRefused                   // it has no entry: the view is at its cap
)

// move accounts an Event whose occurrences went from oldCount to newCount into the entry for key,
// leaving entry old (of generation oldGen) if it belonged elsewhere; node, when not empty,
// becomes the entry's node. It returns the Event's slot (or refused) and generation, whether an
// entry was born or refused, and whether the Event's target went to overflow now (the view has
// maxTargets distinct targets, none of them this one; reported once, not again while the Event
// stays in the same overflow entry). Entries left empty are freed.
func (v *view) move(old int32, oldGen uint8, key viewKey, oldCount, newCount int32, ts int64, node string) (int32, uint8, viewChange, bool) {
	if old >= 0 && !v.live(old, oldGen) {
		v.entries[old].ghosts-- // its entry was evicted: it asks for one as a new Event would
		old, oldCount = noEntry, 0
	}
	over := false
	if key.target != "" {
		if _, ok := v.targets[key.target]; !ok && len(v.targets) >= v.maxTargets {
			key.target, over = overflow, true
		}
	}
	if old >= 0 && v.entries[old].key == key {
		en := &v.entries[old]
		en.occ += int64(newCount - oldCount)
		en.last = max(en.last, ts)
		if node != "" {
			en.node = node
		}
		v.touch(old)
		return old, en.gen, viewSame, false
	}
	over = over && !(old >= 0 && v.entries[old].key.target == overflow) // counted when it went there
	v.release(old, oldGen, oldCount)
	change := viewSame
	i, ok := v.idx[key]
	if !ok {
		if v.len() >= v.max {
			if i = v.evict(key.namespace); i == noEntry {
				return refused, 0, viewRefused, false
			}
		} else if n := len(v.free); n > 0 {
			i = v.free[n-1]
			v.free = v.free[:n-1]
		} else {
			i = int32(len(v.entries))
			v.entries = append(v.entries, viewEntry{})
		}
		v.seq++
		en := &v.entries[i]
		*en = viewEntry{key: key, born: v.seq, ghosts: en.ghosts, gen: en.gen}
		v.idx[key] = i
		if key.target != "" && key.target != overflow {
			v.targets[key.target]++
		}
		v.nsAdd(i)
		change = viewBorn
	} else {
		v.touch(i)
	}
	en := &v.entries[i]
	en.events++
	en.occ += int64(newCount)
	en.last = max(en.last, ts)
	if node != "" {
		en.node = node
	}
	return i, en.gen, change, over
}

// release removes an Event's contribution from slot i (nothing for noEntry or refused; an
// Event of an evicted entry only leaves the slot's ghosts).
func (v *view) release(i int32, gen uint8, count int32) {
	if i < 0 {
		return
	}
	en := &v.entries[i]
	if en.gen != gen {
		en.ghosts--
		return
	}
	en.events--
	en.occ -= int64(count)
	if en.events <= 0 {
		v.drop(i)
		*en = viewEntry{ghosts: en.ghosts, gen: en.gen}
		v.free = append(v.free, i)
	}
}

// drop takes the entry of slot i out of the index and the counts of targets and namespaces.
func (v *view) drop(i int32) {
	en := &v.entries[i]
	delete(v.idx, en.key)
	if t := en.key.target; t != "" && t != overflow {
		if v.targets[t]--; v.targets[t] <= 0 {
			delete(v.targets, t)
		}
	}
	v.nsRemove(i)
}

// maxEvictScan bounds how many of the largest namespace's entries, least recently updated first,
// evict looks at for one whose slot has no ghosts.
const maxEvictScan = 8

// evict frees, for a new entry of namespace ns, the slot of the least recently updated entry of
// the largest namespace, when ns holds fewer entries than it by two at least (so two namespaces
// of about the same size do not take turns evicting each other), and returns it; noEntry when
// there is none to take. Its Events become the slot's ghosts.
func (v *view) evict(ns string) int32 {
	var have int32
	if u := v.ns[ns]; u != nil {
		have = u.n
	}
	if have+1 >= v.largest {
		return noEntry
	}
	i := v.byCount[v.largest].lru
	for range maxEvictScan {
		if i == noEntry {
			return noEntry
		}
		if v.entries[i].ghosts == 0 {
			break
		}
		i = v.entries[i].newer
	}
	if i == noEntry || v.entries[i].ghosts != 0 {
		return noEntry
	}
	en := &v.entries[i]
	v.drop(i)
	*en = viewEntry{ghosts: en.events, gen: en.gen + 1}
	v.evicted++
	return i
}

// nsAdd counts the new entry of slot i in its namespace, as its most recently updated.
func (v *view) nsAdd(i int32) {
	en := &v.entries[i]
	u := v.ns[en.key.namespace]
	if u == nil {
		u = &nsEntries{lru: noEntry, mru: noEntry}
		v.ns[en.key.namespace] = u
	} else {
		v.unlistNS(u)
	}
	u.n++
	v.listNS(u)
	en.older, en.newer = u.mru, noEntry
	if u.mru != noEntry {
		v.entries[u.mru].newer = i
	} else {
		u.lru = i
	}
	u.mru = i
}

// nsRemove takes the entry of slot i out of its namespace.
func (v *view) nsRemove(i int32) {
	en := &v.entries[i]
	u := v.ns[en.key.namespace]
	v.unlink(u, i)
	v.unlistNS(u)
	if u.n--; u.n == 0 {
		delete(v.ns, en.key.namespace)
	} else {
		v.listNS(u)
	}
	for v.largest > 0 && v.byCount[v.largest] == nil {
		v.largest--
	}
}

// touch makes the entry of slot i its namespace's most recently updated.
func (v *view) touch(i int32) {
	u := v.ns[v.entries[i].key.namespace]
	if u.mru == i {
		return
	}
	v.unlink(u, i)
	en := &v.entries[i]
	en.older, en.newer = u.mru, noEntry
	v.entries[u.mru].newer = i
	u.mru = i
}

// unlink takes slot i out of namespace u's list of entries.
func (v *view) unlink(u *nsEntries, i int32) {
	en := &v.entries[i]
	if en.older != noEntry {
		v.entries[en.older].newer = en.newer
	} else {
		u.lru = en.newer
	}
	if en.newer != noEntry {
		v.entries[en.newer].older = en.older
	} else {
		u.mru = en.older
	}
}

// listNS puts namespace u in the list of those with u.n entries.
func (v *view) listNS(u *nsEntries) {
	for int(u.n) >= len(v.byCount) {
		v.byCount = append(v.byCount, nil)
	}
	u.prev, u.next = nil, v.byCount[u.n]
	if u.next != nil {
		u.next.prev = u
	}
	v.byCount[u.n] = u
	v.largest = max(v.largest, u.n)
}

// unlistNS takes namespace u out of the list of those with u.n entries.
func (v *view) unlistNS(u *nsEntries) {
	if u.prev != nil {
		u.prev.next = u.next
	} else {
		v.byCount[u.n] = u.next
	}
	if u.next != nil {
		u.next.prev = u.prev
	}
	u.prev, u.next = nil, nil
}
