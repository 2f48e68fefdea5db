package route

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// cycles builds results for n cycles over TTLs 1..len(answers); answers[ttl-1](c)
// gives the responder of cycle c ("" for none); the last TTL is the destination.
func cycles(n int, answers ...func(c int) string) []probe.ProbeResult {
	var out []probe.ProbeResult
	order := 0
	for c := 0; c < n; c++ {
		for i, a := range answers {
			addr := a(c)
			r := probe.ProbeResult{TTL: i + 1, Order: order, Addr: addr, Dest: i == len(answers)-1 && addr != ""}
			if addr != "" {
				r.RTTms = float64(i + 1)
			}
			out = append(out, r)
			order++
		}
	}
	return out
}

func always(a string) func(int) string { return func(int) string { return a } }
func never(int) string                 { return "" }

// everyOther answers on even cycles only: loss exactly 0.5.
func everyOther(a string) func(int) string {
	return func(c int) string {
		if c%2 == 0 {
			return a
		}
		return ""
	}
}

func TestBuildHops(t *testing.T) {
	tests := []struct {
		name      string
		results   []probe.ProbeResult
		wantLoss  []float64
		wantFlags [][]string
		reached   bool
	}{
		{
			name:      "hop loss that the destination does not show is flagged rate-limited",
			results:   cycles(20, always("10.77.0.2"), everyOther("10.77.1.2"), always("10.77.2.2")),
			wantLoss:  []float64{0, 0.5, 0},
			wantFlags: [][]string{{}, {FlagRateLimited}, {FlagDestination}},
			reached:   true,
		},
		{
			name:      "loss that carries on to the destination is forwarding loss, not flagged",
			results:   cycles(20, always("10.77.0.2"), everyOther("10.77.1.2"), everyOther("10.77.2.2")),
			wantLoss:  []float64{0, 0.5, 0.5},
			wantFlags: [][]string{{}, {}, {FlagDestination}},
			reached:   true,
		},
		{
			// 2·sqrt(0.5·0.5/4) = 0.5: a difference of exactly 0.5 is not clearly lower.
			name:      "same loss on only 4 probes is within the margin",
			results:   cycles(4, always("10.77.0.2"), everyOther("10.77.1.2"), always("10.77.2.2")),
			wantLoss:  []float64{0, 0.5, 0},
			wantFlags: [][]string{{}, {}, {FlagDestination}},
			reached:   true,
		},
		{
			name:      "a silent TTL has no responders, loss 1 and the no-reply flag",
			results:   cycles(3, always("10.77.0.2"), never, always("10.77.2.2")),
			wantLoss:  []float64{0, 1, 0},
			wantFlags: [][]string{{}, {FlagNoReply}, {FlagDestination}},
			reached:   true,
		},
		{
			name:      "unreached target: the silent TTLs probed after the last answer are listed",
			results:   cycles(2, always("10.77.0.2"), always("10.77.1.2"), never, never),
			wantLoss:  []float64{0, 0, 1, 1},
			wantFlags: [][]string{{}, {}, {}, {}},
			reached:   false,
		},
		{
			// TTLs 1..10 probed, TTL 2 answered last: 2 + MaxUnknown (5) = 7 entries.
			name: "unreached target: at most MaxUnknown silent TTLs after the last answer",
			results: cycles(1, always("10.77.0.2"), always("10.77.1.2"), never, never, never, never, never,
				never, never, never),
			wantLoss:  []float64{0, 0, 1, 1, 1, 1, 1},
			wantFlags: [][]string{{}, {}, {}, {}, {}, {}, {}},
			reached:   false,
		},
		{
			name:      "nothing answered: MaxUnknown silent entries",
			results:   cycles(1, never, never, never, never, never, never, never, never),
			wantLoss:  []float64{1, 1, 1, 1, 1},
			wantFlags: [][]string{{}, {}, {}, {}, {}},
			reached:   false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hops, reached := BuildHops(tc.results)
			if reached != tc.reached {
				t.Errorf("reached = %v, want %v", reached, tc.reached)
			}
			if len(hops) != len(tc.wantLoss) {
				t.Fatalf("%d hops, want %d: %+v", len(hops), len(tc.wantLoss), hops)
			}
			for i, h := range hops {
				if h.TTL != i+1 {
					t.Errorf("hop %d: ttl %d", i, h.TTL)
				}
				if math.Abs(h.Loss-tc.wantLoss[i]) > 1e-12 {
					t.Errorf("ttl %d: loss %v, want %v", h.TTL, h.Loss, tc.wantLoss[i])
				}
				if !slices.Equal(h.Flags, tc.wantFlags[i]) {
					t.Errorf("ttl %d: flags %v, want %v", h.TTL, h.Flags, tc.wantFlags[i])
				}
				if h.Loss == 1 && (h.Responders == nil || len(h.Responders) != 0) {
					t.Errorf("ttl %d: silent hop responders %#v, want []", h.TTL, h.Responders)
				}
			}
		})
	}
}

