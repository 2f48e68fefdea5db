//go:build !race

package main

// raceDetector is true in a test binary built with -race (race_on_test.go).
const raceDetector = false
