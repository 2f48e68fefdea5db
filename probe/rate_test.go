package probe

import (
	"context"
	"math"
	"net/netip"
	"strings"
	"testing"
)

// A rate is a finite number of packets per second, MinRate or more; what
// else a caller sets is refused before a socket is opened (no packet: the
// targets here are never reached).
func TestRatesOutsideTheRangeAreRefusedBeforeAnyProbe(t *testing.T) {
	for _, r := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 1e-300, 0.009} {
		if CheckRate(r) == nil {
			t.Errorf("CheckRate(%g) passed", r)
		}
		lo := netip.MustParseAddr("127.0.0.1")
		if _, err := Sweep(context.Background(), []SweepTarget{{Target: Target{Name: "lo", Addr: lo}}}, PingConfig{Rate: r}, nil); err == nil || !strings.Contains(err.Error(), "packets per second") {
			t.Errorf("Sweep at rate %g: %v", r, err)
		}
		if _, err := PingTargets(context.Background(), []Target{{Name: "lo", Addr: lo}}, PingConfig{Rate: r}, nil); err == nil || !strings.Contains(err.Error(), "packets per second") {
			t.Errorf("PingTargets at rate %g: %v", r, err)
		}
		if _, err := (TraceConfig{Rate: r}).withDefaults(); err == nil {
			t.Errorf("a trace at rate %g was accepted", r)
		}
	}
	for _, r := range []float64{MinRate, 1, DefaultPingRate, 1e12} {
		if err := CheckRate(r); err != nil {
			t.Errorf("CheckRate(%g): %v", r, err)
		}
	}
	if _, err := (TraceConfig{}).withDefaults(); err != nil {
		t.Errorf("the default trace rate: %v", err)
	}
}
