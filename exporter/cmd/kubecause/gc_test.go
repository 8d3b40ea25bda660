package main

import (
	"runtime/debug"
	"testing"
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
