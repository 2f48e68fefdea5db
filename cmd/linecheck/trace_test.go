package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/route"
)

// prRun runs the CLI in-process after resetting the flags of c (cobra keeps
// flag values between executions in one process); it returns stdout and the
// exit code.
func prRun(t *testing.T, c *cobra.Command, args ...string) (string, int) {
	t.Helper()
	c.Flags().VisitAll(func(f *pflag.Flag) {
		_ = f.Value.Set(f.DefValue)
		f.Changed = false
	})
	var out bytes.Buffer
	root.SetOut(&out)
	defer root.SetOut(nil)
	code := run(args)
	return out.String(), code
}

func TestTraceReplayOfMTRJSONPrintsTheTraceDocument(t *testing.T) {
	out, code := prRun(t, traceCmd, "trace", "--replay", "../../internal/route/testdata/mtr-loopback.json", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var tr route.Trace
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The file is mtr 0.95's report of 3 probes to 127.0.0.1, all answered.
	if tr.Schema != route.TraceSchema || tr.Source != "mtr-json" || !tr.Reached || len(tr.Hops) != 1 ||
		tr.Hops[0].Sent != 3 || tr.Hops[0].Responders[0].Recv != 3 || tr.Hops[0].Responders[0].Carrier != "loopback" {
		t.Errorf("replayed trace %+v", tr)
	}
}

func TestTraceReplayTableAndCSV(t *testing.T) {
	for _, f := range []string{"table", "csv", "markdown"} {
		out, code := prRun(t, traceCmd, "trace", "--replay", "../../internal/route/testdata/mtr-loopback.json", "--format", f)
		if code != 0 || !strings.Contains(out, "127.0.0.1") || !strings.Contains(out, "destination") {
			t.Errorf("--format %s: exit %d\n%s", f, code, out)
		}
	}
}

func TestProbeCommandsBadInputExit2(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.json"
	os.WriteFile(bad, []byte(`{"schema":"linecheck.trace/v1","hops":[{"ttl":1,"loss":2}]}`), 0o644)
	tests := []struct {
		name string
		cmd  *cobra.Command
		args []string
	}{
		{"unknown format", pingCmd, []string{"ping", "--format", "xml", "127.0.0.1"}},
		{"count 0", pingCmd, []string{"ping", "-c", "0", "127.0.0.1"}},
		{"large sweep without --allow-large (refused before any probe)", pingCmd, []string{"ping", "10.77.0.0/16"}},
		{"multicast without --allow-broadcast", pingCmd, []string{"ping", "224.0.0.1"}},
		{"bad socket kind", pingCmd, []string{"ping", "--socket", "x", "127.0.0.1"}},
		{"no target", pingCmd, []string{"ping"}},
		{"trace: two targets", traceCmd, []string{"trace", "127.0.0.1", "127.0.0.2"}},
		{"trace: bad protocol", traceCmd, []string{"trace", "--proto", "sctp", "127.0.0.1"}},
		{"trace: replay file missing", traceCmd, []string{"trace", "--replay", dir + "/none.json"}},
		{"trace: replay file invalid", traceCmd, []string{"trace", "--replay", bad}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, code := prRun(t, tc.cmd, tc.args...); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
		})
	}
}

func TestPingJSONOnLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw ICMP sockets); CI runs as root")
	}
	out, code := prRun(t, pingCmd, "ping", "--format", "json", "-c", "3", "-i", "10ms", "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var doc pingDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != PingSchema || len(doc.Results) != 1 || doc.Results[0].Sent != 3 || doc.Results[0].Recv != 3 ||
		doc.Results[0].Loss != 0 || doc.Results[0].RTT.Min <= 0 {
		t.Errorf("%+v", doc)
	}
}

func TestTraceTableShowsLateDuplicateAndForeignCounts(t *testing.T) {
	dir := t.TempDir()
	// An older file without late/duplicates/foreign still replays, as zeros,
	// and the table then has no late or dup column.
	old := dir + "/old.json"
	os.WriteFile(old, []byte(`{"schema":"linecheck.trace/v1","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","reached":true,
"hops":[{"ttl":1,"sent":2,"loss":0,"flags":["destination"],"responders":[{"addr":"127.0.0.1","recv":2,"rtt_ms":{"min":1,"avg":1,"p50":1,"p95":1,"p99":1,"max":1,"stdev":0},"jitter_ms":{"rfc3550":0,"mean_abs":0,"pdv_p95":0}}]}]}`), 0o644)
	out, code := prRun(t, traceCmd, "trace", "--replay", old, "--format", "csv")
	if code != 0 || strings.Contains(out, "late") || strings.Contains(out, "dup") {
		t.Errorf("old file: exit %d\n%s", code, out)
	}
	out, code = prRun(t, traceCmd, "trace", "--replay", old, "--format", "json")
	if code != 0 || !strings.Contains(out, `"late": 0`) || !strings.Contains(out, `"duplicates": 0`) || !strings.Contains(out, `"foreign": 0`) {
		t.Errorf("old file as JSON: exit %d\n%s", code, out)
	}

	withCounts := dir + "/new.json"
	os.WriteFile(withCounts, []byte(`{"schema":"linecheck.trace/v1","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","reached":false,"foreign":4,
"hops":[{"ttl":1,"sent":2,"loss":0,"late":0,"duplicates":3,"flags":[],"responders":[{"addr":"10.77.0.2","recv":2,"rtt_ms":{"min":1,"avg":1,"p50":1,"p95":1,"p99":1,"max":1,"stdev":0},"jitter_ms":{"rfc3550":0,"mean_abs":0,"pdv_p95":0}}]},
{"ttl":2,"sent":2,"loss":1,"late":2,"duplicates":0,"flags":[],"responders":[]}]}`), 0o644)
	out, code = prRun(t, traceCmd, "trace", "--replay", withCounts, "--format", "csv")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) < 3 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	head := strings.Split(lines[0], ",")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	hop1, hop2 := strings.Split(lines[1], ","), strings.Split(lines[2], ",")
	if len(hop1) != len(head) || len(hop2) != len(head) {
		t.Fatalf("rows do not match the header:\n%s", out)
	}
	if hop1[col["late"]] != "0" || hop1[col["dup"]] != "3" || hop2[col["late"]] != "2" || hop2[col["dup"]] != "0" ||
		hop2[col["loss"]] != "100.0%" {
		t.Errorf("late/dup cells wrong:\n%s", out)
	}
	out, _ = prRun(t, traceCmd, "trace", "--replay", withCounts)
	if !strings.Contains(out, "4 foreign replies") {
		t.Errorf("table does not mention the foreign replies:\n%s", out)
	}
}
