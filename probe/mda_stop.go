package probe

import (
	"fmt"
	"sync"
)

// The MDA stopping rule (Augustin, Friedman and Teixeira, "Measuring
// load-balanced paths in the Internet", IMC 2007; Veitch et al., INFOCOM
// 2009). A node whose next hops are hashed evenly over K interfaces shows
// fewer than K of them after n flows with probability
//
//	P(n, K) = 1 − P(all K seen after n uniform draws)
//	        = Σ_{j=1..K−1} (−1)^(j+1) · C(K, j) · ((K−j)/K)^n
//
// n_K is the smallest n with P(n, K) ≤ 1 − confidence: having seen K−1
// next hops after n_K flows, a K-th is ruled out at that confidence. These
// are the numbers scamper's tracelb and libparistraceroute use (95 %:
// n_2 = 6, n_3 = 11, n_4 = 16, n_5 = 21, n_6 = 27, n_8 = 38, n_10 = 51;
// 99 %: 8, 15, 21, 28, 36, 51, 66); mda_stop_test.go checks the first 99
// of both against their published table.

// Multipath defaults and limits.
const (
	DefaultConfidence = 95
	DefaultMaxProbes  = 3000
	// MaxMultipathProbes bounds --max-probes: probe keys are 16 bits, and a
	// key must not come round again within one run.
	MaxMultipathProbes = 60000
	// MaxMultipathFlows is how many flows one run may name: hundreds are
	// needed where a node has tens of next hops.
	MaxMultipathFlows = 4096
)

var (
	stopMu    sync.Mutex
	stopTable = map[int][]int{} // confidence → n_K by K
)

// MDAStop is n_K at confidence (95 or 99): the number of flows through a
// node that rule out a K-th next hop once K−1 are seen (K ≥ 2; K < 2 is
// treated as 2). See the formula above.
func MDAStop(k, confidence int) int {
	k = max(k, 2)
	stopMu.Lock()
	defer stopMu.Unlock()
	t := stopTable[confidence]
	for len(t) <= k {
		t = append(t, stopPoint(len(t), 1-float64(confidence)/100))
	}
	stopTable[confidence] = t
	return t[k]
}

// stopPoint computes n_K for failure probability alpha with the
// occupancy distribution: p[d] is the chance that exactly d of the K
// interfaces were seen after n flows, updated one flow at a time (every
// term is positive, so no alternating sum loses precision).
func stopPoint(k int, alpha float64) int {
	if k < 2 {
		return 0
	}
	p := make([]float64, k+1)
	p[0] = 1
	for n := 1; ; n++ {
		for d := k; d >= 0; d-- {
			stay := p[d] * float64(d) / float64(k)
			in := 0.0
			if d > 0 {
				in = p[d-1] * float64(k-d+1) / float64(k)
			}
			p[d] = stay + in
		}
		if 1-p[k] <= alpha {
			return n
		}
	}
}

// checkConfidence refuses a confidence the rule has no table for.
func checkConfidence(c int) error {
	if c != 95 && c != 99 {
		return fmt.Errorf("confidence %d: use 95 or 99 (percent)", c)
	}
	return nil
}
