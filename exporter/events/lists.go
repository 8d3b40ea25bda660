package events

// The three ways a list of Events reaches the engine: a paged list (replace), a streamed list read
// as it arrives (beginStream, readStreamed), and the Events the reflector's transform reads itself
// (readListed). The first list of a source is a baseline, or diffed against a restored snapshot;
// later ones are diffed against what is remembered, and their gap estimated (ttl.go).

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// replace applies a full list from source src: the first one is the baseline, later ones are
// diffed against what is remembered. It reports whether this list completed the engine's sync.
func (e *Engine) replace(s *Source, list []interface{}) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	src, first := s.idx, !s.synced
	// A source restored from a snapshot diffs its first list against it (snapshot.go).
	baseline := first && !s.restored
	e.m.opRelist.Inc()
	now := e.cfg.Now().Unix()
	if !first {
		e.m.relists.Inc()
	}
	// The gap is estimated once the list is read (streamed, it was read by readListed already):
	// with the ages of the Events it shows (eventTTL).
	created, listedAt := s.created, s.listedAt
	s.listedAt, s.created = now, 0
	// Events the list contains are marked with a new list generation; those of this source left
	// unmarked are gone. (A mark in the 24-byte record instead of a set of keys: at the end of a
	// 50,000-Event list, the moment of the start-up peak, a set would add about 1.5 MB.)
	// A streamed list was read and marked as it arrived (stream, readStreamed), with the
	// generation of its attempt; its stand-in is in the list.
	gen := uint8(0)
	for _, obj := range list {
		if _, ok := obj.(streamed); ok {
			gen = s.streamGen
			break
		}
	}
	if gen == 0 {
		gen = s.newGen()
	}
	s.list, s.streamGen, s.attempts = gen, 0, 0
	mark := func(k uidKey) {
		if t, ok := e.events.get(k); ok && t.src == src {
			t.list = gen
			e.events.set(k, t)
		}
	}
	for _, obj := range list {
		// Streamed: already read while the list arrived, by stream (readStreamed) or by the
		// transform (readListed).
		switch l := obj.(type) {
		case listed:
			mark(uidKey(l))
			continue
		case notListed, streamed:
			continue
		}
		if o := e.observe(src, obj, baseline, false); o.state {
			mark(o.key)
		}
	}
	e.events.sweep(func(_ uidKey, t tracked) bool { return t.src == src && t.list != gen }, e.forget)
	if !first {
		est := e.ttl.gapEstimate(created, listedAt, s.contact, now)
		e.m.gapLost.Add(est)
		e.cfg.Logger.Debug("relisted Events", "source", s.name, "gap", time.Duration(now-s.contact)*time.Second,
			"new_before_gap", created, "watched", time.Duration(s.contact-listedAt)*time.Second,
			"event_ttl", time.Duration(e.ttl.eventTTL())*time.Second, "estimated_lost", est)
	}
	s.synced = true
	if s.restored {
		e.endRestore(s)
	}
	e.finishRestore()
	e.touch(src)
	if e.syncedLocked() {
		e.m.synced.Set(1)
	}
	return first && e.syncedLocked()
}

// readListed reads one Event of a streamed list of source s as it arrives, exactly as replace
// reads a listed Event, and reports its key and whether it belongs to the source's state.
func (e *Engine) readListed(s *Source, ev *corev1.Event) (uidKey, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.observe(s.idx, ev, !s.synced && !s.restored, false)
	return o.key, o.state
}

// newGen hands out the next list generation of s: never 0 (Events added since the last list
// carry it) nor the latest list's. Called with e.mu held.
func (s *Source) newGen() uint8 {
	g := s.gen
	for {
		if g++; g != 0 && g != s.list {
			break
		}
	}
	s.gen = g
	return g
}

// maxAttempts is how many streamed lists may begin between two lists read before the marks of
// those that did not end are cleared (the generations, 254 of them, would come round again).
const maxAttempts = 200

// beginStream begins a streamed list of source s and returns its generation: the mark that the
// Events it contains get in their records (readStreamed), for Replace to forget those of s
// without it. Marks of earlier attempts that did not end are of other generations.
func (e *Engine) beginStream(s *Source) uint8 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.attempts++; s.attempts > maxAttempts {
		e.events.update(func(t *tracked) {
			if t.src == s.idx && t.list != s.list {
				t.list = 0
			}
		})
		s.attempts = 1
	}
	s.streamGen = s.newGen()
	return s.streamGen
}

// readStreamed reads one Event of a streamed list of source s (generation gen) as it arrives,
// exactly as replace reads a listed Event, and marks it as contained in the list; a deletion
// before the list ends unmarks it.
func (e *Engine) readStreamed(s *Source, gen uint8, deleted bool, ev *corev1.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var k uidKey
	if deleted {
		var ok bool
		if k, ok = keyOf(ev.UID); !ok {
			return
		}
	} else {
		o := e.observe(s.idx, ev, !s.synced && !s.restored, false)
		if !o.state {
			return
		}
		k = o.key
	}
	if t, ok := e.events.get(k); ok && t.src == s.idx {
		if deleted {
			if t.list == gen {
				t.list = 0
			}
		} else {
			t.list = gen
		}
		e.events.set(k, t)
	}
}
