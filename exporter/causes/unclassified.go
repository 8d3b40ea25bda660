package causes

import (
	"sort"
	"sync"
)

// MaxReasonBytes bounds the reason kept per entry of Unclassified (reasons are free text).
const MaxReasonBytes = 128

// UnclassifiedEntry is one (reason, template) pair of Unclassified.
type UnclassifiedEntry struct {
	Reason   string
	Template string
	// Count is how many occurrences were counted for the pair. When the pair took the place of an
	// evicted one, Count includes the evicted pair's count, and Err says how much of it that is:
	// the pair's own count is between Count-Err and Count.
	Count, Err uint64
}

// UnclassifiedSnapshot is a copy of an Unclassified's state.
type UnclassifiedSnapshot struct {
	// Entries, most frequent first (ties by reason, then template).
	Entries []UnclassifiedEntry
	// Total counts every occurrence observed.
	Total uint64
	// Overflow counts the times a pair was evicted to make room for a new one.
	Overflow uint64
}

// Unclassified keeps the most frequent (reason, template) pairs of Event messages the table did
// not classify, in a fixed number of entries: when it is full, a new pair replaces the least
// frequent one and inherits its count as an upper bound (the Space-Saving algorithm of Metwally,
// Agrawal and El Abbadi, 2005). Any pair seen more than Total/capacity times is guaranteed to be
// kept. It is safe for concurrent use; memory is bounded by capacity × (MaxReasonBytes +
// MaxTemplateBytes).
type Unclassified struct {
	mu       sync.Mutex
	capacity int
	index    map[unclassifiedKey]int // position in entries
	entries  []UnclassifiedEntry
	total    uint64
	overflow uint64
}

type unclassifiedKey struct{ reason, template string }

// NewUnclassified returns a tracker that keeps at most capacity pairs (at least 1).
func NewUnclassified(capacity int) *Unclassified {
	if capacity < 1 {
		capacity = 1
	}
	return &Unclassified{capacity: capacity, index: make(map[unclassifiedKey]int, capacity)}
}

// Observe counts one occurrence of an unclassified message under its Template.
func (u *Unclassified) Observe(reason, message string) { u.Add(reason, Template(message), 1) }

// Add counts n occurrences of a (reason, template) pair.
func (u *Unclassified) Add(reason, template string, n uint64) {
	if n == 0 {
		return
	}
	reason = truncateUTF8(reason, MaxReasonBytes)
	template = truncateUTF8(template, MaxTemplateBytes)
	k := unclassifiedKey{reason, template}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.total += n
	if i, ok := u.index[k]; ok {
		u.entries[i].Count += n
		return
	}
	if len(u.entries) < u.capacity {
		u.index[k] = len(u.entries)
		u.entries = append(u.entries, UnclassifiedEntry{Reason: reason, Template: template, Count: n})
		return
	}
	// Full: replace the least frequent pair (the first of equals, so the choice is deterministic).
	min := 0
	for i := range u.entries {
		if u.entries[i].Count < u.entries[min].Count {
			min = i
		}
	}
	old := u.entries[min]
	delete(u.index, unclassifiedKey{old.Reason, old.Template})
	u.overflow++
	u.entries[min] = UnclassifiedEntry{Reason: reason, Template: template, Count: old.Count + n, Err: old.Count}
	u.index[k] = min
}

// Snapshot returns a copy of the entries, most frequent first, with the counters.
func (u *Unclassified) Snapshot() UnclassifiedSnapshot {
	u.mu.Lock()
	s := UnclassifiedSnapshot{Entries: append([]UnclassifiedEntry(nil), u.entries...), Total: u.total, Overflow: u.overflow}
	u.mu.Unlock()
	sort.Slice(s.Entries, func(i, j int) bool {
		a, b := s.Entries[i], s.Entries[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Reason != b.Reason {
			return a.Reason < b.Reason
		}
		return a.Template < b.Template
	})
	return s
}

// truncateUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
