//go:build race

package main

// raceDetector is true in a test binary built with -race, which runs a
// loaded test several times slower: tests that bound a time scale it.
const raceDetector = true
