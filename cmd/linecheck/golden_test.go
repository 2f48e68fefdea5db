package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// The golden tests pin every document of every command in every format it
// offers to a file under testdata/golden, from deterministic inputs only: the
// bundled samples, --replay recordings, journals made here from the sample
// probe streams, and a fixed clock. Run with -update to rewrite the files
// after a change of output made on purpose, then read the diff. Beside each
// golden comparison a few figures are checked against a computation done
// here from the inputs, so that a golden file cannot pin a wrong figure
// unnoticed.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenNow is the report time of compare's golden documents.
var goldenNow = time.Date(2026, 10, 22, 9, 30, 0, 0, time.UTC)

// TestHelperGoldenProcess is the child process of the golden tests: the CLI
// with the fixed clock goldenNow.
func TestHelperGoldenProcess(t *testing.T) {
	argv := os.Getenv("LINECHECK_GOLDEN_ARGS")
	if argv == "" {
		t.Skip("helper process of the golden tests")
	}
	clock := func() time.Time { return goldenNow }
	os.Exit(runContext(context.WithValue(context.Background(), clockKey{}, clock), strings.Split(argv, "\x1f")))
}

// goldenRun runs `linecheck args...` in a child process in dir ("" for the
// package directory) and returns stdout; a non-zero exit other than want
// fails the test.
func goldenRun(t *testing.T, dir string, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperGoldenProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_GOLDEN_ARGS="+strings.Join(args, "\x1f"), "COLUMNS=", "TZ=UTC")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("linecheck %s: exit %d, want %d\nstderr:\n%s", strings.Join(args, " "), code, want, stderr.String())
	}
	return stdout.String()
}

// checkGolden compares got with testdata/golden/name (or writes it with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after a change made on purpose):\n%s", name, lineDiff(string(want), got))
	}
}

// lineDiff names the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 5; i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d\n  want %q\n  got  %q\n", i+1, a, c)
			shown++
		}
	}
	if len(w) != len(g) {
		fmt.Fprintf(&b, "want %d lines, got %d\n", len(w), len(g))
	}
	return b.String()
}

// goldenCase is one command line and the golden file of its output.
type goldenCase struct {
	file string
	args []string
	// code is the exit status the command must end with.
	code int
}

// runGoldenCases runs each case in dir and checks its golden file; it
// returns the outputs by file name for the figure checks.
func runGoldenCases(t *testing.T, dir string, cases []goldenCase) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range cases {
		got := goldenRun(t, dir, c.code, c.args...)
		checkGolden(t, c.file, got)
		out[c.file] = got
	}
	return out
}

// formatCases is one case per format (and per CSV table) of args.
func formatCases(prefix string, args []string, formats []report.Format, csvTables ...string) []goldenCase {
	var cs []goldenCase
	ext := map[report.Format]string{"table": "txt", "json": "json", "csv": "csv", "markdown": "md", "html": "html"}
	for _, f := range formats {
		if f == "csv" && len(csvTables) > 0 {
			for _, tb := range csvTables {
				cs = append(cs, goldenCase{file: prefix + "-" + tb + ".csv", args: append(append([]string(nil), args...), "--format", "csv", "--table", tb)})
			}
			continue
		}
		cs = append(cs, goldenCase{file: prefix + "." + ext[f], args: append(append([]string(nil), args...), "--format", string(f))})
	}
	return cs
}

var textFormats = report.Formats

// nearestRank is the p-th percentile of v by the nearest-rank rule
// (ceil(p/100·n), 1-based), computed here by sorting a copy.
func nearestRank(v []float64, p float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	k := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(k, 1)-1]
}

