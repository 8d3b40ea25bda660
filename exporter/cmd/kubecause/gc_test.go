package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// currentGCPercent reads GOGC (SetGCPercent returns the previous value).
func currentGCPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	setGCPercent()
	if got := currentGCPercent(); got != gcPercent {
		t.Fatalf("GOGC %d, want %d", got, gcPercent)
	}
}

func TestSetGCPercentLeavesAUserGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	t.Setenv("GOGC", "77")
	setGCPercent()
	if got := currentGCPercent(); got != 77 {
		t.Fatalf("GOGC %d, want the user's 77", got)
	}
}

// The Go memory limit follows the container's limit at the chosen ratio, and a GOMEMLIMIT set by
// the user wins.
func TestMemoryLimitFollowsTheContainer(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	logger := slog.New(slog.DiscardHandler)

	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set in the test's environment")
	}
	got := setMemoryLimit(0.9, memlimit.Limit(200<<20), logger)
	if want := int64(0.9 * (200 << 20)); got != want || debug.SetMemoryLimit(-1) != want {
		t.Fatalf("limit set %d (runtime: %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}

	// No limit in the container (outside one, say): none is set, the runtime has none.
	debug.SetMemoryLimit(prev)
	noLimit := func() (uint64, error) { return 0, memlimit.ErrNoLimit }
	if got := setMemoryLimit(0.9, noLimit, logger); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("without a container limit: limit set %d (runtime %d), want none", got, debug.SetMemoryLimit(-1))
	}

	debug.SetMemoryLimit(prev)
	t.Setenv("GOMEMLIMIT", "64MiB")
	if got := setMemoryLimit(0.9, memlimit.Limit(200<<20), logger); got != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT set: limit set %d (runtime %d), want none", got, debug.SetMemoryLimit(-1))
	}
}
