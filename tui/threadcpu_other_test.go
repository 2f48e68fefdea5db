//go:build !linux

package tui

import "time"

// threadCPU is not measured here: the thread is unknown (-1).
func threadCPU() (int, time.Duration) { return -1, 0 }
