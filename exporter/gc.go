package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is kubecause's GOGC. The default of 100 lets the heap grow to twice what is live
// before a collection; kubecause's live heap is mostly pointer-free (the per-Event records), so
// collecting at +25 % costs little CPU and keeps RSS at 1.25 × the live heap instead of 2 × — at
// start-up too, where every decoded Event of the initial list is garbage as soon as it is counted
// (docs/performance.md).
const gcPercent = 25

// gcMinHeadroom is the least the heap may grow between two collections. Where the live heap is
// small (a few thousand live Events: ~4 MiB, most of it client-go's and the cause table's
// pointer-rich structures), +25 % would mean a collection every ~1 MiB of decoded Events, and the
// GC's mark workers a large share of kubecause's CPU above the decode floor. The headroom is
// raised to this much there; from 8 MiB of live heap on, GOGC 25 governs alone. The GOGC in force
// is exported as go_gc_gogc_percent.
const gcMinHeadroom = 2 << 20

// setGCPercent applies gcPercent, with gcMinHeadroom re-applied after every collection, unless the
// user set GOGC.
func setGCPercent() {
	if os.Getenv("GOGC") != "" {
		return
	}
	t := &gcTuner{base: gcPercent, min: gcMinHeadroom}
	t.apply(t.percent(liveHeap()))
	afterEveryGC(func() { t.apply(t.percent(liveHeap())) })
}

// gcTuner derives GOGC from the live heap: base percent, raised so that the headroom is at least
// min bytes. Its calls are serial: one before afterEveryGC is armed, then one per collection, each
// from the cleanup of a sentinel the previous call's cleanup armed.
type gcTuner struct {
	base int
	min  uint64
	cur  int // the GOGC last set (0: none yet)
}

func (t *gcTuner) percent(live uint64) int {
	p := t.base
	if live > 0 && t.min > 0 {
		if q := int(min(t.min*100/live, 1000)); q > p {
			p = q
		}
	}
	return p
}

// apply sets GOGC when it moves by more than a tenth (setting it takes the heap lock).
func (t *gcTuner) apply(p int) {
	if t.cur != 0 && p*10 >= t.cur*9 && p*10 <= t.cur*11 {
		return
	}
	t.cur = p
	debug.SetGCPercent(p)
}

// liveHeap is the heap that the last collection marked live (0 before the first one).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcSentinel is what afterEveryGC hangs its cleanup on: 16 bytes, so that it is not batched into a
// tiny allocation (those are under 16 bytes) that other objects keep alive.
type gcSentinel struct{ _ [16]byte }

// afterEveryGC runs f after every collection, in the runtime's cleanup goroutine: each
// collection finds the current sentinel unreachable, and its cleanup runs f and arms the next.
func afterEveryGC(f func()) {
	runtime.AddCleanup(&gcSentinel{}, func(struct{}) {
		f()
		afterEveryGC(f)
	}, struct{}{})
}
