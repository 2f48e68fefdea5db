package engine

import (
	"testing"

	"github.com/linecheck/linecheck/probe"
)

// A sweep's refused TCP connections reach the outcome serve observes.
func TestPingOutcomesKeepTheRefusedConnections(t *testing.T) {
	res := []probe.SweepResult{{PingResult: probe.PingResult{Sent: 3, Refused: 3}}, {PingResult: probe.PingResult{Sent: 3, Recv: 3}}}
	out := PingOutcomes(res, nil, 2)
	if out[0].Refused != 3 || out[0].Sent != 3 || out[1].Refused != 0 {
		t.Errorf("outcomes %+v, want 3 refused of 3 for the first, none for the second", out)
	}
}
