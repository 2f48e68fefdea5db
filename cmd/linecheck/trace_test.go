package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
)

// prRun runs the CLI in-process after resetting the flags of c (cobra keeps
// flag values between executions in one process); it returns stdout and the
// exit code.
func prRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	testIO.SetOut(&out)
	defer testIO.SetOut(nil)
	code := testIO.run(context.Background(), args)
	return out.String(), code
}

func TestTraceReplayOfMTRJSONPrintsTheTraceDocument(t *testing.T) {
	out, code := prRun(t, "trace", "--replay", "../../internal/route/testdata/mtr-loopback.json", "--format", "json")
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
		out, code := prRun(t, "trace", "--replay", "../../internal/route/testdata/mtr-loopback.json", "--format", f)
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
		args []string
	}{
		{"unknown format", []string{"ping", "--format", "xml", "127.0.0.1"}},
		{"count 0", []string{"ping", "-c", "0", "127.0.0.1"}},
		{"large sweep without --allow-large (refused before any probe)", []string{"ping", "10.77.0.0/16"}},
		{"multicast without --allow-broadcast", []string{"ping", "224.0.0.1"}},
		{"bad socket kind", []string{"ping", "--socket", "x", "127.0.0.1"}},
		{"no target", []string{"ping"}},
		{"trace: two targets", []string{"trace", "127.0.0.1", "127.0.0.2"}},
		{"trace: bad protocol", []string{"trace", "--proto", "sctp", "127.0.0.1"}},
		{"trace: replay file missing", []string{"trace", "--replay", dir + "/none.json"}},
		{"trace: replay file invalid", []string{"trace", "--replay", bad}},
		{"ping --tcp 0 (not a port)", []string{"ping", "--tcp", "0", "127.0.0.1"}},
		{"ping --tcp 65536", []string{"ping", "--tcp", "65536", "127.0.0.1"}},
		{"ping the 127/8 broadcast without --allow-broadcast", []string{"ping", "127.255.255.255"}},
		{"trace: udp --port 0", []string{"trace", "--proto", "udp", "--port", "0", "127.0.0.1"}},
		{"trace: tcp --port 65536", []string{"trace", "--proto", "tcp", "--port", "65536", "127.0.0.1"}},
		{"trace: no target", []string{"trace"}},
		{"trace: the 127/8 broadcast", []string{"trace", "127.255.255.255"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, code := prRun(t, tc.args...); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
		})
	}
}

func TestPingJSONOnLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw ICMP sockets); CI runs as root")
	}
	out, code := prRun(t, "ping", "--format", "json", "-c", "3", "-i", "10ms", "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var doc pingDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != PingSchema || len(doc.Results) != 1 || doc.Results[0].Sent != 3 || doc.Results[0].Recv != 3 ||
		doc.Results[0].Loss == nil || *doc.Results[0].Loss != 0 || doc.Results[0].RTT == nil || doc.Results[0].RTT.Min <= 0 {
		t.Errorf("%+v", doc)
	}
}

func TestTraceTableShowsLateDuplicateAndForeignCounts(t *testing.T) {
	dir := t.TempDir()
	// An older file without late/duplicates/foreign still replays, as zeros,
	// and the table then has no late or dup column (the CSV always has them).
	old := dir + "/old.json"
	os.WriteFile(old, []byte(`{"schema":"linecheck.trace/v1","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","reached":true,
"hops":[{"ttl":1,"sent":2,"loss":0,"flags":["destination"],"responders":[{"addr":"127.0.0.1","recv":2,"rtt_ms":{"min":1,"avg":1,"p50":1,"p95":1,"p99":1,"max":1,"stdev":0},"jitter_ms":{"rfc3550":0,"mean_abs":0,"pdv_p95":0}}]}]}`), 0o644)
	out, code := prRun(t, "trace", "--replay", old, "--format", "csv")
	if row := csvRow(t, out, code, "127.0.0.1"); row["hop_late"] != "0" || row["hop_duplicates"] != "0" {
		t.Errorf("old file: late/dup not 0:\n%s", out)
	}
	out, code = prRun(t, "trace", "--replay", old)
	if head := strings.Split(out, "\n")[1]; code != 0 || strings.Contains(head, "late") || strings.Contains(head, "dup") {
		t.Errorf("old file: exit %d\n%s", code, out)
	}
	out, code = prRun(t, "trace", "--replay", old, "--format", "json")
	if code != 0 || !strings.Contains(out, `"late": 0`) || !strings.Contains(out, `"duplicates": 0`) || !strings.Contains(out, `"foreign": 0`) {
		t.Errorf("old file as JSON: exit %d\n%s", code, out)
	}

	withCounts := dir + "/new.json"
	os.WriteFile(withCounts, []byte(`{"schema":"linecheck.trace/v1","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","reached":false,"foreign":4,
"hops":[{"ttl":1,"sent":2,"loss":0,"late":0,"duplicates":3,"flags":[],"responders":[{"addr":"10.77.0.2","recv":2,"rtt_ms":{"min":1,"avg":1,"p50":1,"p95":1,"p99":1,"max":1,"stdev":0},"jitter_ms":{"rfc3550":0,"mean_abs":0,"pdv_p95":0}}]},
{"ttl":2,"sent":2,"loss":1,"late":2,"duplicates":0,"flags":[],"responders":[]}]}`), 0o644)
	out, code = prRun(t, "trace", "--replay", withCounts, "--format", "csv")
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
	if hop1[col["hop_late"]] != "0" || hop1[col["hop_duplicates"]] != "3" || hop2[col["hop_late"]] != "2" ||
		hop2[col["hop_duplicates"]] != "0" || hop2[col["hop_loss"]] != "1" {
		t.Errorf("late/dup cells wrong:\n%s", out)
	}
	out, _ = prRun(t, "trace", "--replay", withCounts)
	if !strings.Contains(out, "4 foreign replies") {
		t.Errorf("table does not mention the foreign replies:\n%s", out)
	}
}

