package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is kubecause's GOGC. The default of 100 lets the heap grow to twice what is live
// before a collection; kubecause's live heap is mostly pointer-free (the per-Event records), so
// collecting at +25 % costs little CPU and keeps RSS at 1.25 × the live heap instead of 2 × — at
// start-up too, where every decoded Event of the initial list is garbage as soon as it is counted
// (docs/performance.md). The GOGC in force is exported as go_gc_gogc_percent.
const gcPercent = 25

// setGCPercent applies gcPercent unless the user set GOGC.
func setGCPercent() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
}
