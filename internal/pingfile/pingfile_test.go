package pingfile

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// oracleFigures is what testdata/oracle.py, a reader written from the
// formats' documentation, prints per vantage.
type oracleFigures struct {
	Sent, Recv, Late, Dup int
	Loss                  *float64
	Min, P50, P95, P99    *float64
	Max                   *float64
}

func runOracle(t *testing.T, path string) map[string]oracleFigures {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the ping readers are not checked against testdata/oracle.py")
	}
	out, err := exec.Command(py, "testdata/oracle.py", path).Output()
	if err != nil {
		t.Fatalf("oracle on %s: %v", path, err)
	}
	var o map[string]oracleFigures
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	return o
}

// TestPingFilesMatchOracle reads the hand-built Atlas and Globalping ping
// files through the registry and folds each vantage's records into a
// verdict window, as compare does: sent, received, late, duplicates, loss
// and the RTT percentiles must be the oracle's.
func TestPingFilesMatchOracle(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		vantages     int
	}{
		{"atlas-ping.json", "atlas", 3},
		{"globalping-ping.json", "globalping", 3},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			want := runOracle(t, path)
			ss, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != tc.vantages || len(want) != tc.vantages {
				t.Fatalf("%d streams, oracle %d vantages, want %d", len(ss), len(want), tc.vantages)
			}
			for _, s := range ss {
				if s.Vantage == nil {
					t.Fatal("a stream without its vantage")
				}
				key := s.Vantage.Platform + ":" + s.Vantage.ID
				o, ok := want[key]
				if !ok {
					t.Fatalf("vantage %s: not in the oracle's %v", key, want)
				}
				w := verdict.NewWindow(0)
				for _, r := range s.Records {
					w.Add(r)
				}
				got := w.Result(candidates.Target{Addr: "130.94.10.1", Protocol: probe.ICMP}, nil)
				if got.Sent != o.Sent || got.Recv != o.Recv || got.Late != o.Late || got.Duplicates != o.Dup {
					t.Errorf("%s: sent/recv/late/dup %d/%d/%d/%d, oracle %d/%d/%d/%d", key,
						got.Sent, got.Recv, got.Late, got.Duplicates, o.Sent, o.Recv, o.Late, o.Dup)
				}
				if o.Loss == nil {
					if got.Sent != 0 {
						t.Errorf("%s: the oracle has no loss (nothing sent), linecheck sent %d", key, got.Sent)
					}
				} else if math.Abs(got.Loss-*o.Loss) > 1e-12 {
					t.Errorf("%s: loss %v, oracle %v", key, got.Loss, *o.Loss)
				}
				if o.P50 == nil {
					if got.Recv != 0 {
						t.Errorf("%s: the oracle has no RTT, linecheck received %d", key, got.Recv)
					}
					continue
				}
				for _, f := range []struct {
					name      string
					got, want float64
				}{{"min", got.RTT.Min, *o.Min}, {"p50", got.RTT.P50, *o.P50}, {"p95", got.RTT.P95, *o.P95},
					{"p99", got.RTT.P99, *o.P99}, {"max", got.RTT.Max, *o.Max}} {
					if math.Abs(f.got-f.want) > 1e-9 {
						t.Errorf("%s: RTT %s %v, oracle %v", key, f.name, f.got, f.want)
					}
				}
			}
		})
	}
}

// TestPingFileVantages checks what each vantage keeps of the file: the
// probe id, source and public address, AS and city, the error of a probe
// that could not send.
func TestPingFileVantages(t *testing.T) {
	ss, err := ReadFile("testdata/atlas-ping.json")
	if err != nil {
		t.Fatal(err)
	}
	v := ss[0].Vantage
	if v.ID != "2001" || v.Measurement != "90000001" || v.Addr != "192.168.1.10" || v.PublicAddr != "112.64.3.4" {
		t.Errorf("probe 2001: %+v", v)
	}
	if ss[1].Vantage.Error != "sendto failed: Network is unreachable" {
		t.Errorf("probe 2002: error %q", ss[1].Vantage.Error)
	}
	// The two runs of probe 2001 are one stream, numbered through.
	if n := len(ss[0].Records); n != 9 || ss[0].Records[n-1].Seq != 7 {
		t.Errorf("probe 2001: %d records, last seq %d; want 9 (8 probes and a duplicate) ending at seq 7", n, ss[0].Records[n-1].Seq)
	}
	gs, err := ReadFile("testdata/globalping-ping.json")
	if err != nil {
		t.Fatal(err)
	}
	if g := gs[1].Vantage; g.ASN != 4837 || g.City != "Beijing" || g.Network != "China Unicom" {
		t.Errorf("globalping result 2: %+v", g)
	}
	if g := gs[2].Vantage; !strings.Contains(g.Error, "Network is unreachable") || len(gs[2].Records) != 0 {
		t.Errorf("globalping result 3 failed: error %q, %d records", g.Error, len(gs[2].Records))
	}
}

