package probe_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// Multipath over real sockets to 127.0.0.1 only: one path, one hop, the
// target; every flow named by its own port (or ICMP checksum).
func TestMultipathLoopbackEveryProtocolAndMode(t *testing.T) {
	cases := []struct {
		name  string
		proto probe.Protocol
		mode  probe.TraceMode
		dst   bool
		field probe.FlowField
		root  bool
	}{
		{"udp dport recverr", probe.UDP, probe.ModeRecverr, true, probe.FlowUDPDstPort, false},
		{"udp sport recverr", probe.UDP, probe.ModeRecverr, false, probe.FlowUDPSrcPort, false},
		{"tcp recverr", probe.TCP, probe.ModeRecverr, false, probe.FlowTCPSrcPort, false},
		{"udp dport raw", probe.UDP, probe.ModeRaw, true, probe.FlowUDPDstPort, true},
		{"udp sport raw", probe.UDP, probe.ModeRaw, false, probe.FlowUDPSrcPort, true},
		{"tcp raw", probe.TCP, probe.ModeRaw, false, probe.FlowTCPSrcPort, true},
		{"icmp raw", probe.ICMP, probe.ModeRaw, false, probe.FlowICMP, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("needs root (raw sockets)")
			}
			cfg := probe.MultipathConfig{TraceConfig: probe.TraceConfig{Proto: c.proto, Mode: c.mode, FlowDstPort: c.dst,
				MaxTTL: 4, Timeout: 500 * time.Millisecond}, PathCycles: 2}
			cfg.Interval = 10 * time.Millisecond
			run, err := probe.Multipath(context.Background(), "127.0.0.1", cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Reached || len(run.Paths) != 1 || len(run.Paths[0].Hops) != 1 || run.Paths[0].Hops[0].Addr != "127.0.0.1" {
				t.Fatalf("reached %v, paths %+v", run.Reached, run.Paths)
			}
			if run.FlowField != c.field || run.Mode != c.mode {
				t.Errorf("flow field %s mode %s", run.FlowField, run.Mode)
			}
			// The first hop is the target: one flow finds it.
			if run.ProbesUsed != 1 || len(run.Flows) != 1 {
				t.Errorf("%d probes over %d flows, want 1", run.ProbesUsed, len(run.Flows))
			}
			ids := map[int]bool{}
			for i, fl := range run.Flows {
				if ids[fl.ID] {
					t.Errorf("flow %d: id %d given twice", i, fl.ID)
				}
				ids[fl.ID] = true
				if c.field == probe.FlowUDPDstPort && (fl.DstPort != probe.DefaultUDPPort+i || fl.ID != fl.DstPort) {
					t.Errorf("flow %d: %+v, want destination port %d", i, fl, probe.DefaultUDPPort+i)
				}
				if (c.field == probe.FlowUDPSrcPort || c.field == probe.FlowTCPSrcPort) && (fl.SrcPort == 0 || fl.ID != fl.SrcPort) {
					t.Errorf("flow %d: %+v, want its source port as id", i, fl)
				}
			}
			got := 0
			for _, r := range run.Cycles.Results {
				if r.Addr == "127.0.0.1" && r.Dest {
					got++
				}
			}
			if got != 2 {
				t.Errorf("cycles: %d answers from the target, want 2 (%+v)", got, run.Cycles.Results)
			}
		})
	}
}
