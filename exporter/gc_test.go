package main

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

func TestGCPercentKeepsAMinimumHeadroom(t *testing.T) {
	tu := &gcTuner{base: 25, min: 2 << 20}
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 25},             // before the first collection: GOGC 25
		{1 << 20, 200},      // 1 MiB live: +2 MiB
		{4 << 20, 50},       // 4 MiB live: +2 MiB, not +1 MiB
		{8 << 20, 25},       // from 8 MiB on, +25 % is at least 2 MiB
		{100 << 20, 25},     // a large heap: GOGC 25
		{1 << 10, 1000},     // bounded
		{(8 << 20) - 1, 25}, // just under 8 MiB: 25 (rounded down)
	} {
		if got := tu.percent(tc.live); got != tc.want {
			t.Errorf("live %d B: GOGC %d, want %d", tc.live, got, tc.want)
		}
	}
	if got := (&gcTuner{base: 25}).percent(1 << 20); got != 25 {
		t.Errorf("no minimum headroom: GOGC %d, want 25", got)
	}
}

// currentGCPercent reads GOGC (SetGCPercent returns the previous value).
func currentGCPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestGCTunerSetsGOGCOnlyWhenItMoves(t *testing.T) {
	defer debug.SetGCPercent(currentGCPercent())
	tu := &gcTuner{base: 25}
	tu.apply(100)
	if got := currentGCPercent(); got != 100 {
		t.Fatalf("GOGC %d, want 100", got)
	}
	tu.apply(108) // within a tenth: left at 100
	if got := currentGCPercent(); got != 100 {
		t.Fatalf("GOGC %d after a move of 8 %%, want 100", got)
	}
	tu.apply(50)
	if got := currentGCPercent(); got != 50 {
		t.Fatalf("GOGC %d, want 50", got)
	}
}

func TestAfterEveryGCRunsAfterCollections(t *testing.T) {
	var runs atomic.Int64
	afterEveryGC(func() { runs.Add(1) })
	deadline := time.Now().Add(10 * time.Second)
	for runs.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("ran %d times after collections, want 3", runs.Load())
		}
		runtime.GC()
		runtime.Gosched() // the cleanup goroutine runs after the collection
	}
}

func TestSetGCPercentLeavesAUserGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	t.Setenv("GOGC", "77")
	setGCPercent()
	runtime.GC()
	if got := currentGCPercent(); got != 77 {
		t.Fatalf("GOGC %d, want the user's 77", got)
	}
}