// TestPingFileDetection checks that each format is told from its content,
// and that linecheck's own stream still reads as before.
func TestPingFileDetection(t *testing.T) {
	stream := `{"schema":"linecheck.probe/v1","time":"2026-12-01T00:00:00Z","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","seq":0,"status":"ok","rtt_ms":0.05}` + "\n"
	for _, tc := range []struct{ name, data, format string }{
		{"stream", stream, "linecheck"},
		{"atlas list", `[{"prb_id": 1, "type": "ping"}]`, "atlas"},
		{"atlas line", `{"fw": 5080, "prb_id": 1, "type": "ping"}` + "\n", "atlas"},
		{"globalping", `{"id": "x", "type": "ping", "results": []}`, "globalping"},
		{"atlas traceroute", `[{"prb_id": 1, "type": "traceroute"}]`, ""},
	} {
		h := head([]byte(tc.data))
		got := ""
		for _, f := range formats {
			if f.Recognise(h) {
				got = f.Name
				break
			}
		}
		if got != tc.format {
			t.Errorf("%s: recognised as %q, want %q", tc.name, got, tc.format)
		}
	}
	ss, err := Read(strings.NewReader(stream), "s.ndjson")
	if err != nil || len(ss) != 1 || ss[0].Vantage != nil || len(ss[0].Records) != 1 || *ss[0].Records[0].RTTms != 0.05 {
		t.Fatalf("linecheck stream: %v %+v", err, ss)
	}
}

// TestPingFileErrors checks that a malformed file names the file, the
// record and the field.
func TestPingFileErrors(t *testing.T) {
	atlas := func(result, extra string) string {
		return `[{"type": "ping", "prb_id": 7, "msm_id": 9, "dst_addr": "130.94.10.1", "src_addr": "10.0.0.2", "from": "112.64.3.4", "timestamp": 1765000000, "result": ` + result + extra + `}]`
	}
	gp := func(result string) string {
		return `{"id": "g1", "type": "ping", "status": "finished", "createdAt": "2025-12-06T04:00:00Z", "target": "130.94.10.1", "results": [{"probe": {"asn": 4134}, "result": ` + result + `}]}`
	}
	for _, tc := range []struct{ name, data, want string }{
		{"rtt not a number", atlas(`[{"rtt": "1.5"}]`, ""), `f.json: RIPE Atlas ping results: line 1: item 1: result item 1: field "rtt": want a number, got text "1.5"`},
		{"unknown entry", atlas(`[{"rtt": 1}, {"ttl": 5}]`, ""), `f.json: RIPE Atlas results[0].result[1]: neither rtt`},
		{"late past the start", atlas(`[{"x": "*"}, {"late": 3, "rtt": 900}]`, ""), `f.json: RIPE Atlas results[0].result[1].late: 3 is not a probe before it (1..1)`},
		{"late after an answer", atlas(`[{"rtt": 5}, {"late": 1, "rtt": 900}]`, ""), `f.json: RIPE Atlas results[0].result[1].late: the probe 1 back was not lost (ok)`},
		{"sent disagrees", atlas(`[{"rtt": 5}, {"x": "*"}]`, `, "sent": 3`), `f.json: RIPE Atlas results[0].sent: 3, but result[] holds 2 probes`},
		{"bad source", strings.Replace(atlas(`[{"rtt": 5}]`, ""), "10.0.0.2", "10.0.0", 1), `f.json: RIPE Atlas results[0].src_addr: "10.0.0" is not an IP address`},
		{"no timestamp", strings.Replace(atlas(`[{"rtt": 5}]`, ""), `"timestamp": 1765000000`, `"timestamp": 0`, 1), `f.json: RIPE Atlas results[0].timestamp: missing`},
		{"cut short", atlas(`[{"rtt": 5}]`, "")[:60], `f.json: RIPE Atlas ping results: line 1: the JSON ends before its last value does`},
		{"gp no total", gp(`{"status": "finished", "resolvedAddress": "130.94.10.1", "timings": [], "stats": {"rcv": 0}}`), `f.json: Globalping results[0].result.stats.total: missing`},
		{"gp timings short", gp(`{"status": "finished", "resolvedAddress": "130.94.10.1", "timings": [{"rtt": 1}], "stats": {"total": 3, "rcv": 2}}`), `f.json: Globalping results[0].result.timings: 1 RTTs for 2 answers`},
		{"gp bad rtt", gp(`{"status": "finished", "resolvedAddress": "130.94.10.1", "timings": [{"rtt": -4}], "stats": {"total": 1, "rcv": 1}}`), `f.json: Globalping results[0].result.timings[0].rtt: missing or not a time in ms`},
		{"atlas traceroute", `[{"type": "traceroute", "prb_id": 7, "result": []}]`, `f.json: a "traceroute" measurement, not ping results: probe streams are linecheck's (ping --stream) or RIPE Atlas ping results or Globalping ping measurements; routes go in recorded.forward`},
		{"globalping mtr", `{"id": "g", "type": "mtr", "results": []}`, `f.json: a "mtr" measurement, not ping results`},
		{"gp in progress", strings.Replace(gp(`{}`), "finished", "in-progress", 1), `f.json: Globalping measurement g1: status: still in progress`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.data), "f.json")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to begin %q", err, tc.want)
			}
		})
	}
}

