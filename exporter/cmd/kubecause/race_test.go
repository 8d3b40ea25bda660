//go:build race

package main

// raceEnabled: the race detector makes bcrypt some fifty times slower.
const raceEnabled = true