func TestBuildHopsCountsLateAndDuplicateRepliesPerHop(t *testing.T) {
	// Two cycles over 3 TTLs. TTL 2: one reply in time and duplicated twice,
	// one late. TTL 3 (the target): one late then one in time, duplicated once.
	rs := []probe.ProbeResult{
		{TTL: 1, Order: 0, Addr: "a", RTTms: 1},
		{TTL: 2, Order: 1, Addr: "b", RTTms: 2, Dups: 2},
		{TTL: 3, Order: 2, Late: true, Dest: true},
		{TTL: 1, Order: 3, Addr: "a", RTTms: 1},
		{TTL: 2, Order: 4, Late: true},
		{TTL: 3, Order: 5, Addr: "c", RTTms: 3, Dest: true, Dups: 1},
		// Past the destination: left out, with its duplicate.
		{TTL: 4, Order: 6, Addr: "c", RTTms: 3, Dest: true, Dups: 1},
	}
	hops, reached := BuildHops(rs)
	if !reached || len(hops) != 3 {
		t.Fatalf("reached %v, %d hops", reached, len(hops))
	}
	want := []struct{ late, dups int }{{0, 0}, {1, 2}, {1, 1}}
	wantLoss := []float64{0, 0.5, 0.5}
	for i, h := range hops {
		if h.Late != want[i].late || h.Duplicates != want[i].dups || h.Loss != wantLoss[i] {
			t.Errorf("ttl %d: late %d duplicates %d loss %v, want %d, %d, %v", h.TTL, h.Late, h.Duplicates, h.Loss,
				want[i].late, want[i].dups, wantLoss[i])
		}
	}
}

func TestBuildHopsUnreachedListsLateTTLs(t *testing.T) {
	// --timeout shorter than the path: TTLs 1-2 answer in time, 3 and 4
	// only late, 5 never; the target (TTL 6 and beyond) answers late.
	var rs []probe.ProbeResult
	for ttl := 1; ttl <= 10; ttl++ {
		r := probe.ProbeResult{TTL: ttl, Order: ttl}
		switch {
		case ttl <= 2:
			r.Addr, r.RTTms = "r", 1
		case ttl == 3 || ttl == 4:
			r.Late = true
		case ttl >= 6:
			r.Late, r.Dest = true, true
		}
		rs = append(rs, r)
	}
	hops, reached := BuildHops(rs)
	if reached {
		t.Error("reached with only late replies from the target")
	}
	var ttls, late []int
	for _, h := range hops {
		ttls, late = append(ttls, h.TTL), append(late, h.Late)
		if h.TTL > 2 && (h.Loss != 1 || len(h.Responders) != 0 || h.Responders == nil) {
			t.Errorf("ttl %d: loss %v responders %#v, want 1 and []", h.TTL, h.Loss, h.Responders)
		}
	}
	if !slices.Equal(ttls, []int{1, 2, 3, 4, 5, 6}) || !slices.Equal(late, []int{0, 0, 1, 1, 0, 1}) {
		t.Errorf("ttls %v late %v, want 1..6 and [0 0 1 1 0 1]", ttls, late)
	}
}