// TestPingFileFromDisk reads through ReadFile a path that is missing.
func TestPingFileFromDisk(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "none.json"))
	if !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// TestAtlasPingLinesReadAsTheList checks the API's format=txt (one result
// per line): the same streams as the list, and errors naming the result.
func TestAtlasPingLinesReadAsTheList(t *testing.T) {
	list, err := ReadFile("testdata/atlas-ping.json")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := ReadFile("testdata/atlas-ping.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(list) {
		t.Fatalf("%d streams from lines, %d from the list", len(lines), len(list))
	}
	for i := range list {
		a, b := list[i], lines[i]
		if *a.Vantage != *b.Vantage || len(a.Records) != len(b.Records) {
			t.Fatalf("stream %d: %+v/%d vs %+v/%d", i, a.Vantage, len(a.Records), b.Vantage, len(b.Records))
		}
		for j := range a.Records {
			ra, rb := a.Records[j], b.Records[j]
			if ra.Status != rb.Status || ra.Seq != rb.Seq || !ra.Time.Equal(rb.Time) || (ra.RTTms == nil) != (rb.RTTms == nil) ||
				(ra.RTTms != nil && *ra.RTTms != *rb.RTTms) {
				t.Errorf("stream %d record %d: %+v vs %+v", i, j, ra, rb)
			}
		}
	}
	bad := `{"type": "ping", "prb_id": 1, "dst_addr": "130.94.10.1", "timestamp": 1, "result": [{"rtt": 1}]}` + "\n" +
		`{"type": "ping", "prb_id": 2, "dst_addr": "130.94.10.1", "timestamp": 1, "result": [{"x": "?"}]}` + "\n"
	_, err = Read(strings.NewReader(bad), "l.jsonl")
	if want := `l.jsonl: RIPE Atlas results[1].result[0]: neither rtt`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to begin %q", err, want)
	}
}

// Scan gives the records Read reads, in the same order, and the vantages
// of a measurement network's file; a traceroute measurement is refused as
// Read refuses it. linecheck's stream (the bundled sample) goes through the
// line-at-a-time scanner.
func TestScanGivesWhatReadReads(t *testing.T) {
	for _, path := range []string{"testdata/atlas-ping.json", "testdata/atlas-ping.jsonl", "testdata/globalping-ping.json", "../../samples/rec/hk-cn2-gia-ping.ndjson"} {
		ss, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := Records(ss)
		var wantV []string
		for _, s := range ss {
			if s.Vantage != nil {
				wantV = append(wantV, s.Vantage.Platform+" "+s.Vantage.ID)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []probe.Record
		scanned, err := Scan(f, path, func(r probe.Record) { got = append(got, r) })
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var gotV []string
		for _, s := range scanned {
			if s.Vantage != nil {
				gotV = append(gotV, s.Vantage.Platform+" "+s.Vantage.ID)
			}
		}
		if len(got) != len(want) || len(got) == 0 || strings.Join(gotV, ",") != strings.Join(wantV, ",") {
			t.Fatalf("%s: %d records (read: %d), vantages %v (read: %v)", path, len(got), len(want), gotV, wantV)
		}
		for i := range got {
			if got[i].Seq != want[i].Seq || !got[i].Time.Equal(want[i].Time) || got[i].Addr != want[i].Addr || (got[i].RTTms == nil) != (want[i].RTTms == nil) || (got[i].RTTms != nil && *got[i].RTTms != *want[i].RTTms) || got[i].Status != want[i].Status {
				t.Fatalf("%s record %d: %+v, read %+v", path, i, got[i], want[i])
			}
		}
	}
	_, err := Scan(strings.NewReader(`[{"type":"traceroute","prb_id":1,"result":[]}]`), "tr.json", func(probe.Record) {})
	if err == nil || !strings.Contains(err.Error(), "not ping results") {
		t.Errorf("a traceroute measurement: %v", err)
	}
}
