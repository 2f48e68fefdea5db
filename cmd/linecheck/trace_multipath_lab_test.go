package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// trace --multipath on the lab's two-branch ECMP router (layer-4 hash):
// both branches are found at TTL 2, and every flow of every path takes
// that path in the kernels' own words (ip route get per router, the
// lab's FlowPaths oracle), for udp by destination and by source port.
func TestTraceMultipathFindsBothLabBranches(t *testing.T) {
	netlab.RequireRoot(t)
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lcmda", Hops: 4, Multipath: true})
	dst := lab.ServerAddr(false)
	want := lab.HopAddrs(false)
	for _, fp := range []string{"dst", "src"} {
		t.Run(fp, func(t *testing.T) {
			run := func() route.Trace {
				cmd := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
				cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"trace", "--multipath", "-U",
					"--flow-port", fp, "-w", "1", "--cycles", "3", "-i", "0.05", "--no-asn", "--format", "json", dst}, "\x1f"))
				var errb syncBuffer
				cmd.Stderr = &errb
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%v\n%s", err, errb.String())
				}
				var tr route.Trace
				if err := json.Unmarshal(out, &tr); err != nil || tr.Multipath == nil {
					t.Fatalf("%v\n%s", err, out)
				}
				return tr
			}
			// The rule misses the second branch in 2·2⁻⁶ = 3 % of runs by
			// design (all n_2 = 6 flows hashed one way): a run that found
			// one path is run again (a new process: other source port,
			// other flows), up to three runs.
			tr := run()
			for try := 1; try < 3 && len(tr.Paths) < 2; try++ {
				t.Logf("flow-port %s: %d path(s) found (the rule's allowed miss); again", fp, len(tr.Paths))
				tr = run()
			}
			t.Logf("flow-port %s: %d probes, %d flows, %d paths, shares %v/%v", fp, tr.Multipath.ProbesUsed, len(tr.Multipath.Flows),
				len(tr.Paths), tr.Paths[0].Share, tr.Paths[len(tr.Paths)-1].Share)
			if !tr.Reached || tr.Multipath.Stopped != "rule" {
				t.Errorf("reached %v, stopped %q", tr.Reached, tr.Multipath.Stopped)
			}
			at2 := map[string]bool{}
			for _, n := range tr.Multipath.Nodes {
				if n.TTL == 2 {
					at2[n.Address] = true
				}
			}
			for _, a := range want[1] {
				if !at2[a] {
					t.Errorf("TTL 2: nodes %v, want both branches %v", at2, want[1])
				}
			}
			if len(tr.Paths) != 2 {
				t.Fatalf("%d paths, want 2: %+v", len(tr.Paths), tr.Paths)
			}
			byID := map[int]route.MultipathFlow{}
			for _, f := range tr.Multipath.Flows {
				byID[f.Flow] = f
			}
			for _, p := range tr.Paths {
				var flows []netlab.Flow
				for _, id := range p.Flows {
					f := byID[id]
					flows = append(flows, netlab.Flow{Proto: "udp", SrcPort: f.SrcPort, DstPort: f.DstPort})
				}
				truth, err := lab.FlowPaths(flows, false)
				if err != nil {
					t.Fatal(err)
				}
				var hops []string
				for _, h := range p.Hops {
					hops = append(hops, h.Address)
				}
				for i, tp := range truth {
					if !slices.Equal(tp, hops) {
						t.Errorf("path %d flow %+v: the kernels route it over %v, the trace says %v", p.Path, flows[i], tp, hops)
					}
				}
				for _, h := range p.Hops {
					if h.Sent == nil || *h.Sent != 3 || h.Recv == nil || *h.Recv != 3 || h.RTT == nil {
						t.Errorf("path %d TTL %d: sent %v recv %v rtt %v, want 3 of 3 from --cycles 3", p.Path, h.TTL, h.Sent, h.Recv, h.RTT)
						continue
					}
					// mtr's Last: the path's last reply, one of the three.
					if h.LastMs == nil || *h.LastMs < h.RTT.Min || *h.LastMs > h.RTT.Max {
						t.Errorf("path %d TTL %d: last_ms %v, want a reply within min %v max %v", p.Path, h.TTL, h.LastMs, h.RTT.Min, h.RTT.Max)
					}
				}
			}
		})
	}
}