// The messages of refused input say what is wrong and what to do, on stderr.
func TestProbeBadInputMessages(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"ping --tcp 0", []string{"ping", "--tcp", "0", "127.0.0.1"}, []string{"--tcp 0", "1..65535"}},
		{"trace --port 0 with udp", []string{"trace", "--proto", "udp", "--port", "0", "127.0.0.1"}, []string{"--port 0", "1..65535"}},
		{"trace without TARGET", []string{"trace"}, []string{"TARGET", "got none", "linecheck trace --help"}},
		{"ping the 127/8 broadcast", []string{"ping", "127.255.255.255"}, []string{"broadcast", "--allow-broadcast"}},
		{"ping the limited broadcast", []string{"ping", "255.255.255.255"}, []string{"broadcast", "--allow-broadcast"}},
		{"trace the 127/8 broadcast", []string{"trace", "127.255.255.255"}, []string{"broadcast", "unicast addresses only"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := lcRun(t, tc.args...)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errs)
				}
			}
			if strings.Contains(errs, "accepts 1 arg") || strings.Contains(errs, "run as root") {
				t.Errorf("stderr is cobra's or a privilege message:\n%s", errs)
			}
		})
	}
}

// --port is ignored for icmp (help text), so --port 0 there is no error: the
// trace runs (on loopback, as root).
func TestTraceICMPIgnoresPort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
	out, code := prRun(t, "trace", "--port", "0", "--format", "csv", "127.0.0.1")
	if code != 0 || !strings.Contains(out, "destination") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// With --allow-broadcast the 127/8 broadcast reaches sendto, which Linux
// refuses with EACCES even for root (no SO_BROADCAST): the message names the
// broadcast address instead of asking for root.
func TestPingBroadcastRefusedByTheKernelIsNotAPrivilegeProblem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (an ICMP socket to reach sendto); CI runs as root")
	}
	_, errs, code := lcRun(t, "ping", "--allow-broadcast", "-c", "1", "127.255.255.255")
	if code == 0 || !strings.Contains(errs, "broadcast address") || !strings.Contains(errs, "not a privilege problem") ||
		strings.Contains(errs, "run as root") || strings.Contains(errs, "setcap") {
		t.Errorf("exit %d\n%s", code, errs)
	}
}

// CSV is for machines: loss is the fraction 0..1 as in JSON, no "%"; the
// table keeps the percentage. A hop that lost 1 of 4 probes: 0.25 / 25.0%.
func TestTraceCSVLossIsAFraction(t *testing.T) {
	f := t.TempDir() + "/quarter.json"
	os.WriteFile(f, []byte(`{"schema":"linecheck.trace/v1","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","reached":true,
"hops":[{"ttl":1,"sent":4,"loss":0.25,"flags":["destination"],"responders":[{"addr":"127.0.0.1","recv":3,"rtt_ms":{"min":1,"avg":2,"p50":2,"p95":3,"p99":3,"max":3,"stdev":0.8},"jitter_ms":{"rfc3550":0.1,"mean_abs":1,"pdv_p95":1}}]}]}`), 0o644)
	out, code := prRun(t, "trace", "--replay", f, "--format", "csv")
	row := csvRow(t, out, code, "127.0.0.1")
	if row["hop_loss"] != "0.25" || row["rtt_p50_ms"] != "2" || row["jitter_rfc3550_ms"] != "0.1" {
		t.Errorf("csv row %v, want loss 0.25, p50 2, jitter rfc3550 0.1\n%s", row, out)
	}
	for k, v := range row {
		if strings.Contains(v, "%") {
			t.Errorf("csv cell %s = %q carries a unit", k, v)
		}
	}
	out, _ = prRun(t, "trace", "--replay", f)
	if !strings.Contains(out, "25.0%") {
		t.Errorf("table does not show loss as 25.0%%:\n%s", out)
	}
}

