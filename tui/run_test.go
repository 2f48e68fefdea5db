package tui

import (
	"runtime/debug"
	"testing"
)

// TuneGC raises the collector's target for the interactive loop and puts the
// previous one back; a GOGC the user set is left alone.
func TestTuneGCSetsAndRestores(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	restore := TuneGC()
	if got := debug.SetGCPercent(liveGCPercent); got != liveGCPercent {
		t.Errorf("during the loop GC percent = %d, want %d", got, liveGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the loop GC percent = %d, want 100 back", got)
	}
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	TuneGC()()
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("with GOGC=50 set by the user, GC percent = %d, want 50 untouched", got)
	}
}
