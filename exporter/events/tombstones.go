package events

// The tombstones: what is remembered of expired Events, so that a re-creation under the same name
// counts only its new occurrences (docs/metrics.md).

import "github.com/kubecause/kubecause/exporter/events/snapshotfile"

type tombstone struct {
	count   int32
	expires int64
}

// tombstones remember the counts of expired Events by name hash, to count a re-creation exactly,
// for ttl seconds and at most max of them. Guarded by Engine.mu.
type tombstones struct {
	m   map[uint64]tombstone
	q   []uint64 // insertion order, to bound them
	ttl int64
	max int
}

// bury remembers the count of an Event gone at now.
func (ts *tombstones) bury(name uint64, count int32, now int64) {
	ts.m[name] = tombstone{count: count, expires: now + ts.ttl}
	ts.q = append(ts.q, name)
}

// unbury returns and forgets the tombstone of name (its queue entry is skipped when it comes up).
func (ts *tombstones) unbury(name uint64) (tombstone, bool) {
	t, ok := ts.m[name]
	if ok {
		delete(ts.m, name)
	}
	return t, ok
}

func (ts *tombstones) prune(now int64) {
	for len(ts.q) > 0 {
		h := ts.q[0]
		t, ok := ts.m[h]
		if ok && t.expires > now && len(ts.m) <= ts.max {
			return
		}
		if ok && t.expires <= now || len(ts.m) > ts.max {
			delete(ts.m, h)
		}
		ts.q = ts.q[1:]
	}
	if cap(ts.q) > 4*len(ts.q)+1024 {
		ts.q = append([]uint64(nil), ts.q...)
	}
}

// has reports whether name has a tombstone.
func (ts *tombstones) has(name uint64) bool {
	_, ok := ts.m[name]
	return ok
}

// take writes the tombstones not expired at now into a snapshot.
func (ts *tombstones) take(s *snapshotfile.Snapshot, now int64) {
	for h, t := range ts.m {
		if t.expires > now {
			s.Tombs = append(s.Tombs, snapshotfile.Tomb{Name: h, Count: t.count, Expires: t.expires})
		}
	}
}

// restore takes up a snapshot's tombstones not expired at now, up to max.
func (ts *tombstones) restore(s *snapshotfile.Snapshot, now int64) {
	for _, t := range s.Tombs {
		if t.Expires > now && len(ts.m) < ts.max {
			ts.m[t.Name] = tombstone{count: t.Count, expires: t.Expires}
			ts.q = append(ts.q, t.Name)
		}
	}
}