func TestBuildHopsDropsProbesBeyondTheDestination(t *testing.T) {
	// All TTLs in flight at once: TTLs 3..5 all reach the target at TTL 3.
	rs := []probe.ProbeResult{
		{TTL: 1, Order: 0, Addr: "10.77.0.2", RTTms: 1},
		{TTL: 2, Order: 1, Addr: "10.77.1.2", RTTms: 2},
		{TTL: 3, Order: 2, Addr: "10.77.2.2", RTTms: 3, Dest: true},
		{TTL: 4, Order: 3, Addr: "10.77.2.2", RTTms: 3, Dest: true},
		{TTL: 5, Order: 4, Addr: "10.77.2.2", RTTms: 3, Dest: true},
	}
	hops, reached := BuildHops(rs)
	if !reached || len(hops) != 3 {
		t.Fatalf("reached %v, %d hops; want true, 3", reached, len(hops))
	}
	if hops[2].Sent != 1 || hops[2].Responders[0].Recv != 1 {
		t.Errorf("destination entry sent %d recv %d, want 1 and 1", hops[2].Sent, hops[2].Responders[0].Recv)
	}
}

func TestBuildHopsResponderStatsAndFlows(t *testing.T) {
	// TTL 2 has two ECMP responders: A on flows 0 and 2 (RTTs 3, 1, 2 in send
	// order, given shuffled), B on flow 1 (RTT 5). MPLS kept from the reply.
	mpls := []probe.MPLS{{Label: 24001, TC: 0, S: true, TTL: 1}}
	rs := []probe.ProbeResult{
		{TTL: 2, Flow: 2, Order: 5, Addr: "A", RTTms: 2},
		{TTL: 2, Flow: 0, Order: 1, Addr: "A", RTTms: 3, MPLS: mpls},
		{TTL: 2, Flow: 1, Order: 3, Addr: "B", RTTms: 5},
		{TTL: 2, Flow: 0, Order: 4, Addr: "A", RTTms: 1},
		{TTL: 2, Flow: 1, Order: 6, Addr: ""},
	}
	hops, _ := BuildHops(rs)
	if len(hops) != 1 {
		t.Fatalf("%d hops, want 1", len(hops))
	}
	h := hops[0]
	if h.Sent != 5 || math.Abs(h.Loss-0.2) > 1e-12 {
		t.Errorf("sent %d loss %v, want 5 and 0.2", h.Sent, h.Loss)
	}
	if len(h.Responders) != 2 || h.Responders[0].Addr != "A" || h.Responders[1].Addr != "B" {
		t.Fatalf("responders %+v, want A then B", h.Responders)
	}
	a := h.Responders[0]
	if a.Recv != 3 || !slices.Equal(a.Samples, []float64{3, 1, 2}) || !slices.Equal(a.Flows, []int{0, 2}) {
		t.Errorf("A: recv %d samples %v flows %v; want 3, [3 1 2], [0 2]", a.Recv, a.Samples, a.Flows)
	}
	// By hand: min 1, max 3, mean 2, sample stdev 1, median 2; diffs |1−3|=2, |2−1|=1:
	// mean_abs 1.5, rfc3550 = 2/16 then + (1 − 0.125)/16 = 0.1796875.
	want := stats.RTTStats{Min: 1, Avg: 2, P50: 2, P95: 3, P99: 3, Max: 3, Stdev: 1}
	if a.RTT != want {
		t.Errorf("A rtt %+v, want %+v", a.RTT, want)
	}
	if math.Abs(a.Jitter.MeanAbs-1.5) > 1e-12 || math.Abs(a.Jitter.RFC3550-0.1796875) > 1e-12 {
		t.Errorf("A jitter %+v", a.Jitter)
	}
	if !reflect.DeepEqual(a.MPLS, mpls) {
		t.Errorf("A mpls %+v, want %+v", a.MPLS, mpls)
	}
}
