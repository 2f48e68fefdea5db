package probe_test

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"testing"

	"github.com/linecheck/linecheck/probe"
)

// The netlab ECMP labs (internal/testkit/netlab: Diamond2, Diamond3, Nested),
// simulated: 200 runs each with other flow hashes. The discovery (the
// probes that map flows, the per-packet check apart) spends no more than
// scamper's tracelb on the same labs in the network namespaces, medians
// of bench/multipath/run.sh (scamper 20211212): 25, 30 and 46 probes at
// 95 %, 33, 39 and 61 at 99 %; and misses a path in no more runs than the
// rule's bound, 1 − confidence^splits, plus three binomial standard
// deviations.
func TestMultipathSpendsNoMoreThanTracelbOnTheLabTopologies(t *testing.T) {
	labs := []struct {
		name   string
		dst    string
		links  []string
		paths  int
		splits int
		lb     map[int]int // tracelb's median probes by confidence
	}{
		{"2-branch", "10.77.4.2", []string{"src>10.77.0.2", "10.77.0.2>10.77.1.2,10.77.100.2", "10.77.1.2>10.77.2.2",
			"10.77.100.2>10.77.2.2", "10.77.2.2>10.77.3.2", "10.77.3.2>10.77.4.2"}, 2, 1, map[int]int{95: 25, 99: 33}},
		{"3-branch", "10.77.4.2", []string{"src>10.77.0.2", "10.77.0.2>10.77.1.2,10.77.100.2,10.77.102.2", "10.77.1.2>10.77.2.2",
			"10.77.100.2>10.77.2.2", "10.77.102.2>10.77.2.2", "10.77.2.2>10.77.3.2", "10.77.3.2>10.77.4.2"}, 3, 1, map[int]int{95: 30, 99: 39}},
		{"nested", "10.77.5.2", []string{"src>10.77.0.2", "10.77.0.2>10.77.1.2,10.77.100.2", "10.77.1.2>10.77.2.2",
			"10.77.100.2>10.77.101.2,10.77.102.2", "10.77.2.2>10.77.3.2", "10.77.101.2>10.77.103.2", "10.77.102.2>10.77.103.2",
			"10.77.3.2>10.77.4.2", "10.77.103.2>10.77.4.2", "10.77.4.2>10.77.5.2"}, 3, 2, map[int]int{95: 46, 99: 61}},
	}
	const runs = 200
	for _, lab := range labs {
		for _, conf := range []int{95, 99} {
			var disc []int
			missed, false_ := 0, 0
			for seed := range uint64(runs) {
				f := newTopo(lab.dst, 5000+seed, lab.links...)
				run, err := probe.MultipathWithDriver(context.Background(), f, f.dst, netip.MustParseAddr(f.dst), mdaCfg(conf))
				if err != nil {
					t.Fatal(err)
				}
				disc = append(disc, run.ProbesUsed-run.PerPacketProbes)
				if len(run.Paths) < lab.paths {
					missed++
				}
				truth := truthLinks(f)
				for _, l := range linkSet(run) {
					if !slices.Contains(truth, l) {
						false_++
						t.Errorf("%s %d%% seed %d: link %s is not in the topology", lab.name, conf, seed, l)
					}
				}
				checkFlowMap(t, f, run)
			}
			slices.Sort(disc)
			med := disc[runs/2]
			p := 1.0
			for range lab.splits {
				p *= float64(conf) / 100
			}
			bound := 1 - p
			allowed := int(runs*bound + 3*math.Sqrt(runs*bound*(1-bound)))
			t.Logf("%s %d%%: discovery median %d probes (range %d-%d; tracelb %d), %d of %d runs missed a path (allowed %d)",
				lab.name, conf, med, disc[0], disc[runs-1], lab.lb[conf], missed, runs, allowed)
			if med > lab.lb[conf] {
				t.Errorf("%s %d%%: the discovery's median is %d probes, tracelb's %d", lab.name, conf, med, lab.lb[conf])
			}
			if missed > allowed {
				t.Errorf("%s %d%%: %d of %d runs missed a path, the bound allows %d", lab.name, conf, missed, runs, allowed)
			}
		}
	}
}

// truthLinks are the topology's links, "TTL from>to".
func truthLinks(f *topoFake) []string {
	var out []string
	cur := []string{"src"}
	for ttl := 0; len(cur) > 0; ttl++ {
		var next []string
		for _, a := range cur {
			for _, b := range f.next[a] {
				if ttl > 0 {
					out = append(out, fmt.Sprintf("%d %s>%s", ttl, a, b))
				}
				if !slices.Contains(next, b) {
					next = append(next, b)
				}
			}
		}
		cur = next
	}
	return out
}
