package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// A watch across a real 2-router lab whose first router drops every 10th
// packet from the client (nftables numgen inc): each 10-probe cycle loses
// exactly one probe, so the report shows loss exactly 0.1 and availability 1.
func TestWatchReportOnALossyLabPath(t *testing.T) {
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lcwat", Hops: 2})
	if err := lab.Loss(1, 10, 0); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lab.ndjson")
	cmd := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "--watch", "--journal", path,
		"--watch-cycles", "5", "-c", "10", "-i", "20ms", "-W", "1s", "--format", "json", lab.ServerAddr(false)}, "\x1f"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	es, info := journalCycles(t, path)
	if len(es) != 5 || info.Torn {
		t.Fatalf("%d cycles, %+v", len(es), info)
	}
	for _, e := range es {
		if p := e.Ping[0]; p.Sent != 10 || p.Recv != 9 {
			t.Errorf("cycle %d: sent %d recv %d, want 10 and 9", e.Cycle, p.Sent, p.Recv)
		}
	}
	var r journal.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tg := r.Targets[0]
	if tg.Sent != 50 || tg.Recv != 45 || tg.Loss == nil || *tg.Loss < 0.1-1e-12 || *tg.Loss > 0.1+1e-12 || tg.Availability != 1 {
		t.Errorf("report %+v", tg)
	}
	hourSent := 0
	for _, h := range tg.Hours {
		hourSent += h.Sent
	}
	if hourSent != 50 {
		t.Errorf("hours add up to %d probes, want 50", hourSent)
	}
}