// mtr's JSON carries min/avg/max/stdev but no percentiles and, without its
// jitter columns, no jitter: those cells are "-" in tables, empty in CSV
// (pandas reads NaN), while the JSON keeps its numbers (0) as documented in
// docs/probe.md.
func TestTraceReplayOfMTRShowsUnknownFiguresAsDash(t *testing.T) {
	const mtr = "../../internal/route/testdata/mtr-loopback.json"
	out, code := prRun(t, "trace", "--replay", mtr, "--format", "csv")
	row := csvRow(t, out, code, "127.0.0.1")
	// From the file: Best 0.06, Avg 0.062, Wrst 0.064, StDev 0.002, 3 of 3.
	want := map[string]string{"rtt_min_ms": "0.06", "rtt_avg_ms": "0.062", "rtt_max_ms": "0.064", "rtt_stdev_ms": "0.002",
		"hop_loss": "0", "rtt_p50_ms": "", "rtt_p95_ms": "", "jitter_rfc3550_ms": "", "jitter_mean_abs_ms": ""}
	for k, w := range want {
		if row[k] != w {
			t.Errorf("csv %s = %q, want %q", k, row[k], w)
		}
	}
	for _, f := range []string{"table", "markdown"} {
		out, code := prRun(t, "trace", "--replay", mtr, "--format", f)
		if code != 0 || strings.Contains(out, "0.000") || !strings.Contains(out, "0.064") {
			t.Errorf("--format %s shows an unknown figure as 0.000 (exit %d):\n%s", f, code, out)
		}
	}
	// mtr with its jitter columns (Javg, Jint): jitter known, percentiles not.
	out, code = prRun(t, "trace", "--replay", "../../internal/route/testdata/mtr-loopback6-wide.json", "--format", "csv")
	row = csvRow(t, out, code, "::1")
	if row["rtt_p50_ms"] != "" || row["jitter_rfc3550_ms"] == "" || row["jitter_mean_abs_ms"] == "" {
		t.Errorf("mtr with jitter columns: %v", row)
	}
	out, code = prRun(t, "trace", "--replay", mtr, "--format", "json")
	var tr route.Trace
	if err := json.Unmarshal([]byte(out), &tr); err != nil || code != 0 {
		t.Fatalf("exit %d %v\n%s", code, err, out)
	}
	if r := tr.Hops[0].Responders[0]; r.Jitter != (stats.Jitter{}) || r.RTT.P50 != 0 || r.RTT.Max != 0.064 {
		t.Errorf("JSON responder %+v, want the numbers as read (jitter and p50 0)", r)
	}
}

// csvRow checks a successful run and returns the CSV row whose addr is addr,
// keyed by header.
func csvRow(t *testing.T, out string, code int, addr string) map[string]string {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("not CSV with a row (%v):\n%s", err, out)
	}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		if row["addr"] == addr {
			return row
		}
	}
	t.Fatalf("no row for %s:\n%s", addr, out)
	return nil
}

// mtr's habits: -r (report mode) and -z (AS lookup) are what trace does
// anyway, --report-cycles N is --cycles N and -j is --format json; -j beside
// another --format is refused rather than one silently winning.
func TestTraceTakesMTRSpellings(t *testing.T) {
	needICMP(t)
	out, code := prRun(t, "trace", "-r", "-z", "-j", "--report-cycles", "3", "-i", "0.05", "-n", "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var doc struct {
		Schema string `json:"schema"`
		Hops   []struct {
			Sent int `json:"sent"`
		} `json:"hops"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != "linecheck.trace/v1" || len(doc.Hops) != 1 || doc.Hops[0].Sent != 3 {
		t.Fatalf("-j --report-cycles 3: %v %+v\n%s", err, doc, out)
	}
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	if _, code := prRun(t, "trace", "-j", "--format", "csv", "127.0.0.1"); code != 2 || !strings.Contains(errb.String(), "-j is --format json") {
		t.Errorf("-j --format csv: exit %d\n%s", code, errb.String())
	}
}