// decimalSum adds decimal strings exactly.
func decimalSum(t *testing.T, vs ...string) *big.Rat {
	t.Helper()
	sum := new(big.Rat)
	for _, v := range vs {
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			t.Fatalf("%q is not a decimal", v)
		}
		sum.Add(sum, r)
	}
	return sum
}

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, s)
	}
	return rows
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestGoldenBill(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	base := []string{"bill", "../../samples/traffic/2026-10.csv", "--offers", "../../samples/offers.yaml"}
	cases := formatCases("bill", base, textFormats, "bills", "p95", "items", "traffic", "usage", "break_even")
	daily := []string{"bill", "../../samples/traffic/2026-10.csv", "--daily", "--tz", "Asia/Shanghai", "--period", "2026-10"}
	cases = append(cases, formatCases("bill-daily", daily, textFormats)...)
	out := runGoldenCases(t, "", cases)

	// The 95th of the sample month, by hand: sort each direction's 5-minute
	// rates and take rank ceil(0.95·n).
	b, err := os.ReadFile("../../samples/traffic/2026-10.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, string(b))
	var in, outR []float64
	for _, r := range rows[1:] {
		i, err1 := strconv.ParseFloat(r[1], 64)
		o, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("sample row %v", r)
		}
		in, outR = append(in, i*8/300), append(outR, o*8/300)
	}
	var doc struct {
		Bills []struct {
			Offer, Amount string
			Items         []struct{ Amount string }
		}
	}
	var raw struct {
		P95 struct {
			In      float64 `json:"in_bps"`
			Out     float64 `json:"out_bps"`
			Greater float64 `json:"greater_bps"`
			N       int     `json:"n"`
			Rank    int     `json:"rank"`
		} `json:"p95"`
	}
	if err := json.Unmarshal([]byte(out["bill.json"]), &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out["bill.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if n := len(in); raw.P95.N != n || raw.P95.Rank != int(math.Ceil(0.95*float64(n))) {
		t.Errorf("p95 n %d rank %d, want %d and ceil(0.95·%d)", raw.P95.N, raw.P95.Rank, n, n)
	}
	wantIn, wantOut := nearestRank(in, 95), nearestRank(outR, 95)
	if math.Abs(raw.P95.In-wantIn) > 1e-3 || math.Abs(raw.P95.Out-wantOut) > 1e-3 || raw.P95.Greater != max(raw.P95.In, raw.P95.Out) {
		t.Errorf("p95 in %v out %v greater %v, by hand in %v out %v", raw.P95.In, raw.P95.Out, raw.P95.Greater, wantIn, wantOut)
	}
	// Each bill's total is the sum of its items, and the table shows it.
	if len(doc.Bills) == 0 {
		t.Fatal("no bills")
	}
	for _, bl := range doc.Bills {
		var items []string
		for _, it := range bl.Items {
			items = append(items, it.Amount)
		}
		sum, total := decimalSum(t, items...), decimalSum(t, bl.Amount)
		if sum.Cmp(total) != 0 {
			t.Errorf("%s: total %s, items add up to %s", bl.Offer, bl.Amount, sum.FloatString(2))
		}
	}
	billsCSV := readCSV(t, out["bill-bills.csv"])
	if len(billsCSV) != len(doc.Bills)+1 {
		t.Errorf("bills CSV has %d rows, want a header and %d bills", len(billsCSV), len(doc.Bills))
	}
	// Each day's bytes in Shanghai time, summed here from the rows.
	sh := mustLoc(t, "Asia/Shanghai")
	dayIn, dayOut, daySlots := map[string]int64{}, map[string]int64{}, map[string]int{}
	for _, r := range rows[1:] {
		at, err := time.Parse(time.RFC3339, r[0])
		if err != nil {
			t.Fatal(err)
		}
		d := at.In(sh).Format("2006-01-02")
		i, _ := strconv.ParseInt(r[1], 10, 64)
		o, _ := strconv.ParseInt(r[2], 10, 64)
		dayIn[d], dayOut[d], daySlots[d] = dayIn[d]+i, dayOut[d]+o, daySlots[d]+1
	}
	var days struct {
		Series []struct {
			Rows []struct {
				Label string `json:"label"`
				In    int64  `json:"in_bytes"`
				Out   int64  `json:"out_bytes"`
				Slots int    `json:"slots"`
			} `json:"rows"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(out["bill-daily.json"]), &days); err != nil {
		t.Fatal(err)
	}
	if len(days.Series) != 1 || len(days.Series[0].Rows) != 31 {
		t.Fatalf("daily: want one series of 31 days:\n%.1000s", out["bill-daily.json"])
	}
	for _, d := range days.Series[0].Rows {
		if d.In != dayIn[d.Label] || d.Out != dayOut[d.Label] || d.Slots != daySlots[d.Label] {
			t.Errorf("day %s: in %d out %d slots %d, by hand %d, %d, %d", d.Label, d.In, d.Out, d.Slots, dayIn[d.Label], dayOut[d.Label], daySlots[d.Label])
		}
	}
	if !strings.Contains(out["bill.txt"], fmt.Sprintf("rank %d of %d samples", raw.P95.Rank, raw.P95.N)) {
		t.Errorf("bill table does not give the rank %d of %d", raw.P95.Rank, raw.P95.N)
	}
}

func TestGoldenCompare(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	base := []string{"compare", "--offline", "../../samples/candidates.yaml"}
	cases := formatCases("compare", base, report.CompareFormats,
		"ranking", "checks", "items", "targets", "routes", "usage")
	three := []string{"compare", "--offline", "../../samples/three-networks.yaml"}
	// No candidate of the three-network scenario passes: exit 1 after the report.
	for _, c := range formatCases("compare-three", three, report.Formats, "ranking", "carriers") {
		c.code = 1
		cases = append(cases, c)
	}
	out := runGoldenCases(t, "", cases)

	// Loss of each target of hk-bgp, by hand from its probe stream.
	recs := readStream(t, "../../samples/rec/hk-bgp-ping.ndjson")
	sent, lost := map[string]int{}, map[string]int{}
	for _, r := range recs {
		sent[string(r.Protocol)]++
		if r.Status != probe.StatusOK {
			lost[string(r.Protocol)]++
		}
	}
	var doc struct {
		Candidates []struct {
			Name    string `json:"name"`
			Targets []struct {
				Protocol string   `json:"protocol"`
				Sent     int      `json:"sent"`
				Loss     *float64 `json:"loss"`
			} `json:"targets"`
			Cost *struct {
				Amount string `json:"amount"`
				Items  []struct {
					Amount string `json:"amount"`
				} `json:"items"`
			} `json:"cost"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out["compare.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range doc.Candidates {
		if c.Name == "hk-bgp" {
			for _, tg := range c.Targets {
				want := float64(lost[tg.Protocol]) / float64(sent[tg.Protocol])
				if tg.Sent != sent[tg.Protocol] || tg.Loss == nil || !approx(*tg.Loss, want) {
					t.Errorf("hk-bgp %s: sent %d loss %v, by hand %d sent, loss %d/%d", tg.Protocol, tg.Sent, tg.Loss, sent[tg.Protocol], lost[tg.Protocol], sent[tg.Protocol])
				}
				checked++
			}
		}
		if c.Cost != nil && len(c.Cost.Items) > 0 {
			var items []string
			for _, it := range c.Cost.Items {
				items = append(items, it.Amount)
			}
			if s, total := decimalSum(t, items...), decimalSum(t, c.Cost.Amount); s.Cmp(total) != 0 {
				t.Errorf("%s: monthly cost %s, items add up to %s", c.Name, c.Cost.Amount, s.FloatString(2))
			}
		}
	}
	if checked == 0 {
		t.Errorf("no target of hk-bgp in the compare document:\n%.2000s", out["compare.json"])
	}
	if !strings.Contains(out["compare.html"], "2026-10-22 09:30 UTC") {
		t.Error("the HTML report does not carry the run's time")
	}
}

func readStream(t *testing.T, path string) []probe.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := probe.ReadStream(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestGoldenTraceReplay(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	fwd := []string{"trace", "--replay", "../../samples/rec/la-forward.json"}
	cases := formatCases("trace", fwd, textFormats, "hops", "route")
	ret := []string{"trace", "--replay", "../../samples/rec/hk-bgp-return.mtr.json", "--direction", "return"}
	cases = append(cases, formatCases("trace-mtr-return", ret, textFormats, "hops", "route")...)
	cases = append(cases, goldenCase{file: "trace-wide.txt", args: append(append([]string(nil), fwd...), "--wide")})
	out := runGoldenCases(t, "", cases)

	// Loss and p95 of each hop, by hand from the recording's samples.
	tr, err := route.ReadTraceFile("../../samples/rec/la-forward.json")
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, out["trace-hops.csv"])
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, name := range []string{"ttl", "hop_loss", "rtt_p95_ms"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("hops CSV has no column %q: %v", name, rows[0])
		}
	}
	checked := 0
	for _, h := range tr.Hops {
		recv := 0
		var samples []float64
		for _, r := range h.Responders {
			recv += r.Recv
			samples = append(samples, r.Samples...)
		}
		if len(h.Responders) != 1 || h.Sent == 0 || len(samples) == 0 {
			continue
		}
		for _, r := range rows[1:] {
			if r[col["ttl"]] != strconv.Itoa(h.TTL) {
				continue
			}
			loss, _ := strconv.ParseFloat(r[col["hop_loss"]], 64)
			p95, _ := strconv.ParseFloat(r[col["rtt_p95_ms"]], 64)
			if want := 1 - float64(recv)/float64(h.Sent); !approx(loss, want) {
				t.Errorf("ttl %d: loss %v, by hand 1-%d/%d = %v", h.TTL, loss, recv, h.Sent, want)
			}
			if want := nearestRank(samples, 95); math.Abs(p95-want) > 1e-9 {
				t.Errorf("ttl %d: p95 %v ms, by hand %v", h.TTL, p95, want)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Errorf("only %d hops checked by hand", checked)
	}
}

// pingResultsFrom turns recorded probe streams into the results a sweep
// returns: one per stream and protocol, in stream order.
func pingResultsFrom(t *testing.T, proto probe.Protocol, paths ...string) []probe.PingResult {
	t.Helper()
	var out []probe.PingResult
	for _, p := range paths {
		var r probe.PingResult
		for _, rec := range readStream(t, p) {
			if rec.Protocol != proto {
				continue
			}
			r.Target, r.Addr = rec.Target, rec.Addr
			r.Sent++
			if rec.Status == probe.StatusOK && rec.RTTms != nil {
				r.Recv++
				r.RTTs = append(r.RTTs, *rec.RTTms)
			}
		}
		out = append(out, r)
	}
	return out
}

var sampleStreams = []string{
	"../../samples/rec/hk-cn2-gia-ping.ndjson", "../../samples/rec/hk-bgp-ping.ndjson",
	"../../samples/rec/tokyo-ping.ndjson", "../../samples/rec/la-ping.ndjson",
}

// TestGoldenPing renders ping's document, built by the command's own
// assembly from the sample streams' results (ping itself only runs live).
func TestGoldenPing(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	icmp := pingResultsFrom(t, probe.ICMP, sampleStreams...)
	// A target that never answers and a name that did not resolve.
	icmp = append(icmp, probe.PingResult{Target: "127.0.0.9", Addr: "127.0.0.9", Sent: 288})
	unresolved := []report.PingUnresolved{{Target: "nowhere.invalid", Error: "no such host"}}
	docICMP := report.NewPingDoc(report.PingSweep{Results: icmp, Unresolved: unresolved, Protocol: "icmp", Count: 288, Interval: 5 * time.Minute, Timeout: time.Second})
	tcp := pingResultsFrom(t, probe.TCP, sampleStreams...)
	docTCP := report.NewPingDoc(report.PingSweep{Results: tcp, Protocol: "tcp", Port: 443, Count: 288, Interval: 5 * time.Minute, Timeout: time.Second})
	// A CIDR sweep: the same results as 127.0.0.8/30's four addresses.
	var swept []probe.PingResult
	for i, r := range icmp[:4] {
		r.Target = fmt.Sprintf("127.0.0.%d", 8+i)
		r.Addr = r.Target
		swept = append(swept, r)
	}
	docCIDR := report.NewPingDoc(report.PingSweep{Results: swept, Spans: []report.PingSpan{{Prefix: "127.0.0.8/30", First: 0, Last: 3}},
		Protocol: "icmp", Count: 288, Interval: 5 * time.Minute, Timeout: time.Second})
	type variant struct {
		name           string
		doc            report.PingDoc
		alive, unreach bool
		quiet          bool
	}
	variants := []variant{
		{name: "ping", doc: docICMP},
		{name: "ping-tcp", doc: docTCP},
		{name: "ping-alive", doc: docICMP, alive: true},
		{name: "ping-unreachable", doc: docICMP, unreach: true},
		{name: "ping-cidr", doc: docCIDR},
		{name: "ping-cidr-quiet", doc: docCIDR, quiet: true},
	}
	ext := map[report.Format]string{"table": "txt", "json": "json", "csv": "csv", "markdown": "md"}
	outs := map[string]string{}
	for _, v := range variants {
		for _, f := range textFormats {
			if v.quiet && f != "table" && f != "markdown" {
				continue
			}
			var b bytes.Buffer
			view := report.PingReport{Doc: v.doc, Filter: pingFilter(v.alive, v.unreach), Quiet: v.quiet}
			if err := report.Render(&b, view, f, tableOptions(&b, false)); err != nil {
				t.Fatal(err)
			}
			name := v.name + "." + ext[f]
			checkGolden(t, name, b.String())
			outs[name] = b.String()
		}
	}

	// loss = 1 − recv/sent and the p95 by hand, against the JSON document.
	var doc struct {
		Results []struct {
			Target string   `json:"target"`
			Sent   int      `json:"sent"`
			Recv   int      `json:"recv"`
			Loss   *float64 `json:"loss"`
			RTT    *struct {
				P95 float64 `json:"p95"`
			} `json:"rtt_ms"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(outs["ping.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != len(icmp) {
		t.Fatalf("%d results, want %d", len(doc.Results), len(icmp))
	}
	for i, r := range icmp {
		got := doc.Results[i]
		want := 1 - float64(r.Recv)/float64(r.Sent)
		if got.Sent != r.Sent || got.Recv != r.Recv || got.Loss == nil || !approx(*got.Loss, want) {
			t.Errorf("%s: sent %d recv %d loss %v, want loss 1-%d/%d", r.Target, got.Sent, got.Recv, got.Loss, r.Recv, r.Sent)
		}
		if len(r.RTTs) == 0 {
			if got.RTT != nil {
				t.Errorf("%s: RTT figures without a reply", r.Target)
			}
			continue
		}
		if got.RTT == nil || math.Abs(got.RTT.P95-nearestRank(r.RTTs, 95)) > 1e-9 {
			t.Errorf("%s: p95 %+v, by hand %v", r.Target, got.RTT, nearestRank(r.RTTs, 95))
		}
	}
	sent, recv := 0, 0
	for _, r := range swept {
		sent, recv = sent+r.Sent, recv+r.Recv
	}
	if want := fmt.Sprintf("127.0.0.8/30: 4 targets, 4 alive, 0 unreachable, loss %.1f%% of %d probes", 100*(1-float64(recv)/float64(sent)), sent); !strings.Contains(outs["ping-cidr-quiet.txt"], want) {
		t.Errorf("the CIDR summary does not say %q:\n%s", want, outs["ping-cidr-quiet.txt"])
	}
	if strings.TrimSpace(outs["ping-unreachable.txt"]) != "127.0.0.9\nnowhere.invalid" {
		t.Errorf("-u lists %q, want the silent target and the unresolved name", outs["ping-unreachable.txt"])
	}
}

// writeJournal writes entries as a journal in dir/name with the journal's
// own writer; each entry's Run says which writer (run) appends it.
func writeJournal(t *testing.T, dir, name, kind string, entries []journal.Entry) {
	t.Helper()
	path := filepath.Join(dir, name)
	var w *journal.Writer
	for _, e := range entries {
		if w == nil || w.Run() != e.Run {
			if w != nil {
				w.Close()
			}
			var err error
			if w, _, err = journal.Open(path, kind); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if w != nil {
		w.Close()
	}
}

// pingJournal makes a ping watch journal from the sample streams of
// hk-bgp and la: one cycle per hour of their day, ICMP, the second half
// written by a second run (a restart).
func pingJournal(t *testing.T) []journal.Entry {
	t.Helper()
	var byHour [][]journal.PingResult
	var starts []time.Time
	for ti, p := range []string{"../../samples/rec/hk-bgp-ping.ndjson", "../../samples/rec/la-ping.ndjson"} {
		h := -1
		var last time.Time
		for _, rec := range readStream(t, p) {
			if rec.Protocol != probe.ICMP {
				continue
			}
			if last.IsZero() || rec.Time.Sub(last) >= time.Hour || rec.Time.Truncate(time.Hour) != last.Truncate(time.Hour) {
				h++
				last = rec.Time
				if ti == 0 {
					byHour = append(byHour, make([]journal.PingResult, 2))
					starts = append(starts, rec.Time)
				}
			}
			r := &byHour[h][ti]
			r.Target, r.Addr, r.Protocol = rec.Target, rec.Addr, "icmp"
			r.Sent++
			if rec.Status == probe.StatusOK && rec.RTTms != nil {
				r.Recv++
				r.RTTms = append(r.RTTms, *rec.RTTms)
			}
		}
	}
	var es []journal.Entry
	for i, rs := range byHour {
		run := 1
		if i >= len(byHour)/2 {
			run = 2
		}
		for j := range rs {
			if rs[j].RTTms == nil {
				rs[j].RTTms = []float64{}
			}
		}
		es = append(es, journal.Entry{Run: run, Time: starts[i], End: starts[i].Add(55 * time.Minute), Ping: rs})
	}
	return es
}

func TestGoldenWatchReports(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	dir := t.TempDir()
	pes := pingJournal(t)
	writeJournal(t, dir, "ping.ndjson", journal.KindPing, pes)
	tr, err := route.ReadTraceFile(filepath.Join(mustAbs(t, "../../samples/rec"), "hk-bgp-forward.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tes []journal.Entry
	start := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	for i := range 24 {
		e := journal.Entry{Run: 1, Time: start.Add(time.Duration(i) * time.Hour), End: start.Add(time.Duration(i)*time.Hour + 20*time.Second), Trace: tr}
		if i%8 == 5 {
			// A cycle that could not probe: the trace names the target, nothing sent.
			e.Error = "sendto: network is unreachable"
			e.Trace = &route.Trace{Target: tr.Target, Addr: tr.Addr, Protocol: tr.Protocol, Hops: []route.Hop{}}
		}
		tes = append(tes, e)
	}
	writeJournal(t, dir, "trace.ndjson", journal.KindTrace, tes)

	pingRep := []string{"ping", "--report", "--journal", "ping.ndjson", "--report-tz", "Asia/Shanghai"}
	cases := formatCases("watch-ping", pingRep, textFormats, "summary", "hours")
	traceRep := []string{"trace", "--report", "--journal", "trace.ndjson"}
	cases = append(cases, formatCases("watch-trace", traceRep, textFormats, "summary", "hours")...)
	out := runGoldenCases(t, dir, cases)

	var rep journal.Report
	if err := json.Unmarshal([]byte(out["watch-ping.json"]), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Cycles != len(pes) || rep.Runs != 2 || len(rep.Targets) != 2 {
		t.Fatalf("report: %d cycles, %d runs, %d targets; want %d, 2, 2", rep.Cycles, rep.Runs, len(rep.Targets), len(pes))
	}
	for ti, tg := range rep.Targets {
		sent, recv, up := 0, 0, 0
		var all []float64
		hourRTT := map[int][]float64{}
		for _, e := range pes {
			p := e.Ping[ti]
			sent, recv = sent+p.Sent, recv+p.Recv
			if p.Recv > 0 {
				up++
			}
			all = append(all, p.RTTms...)
			h := e.Time.In(mustLoc(t, "Asia/Shanghai")).Hour()
			hourRTT[h] = append(hourRTT[h], p.RTTms...)
		}
		if tg.Sent != sent || tg.Recv != recv || tg.Loss == nil || !approx(*tg.Loss, 1-float64(recv)/float64(sent)) {
			t.Errorf("%s: sent %d recv %d loss %v, by hand %d, %d", tg.Target, tg.Sent, tg.Recv, tg.Loss, sent, recv)
		}
		if !approx(tg.Availability, float64(up)/float64(len(pes))) {
			t.Errorf("%s: availability %v, by hand %d/%d", tg.Target, tg.Availability, up, len(pes))
		}
		if tg.RTT == nil || tg.RTT.P95 != nearestRank(all, 95) {
			t.Errorf("%s: p95 %+v, by hand %v", tg.Target, tg.RTT, nearestRank(all, 95))
		}
		for _, h := range tg.Hours {
			if v := hourRTT[h.Hour]; len(v) > 0 && (h.P95ms == nil || *h.P95ms != nearestRank(v, 95)) {
				t.Errorf("%s hour %d: p95 %v, by hand %v", tg.Target, h.Hour, h.P95ms, nearestRank(v, 95))
			}
		}
	}
	var trep journal.Report
	if err := json.Unmarshal([]byte(out["watch-trace.json"]), &trep); err != nil {
		t.Fatal(err)
	}
	if trep.ErrorCycles != 3 || len(trep.Targets) != 1 || !approx(trep.Targets[0].Availability, 21.0/24) {
		t.Errorf("trace report: %d error cycles, targets %+v; want 3 and availability 21/24", trep.ErrorCycles, trep.Targets)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// bwResult is a made-up but consistent throughput test: intervals of one
// second at the given rates (bit/s), the figures over them as bw computes
// them (mean = bytes over the time, percentiles nearest-rank).
func bwResult(start time.Time, rates []float64) *bw.Result {
	r := &bw.Result{Schema: bw.Schema, Server: "127.0.0.1", Port: 5201, Protocol: "tcp", Direction: bw.Download,
		Streams: 1, Start: start, DurationS: float64(len(rates)), Intervals: []bw.Interval{}}
	var bytes float64
	for i, v := range rates {
		rtt := 12.5 + float64(i)/4
		rt := int64(i % 3)
		r.Intervals = append(r.Intervals, bw.Interval{StartS: float64(i), EndS: float64(i + 1), Bps: v, Retransmits: &rt, RTTms: &rtt})
		bytes += v / 8
	}
	r.Bytes = int64(bytes)
	mean := bytes * 8 / r.DurationS
	p5, p50, p95 := nearestRank(rates, 5), nearestRank(rates, 50), nearestRank(rates, 95)
	lo, hi := nearestRank(rates, 0), nearestRank(rates, 100)
	r.Throughput = bw.Throughput{Mean: &mean, P5: &p5, P50: &p50, P95: &p95, Min: &lo, Max: &hi}
	var rt int64 = 7
	r.Retransmits = &rt
	return r
}

// bwRates is hour h's test: 900 Mbit/s by day, down to 300 in the evening
// (Beijing 20:00–23:00 is 12–15 UTC), each second a little different.
func bwRates(h int) []float64 {
	var v []float64
	for s := range 5 {
		base := 900e6
		if h >= 12 && h < 16 {
			base = 300e6 + float64(h-12)*50e6
		}
		v = append(v, base+float64((s*37+h*11)%50)*1e6)
	}
	return v
}

func TestGoldenBW(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	// One test's document, through the command's writer.
	start := time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)
	res := bwResult(start, []float64{812e6, 934.5e6, 941.25e6, 938e6, 902e6, 944e6})
	udp := bwResult(start, []float64{99.5e6, 100e6, 100.25e6})
	bitrate := 100e6
	udp.Protocol, udp.BitrateBps, udp.Retransmits = "udp", &bitrate, nil
	jit, lost, loss, ooo := 0.042, int64(13), 13.0/25900, int64(2)
	udp.UDP = &bw.UDPStats{Packets: 25900, Lost: &lost, Loss: &loss, JitterMs: &jit, OutOfOrder: &ooo}
	for i := range udp.Intervals {
		udp.Intervals[i].Retransmits, udp.Intervals[i].RTTms = nil, nil
	}
	ext := map[report.Format]string{"table": "txt", "json": "json", "csv": "csv", "markdown": "md"}
	for name, r := range map[string]*bw.Result{"bw": res, "bw-udp": udp} {
		for _, f := range textFormats {
			var b bytes.Buffer
			if err := report.Render(&b, report.BWTest{Result: r}, f, report.Options{}); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name+"."+ext[f], b.String())
		}
	}

	// A day of hourly tests as a bw --watch journal, and its report.
	dir := t.TempDir()
	var es []journal.Entry
	for h := range 24 {
		at := time.Date(2026, 10, 20, h, 0, 0, 0, time.UTC)
		es = append(es, journal.Entry{Run: 1, Time: at, End: at.Add(6 * time.Second), BW: bwResult(at, bwRates(h))})
	}
	writeJournal(t, dir, "bw.ndjson", journal.KindBW, es)
	rep := []string{"bw", "--report", "--journal", "bw.ndjson", "--report-tz", "Asia/Shanghai", "--evening", "20-24", "--floor", "500M"}
	out := runGoldenCases(t, dir, formatCases("bw-report", rep, textFormats))

	// Oversell = 1 − worst hour's p50 / best hour's p50, by hand.
	worst, best := math.Inf(1), math.Inf(-1)
	var evening []float64
	for h := range 24 {
		p50 := nearestRank(bwRates(h), 50)
		worst, best = math.Min(worst, p50), math.Max(best, p50)
		if bj := (h + 8) % 24; bj >= 20 {
			evening = append(evening, bwRates(h)...)
		}
	}
	var doc journal.BWReport
	if err := json.Unmarshal([]byte(out["bw-report.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Oversell == nil || !approx(*doc.Oversell, 1-worst/best) {
		t.Errorf("oversell %v, by hand 1 − %v/%v", doc.Oversell, worst, best)
	}
	if p5 := nearestRank(evening, 5); doc.Evening.P5 == nil || *doc.Evening.P5 != p5 || doc.Verdict != "oversold" {
		t.Errorf("evening p5 %v verdict %q, by hand %v < 0.5·500M: oversold", doc.Evening.P5, doc.Verdict, p5)
	}
}

// TestGoldenBacktrace renders the sample backtrace recordings through the
// command's writer (backtrace itself only runs live), and the target list.
func TestGoldenBacktrace(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	ext := map[report.Format]string{"table": "txt", "json": "json", "csv": "csv", "markdown": "md"}
	for _, name := range []string{"hk-bgp", "hk-cn2-gia"} {
		b, err := os.ReadFile("../../samples/rec/" + name + "-backtrace.json")
		if err != nil {
			t.Fatal(err)
		}
		var doc route.BacktraceDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, f := range textFormats {
			var out bytes.Buffer
			if err := report.Render(&out, report.BacktraceReport{Doc: &doc}, f, tableOptions(&out, false)); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "backtrace-"+name+"."+ext[f], out.String())
			if f == "csv" {
				rows := readCSV(t, out.String())
				if len(rows) != len(doc.Results)+1 {
					t.Errorf("%s: %d CSV rows for %d targets", name, len(rows)-1, len(doc.Results))
				}
			}
		}
	}
	list := []string{"backtrace", "--list"}
	runGoldenCases(t, "", formatCases("backtrace-list", list, textFormats))
}

// TestGoldenGPU renders gpu's document from recorded nvidia-smi outputs
// against the sample order.
func TestGoldenGPU(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	q := "../../internal/gpu/testdata/h100-sxm5-8x/nvidia-smi-q.txt"
	args := []string{"gpu", "--text", q, "--topo", "../../internal/gpu/testdata/h100-sxm5-8x-topo/topo.txt",
		"--contract", "../../samples/gpu/order-h100-sxm5.yaml"}
	out := runGoldenCases(t, "", formatCases("gpu", args, textFormats))

	// Cards and memory by hand from the nvidia-smi text: one "Product Name"
	// per card, the memory check's figure = FB total MiB / 1024; every pair
	// of 8 cards on NVLink is 8·7/2 = 28 pairs.
	b, err := os.ReadFile(q)
	if err != nil {
		t.Fatal(err)
	}
	cards, mib := 0, 0.0
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Product Name") {
			cards++
		}
		if strings.TrimSpace(l) == "FB Memory Usage" && mib == 0 {
			_, v, _ := strings.Cut(lines[i+1], ":")
			mib, _ = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " MiB"), 64)
		}
	}
	parts := strings.SplitN(out["gpu.csv"], "\n\ncheck,", 2)
	if len(parts) != 2 {
		t.Fatalf("no checks table in the CSV:\n%s", out["gpu.csv"])
	}
	checks := readCSV(t, "check,"+parts[1])[1:]
	want := map[string]string{"count": strconv.Itoa(cards), "memory_gib": strconv.FormatFloat(mib/1024, 'f', 2, 64), "interconnect": "nvlink-all-pairs"}
	seen := 0
	for _, r := range checks {
		if w, ok := want[r[0]]; ok {
			seen++
			if r[2] != w {
				t.Errorf("check %s measured %q, by hand %q", r[0], r[2], w)
			}
		}
	}
	if seen != len(want) || cards != 8 || !strings.Contains(out["gpu.txt"], "28 pairs NV18") {
		t.Errorf("checks %v; %d cards by hand; want 28 NVLink pairs in:\n%s", checks, cards, out["gpu.txt"])
	}
}
