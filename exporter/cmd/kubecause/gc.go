package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
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

// setMemoryLimit sets the Go memory limit to ratio × the limit the provider reports (the
// container's cgroup limit), as Prometheus does with --auto-gomemlimit: near the container's
// limit the GC works harder instead of letting the process be OOM-killed — at a restart during
// an event storm, say. A GOMEMLIMIT set by the user, or no limit at all, leaves it alone; the
// library's AUTOMEMLIMIT variable (a ratio, or "off") overrides the ratio.
// It returns the limit set (0 when none).
func setMemoryLimit(ratio float64, provider memlimit.Provider, logger *slog.Logger) int64 {
	limit, err := memlimit.Set(memlimit.WithRatio(ratio), memlimit.WithProvider(provider),
		memlimit.WithLogger(logger.With("component", "automemlimit")))
	if err != nil {
		logger.Warn("could not set the Go memory limit from the container's", "err", err)
		return 0
	}
	// Set reports the limit in force even when it set none: with GOMEMLIMIT or AUTOMEMLIMIT=off
	// in the environment it leaves the limit alone, and a provider without a limit (no cgroup
	// limit) gives math.MaxInt64, Go's default of no limit.
	if _, userSet := os.LookupEnv("GOMEMLIMIT"); userSet || os.Getenv("AUTOMEMLIMIT") == "off" || limit == math.MaxInt64 {
		return 0
	}
	return limit
}
