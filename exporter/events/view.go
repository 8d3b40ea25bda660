package events

// The per-object view: one entry per (namespace, kind, name, reason, cause) that has at least one
// live Event. It is what lets an alert name the affected pod, and it is present from the first
// occurrence on, so such an alert does not miss the first occurrence the way increase() on a
// brand-new counter series does.
//
// Entries live in slots of a slice, found by their key through a map; a freed slot is reused by
// the next new entry, so the slice never holds more than the cap. Each entry records when it was
// born (a sequence number); a scrape writes the entries born before it started (viewtext.go).

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
}

func newView(max, maxTargets int) *view {
	return &view{max: max, maxTargets: maxTargets, targets: map[string]int32{}, idx: map[viewKey]int32{}}
}

func (v *view) len() int { return len(v.idx) }

// viewChange is what a move did to the set of entries.
type viewChange uint8

const (
	viewSame    viewChange = iota // the Event went to an existing entry (or left one that lives on)
	viewBorn                      // a new entry was created for it
	viewRefused                   // it has no entry: the view is at its cap
)

// move accounts an Event whose occurrences went from oldCount to newCount into the entry for key,
// leaving entry old if it belonged elsewhere; node, when not empty, becomes the entry's node. It
// returns the Event's slot (or refused), whether an entry was born or refused, and whether the
// Event's target went to overflow now (the view has maxTargets distinct targets, none of them
// this one; reported once, not again while the Event stays in the same overflow entry). Entries
// left empty are freed.
func (v *view) move(old int32, key viewKey, oldCount, newCount int32, ts int64, node string) (int32, viewChange, bool) {
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
		return old, viewSame, false
	}
	over = over && !(old >= 0 && v.entries[old].key.target == overflow) // counted when it went there
	v.release(old, oldCount)
	change := viewSame
	i, ok := v.idx[key]
	if !ok {
		if v.len() >= v.max {
			return refused, viewRefused, false
		}
		if n := len(v.free); n > 0 {
			i = v.free[n-1]
			v.free = v.free[:n-1]
		} else {
			i = int32(len(v.entries))
			v.entries = append(v.entries, viewEntry{})
		}
		v.seq++
		v.entries[i] = viewEntry{key: key, born: v.seq}
		v.idx[key] = i
		if key.target != "" && key.target != overflow {
			v.targets[key.target]++
		}
		change = viewBorn
	}
	en := &v.entries[i]
	en.events++
	en.occ += int64(newCount)
	en.last = max(en.last, ts)
	if node != "" {
		en.node = node
	}
	return i, change, over
}

// release removes an Event's contribution from slot i (nothing for noEntry or refused).
func (v *view) release(i int32, count int32) {
	if i < 0 {
		return
	}
	en := &v.entries[i]
	en.events--
	en.occ -= int64(count)
	if en.events <= 0 {
		delete(v.idx, en.key)
		if t := en.key.target; t != "" && t != overflow {
			if v.targets[t]--; v.targets[t] <= 0 {
				delete(v.targets, t)
			}
		}
		*en = viewEntry{}
		v.free = append(v.free, i)
	}
}
