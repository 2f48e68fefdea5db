package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// backtrace --multipath on loopback: each target gets a multipath document
// (UDP flows by destination port without --proto), one path each, and the
// table lists the path with its flows and class.
func TestBacktraceMultipathLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs raw sockets")
	}
	p := filepath.Join(t.TempDir(), "lo.yaml")
	os.WriteFile(p, []byte("targets:\n  - {name: lo1, carrier: telecom, city: Shanghai, addr: 127.0.0.1}\n"), 0o644)
	out, code := prRun(t, "backtrace", "--targets", p, "--multipath", "--timeout", "200ms", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	doc, err := route.ParseBacktrace("out", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	tr := doc.Results[0].Trace
	if tr == nil || tr.Multipath == nil || tr.Multipath.FlowField != "udp-dport" || len(tr.Paths) != 1 || !tr.Paths[0].Reached {
		t.Fatalf("trace %+v", tr)
	}
	if doc.Results[0].LineClass != tr.Paths[0].LineClass {
		t.Errorf("target class %s, path class %s", doc.Results[0].LineClass, tr.Paths[0].LineClass)
	}
	table, code := prRun(t, "backtrace", "--targets", p, "--multipath", "--timeout", "200ms", "--wide")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, table)
	}
	// The discovery may settle loopback on one flow (the target answering
	// the first flow is the source's only next hop): the table names the
	// flows the JSON lists, "flow" or "flows" as many.
	flows := tr.Paths[0].Flows
	want := fmt.Sprintf("lo1 path 1 of 1 (flow %d", flows[0])
	if len(flows) > 1 {
		want = fmt.Sprintf("lo1 path 1 of 1 (flows %d", flows[0])
	}
	if !strings.Contains(table, want) || !strings.Contains(table, "hops 127.0.0.1") {
		t.Errorf("table lacks %q and the path's hops:\n%s", want, table)
	}
}
