package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
)

func pingEntry(t0 time.Time, sent, recv int, rtts ...float64) Entry {
	return Entry{Time: t0, End: t0.Add(10 * time.Second), Ping: []PingResult{{
		Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: "icmp", Sent: sent, Recv: recv, RTTms: rtts}}}
}

func TestAppendNumbersCyclesAndResumeContinuesThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.ndjson")
	w, rec, err := Open(path, KindPing)
	if err != nil {
		t.Fatal(err)
	}
	if rec.LastCycle != 0 || rec.Entries != 0 || w.Run() != 1 {
		t.Fatalf("new journal: %+v run %d", rec, w.Run())
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		n, err := w.Append(pingEntry(t0.Add(time.Duration(i)*time.Minute), 10, 10, 1))
		if err != nil || n != i+1 {
			t.Fatalf("append %d: cycle %d, %v", i, n, err)
		}
	}
	w.Close()

	w, rec, err = Open(path, KindPing)
	if err != nil {
		t.Fatal(err)
	}
	if rec.LastCycle != 3 || rec.Entries != 3 || rec.Torn || w.Run() != 2 {
		t.Fatalf("resume: %+v run %d", rec, w.Run())
	}
	if n, err := w.Append(pingEntry(t0.Add(time.Hour), 10, 9, 1)); err != nil || n != 4 {
		t.Fatalf("append after resume: cycle %d, %v", n, err)
	}
	w.Close()
	es, info, err := Read(path)
	if err != nil || info.Torn {
		t.Fatalf("read: %v %+v", err, info)
	}
	var cycles, runs []int
	for _, e := range es {
		cycles = append(cycles, e.Cycle)
		runs = append(runs, e.Run)
	}
	if fmtInts(cycles) != "[1 2 3 4]" {
		t.Errorf("cycles %v, want 1,2,3,4", cycles)
	}
	if fmtInts(runs) != "[1 1 1 2]" {
		t.Errorf("runs %v, want [1 1 1 2]", runs)
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestTornLastLineIsDroppedReportedAndCutOnResume(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail string // appended after two good lines
	}{
		{"half a JSON object, no newline", `{"schema":"linecheck.journal/v1","kind":"ping","cyc`},
		{"garbage with a newline", "{\"schema\":\"linecheck.jour\x00\x00\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.ndjson")
			w, _, err := Open(path, KindPing)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			w.Append(pingEntry(t0, 1, 1, 1))
			w.Append(pingEntry(t0, 1, 1, 1))
			w.Close()
			good, _ := os.Stat(path)
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(tc.tail)
			f.Close()

			es, info, err := Read(path)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if len(es) != 2 || !info.Torn || info.TornLine != 3 || info.TornBytes != len(tc.tail) {
				t.Fatalf("read: %d entries, %+v", len(es), info)
			}
			w, rec, err := Open(path, KindPing)
			if err != nil {
				t.Fatal(err)
			}
			if !rec.Torn || rec.LastCycle != 2 || rec.TornLine != 3 {
				t.Fatalf("recovery %+v", rec)
			}
			if st, _ := os.Stat(path); st.Size() != good.Size() {
				t.Fatalf("size after resume %d, want %d (torn line cut)", st.Size(), good.Size())
			}
			if n, err := w.Append(pingEntry(t0, 1, 1, 1)); err != nil || n != 3 {
				t.Fatalf("append: %d %v", n, err)
			}
			w.Close()
			es, info, err = Read(path)
			if err != nil || info.Torn || len(es) != 3 {
				t.Fatalf("after resume: %d entries, %+v, %v", len(es), info, err)
			}
		})
	}
}

// A crash after the write of a whole entry but before its newline reached the
// disk loses nothing: the entry is kept, and resuming ends the line before the
// next cycle is appended.
func TestWholeLastEntryWithoutItsNewlineIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.ndjson")
	w, _, err := Open(path, KindPing)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	w.Append(pingEntry(t0, 1, 1, 1))
	w.Append(pingEntry(t0, 4, 3, 1, 2, 3))
	w.Close()
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)-1], 0o644); err != nil { // drop the final newline
		t.Fatal(err)
	}
	es, info, err := Read(path)
	if err != nil || info.Torn || len(es) != 2 || es[1].Ping[0].Sent != 4 {
		t.Fatalf("read: %d entries, %+v, %v", len(es), info, err)
	}
	w, rec, err := Open(path, KindPing)
	if err != nil || rec.Torn || rec.LastCycle != 2 || rec.Entries != 2 {
		t.Fatalf("resume: %+v %v", rec, err)
	}
	if n, err := w.Append(pingEntry(t0, 1, 1, 1)); err != nil || n != 3 {
		t.Fatalf("append: %d %v", n, err)
	}
	w.Close()
	es, info, err = Read(path)
	if err != nil || info.Torn || info.Unterminated || len(es) != 3 {
		t.Fatalf("after resume: %d entries, %+v, %v", len(es), info, err)
	}
}

// Counts and times no probe can produce are refused on read, naming the line:
// they once gave a loss of -515 % in --report. The last line is no exception
// (an impossible entry is whole JSON, not a torn write).
func TestImpossibleEntriesAreRefusedWithTheirLine(t *testing.T) {
	line := func(cycle int, ping string) string {
		return `{"schema":"linecheck.journal/v1","kind":"ping","cycle":` + strconv.Itoa(cycle) +
			`,"run":1,"time":"2026-11-01T00:00:00Z","ping":[` + ping + `]}` + "\n"
	}
	ok := `{"target":"a","addr":"a","protocol":"icmp","sent":2,"recv":1,"late":0,"duplicates":0,"rtt_ms":[1.5]}`
	for _, tc := range []struct{ name, ping, want string }{
		{"negative sent", `{"target":"a","sent":-1,"recv":0,"rtt_ms":[]}`, "negative count"},
		{"negative recv", `{"target":"a","sent":1,"recv":-3,"rtt_ms":[]}`, "negative count"},
		{"recv above sent", `{"target":"a","sent":2,"recv":13,"rtt_ms":[1,1]}`, "recv 13 is more than sent 2"},
		{"huge RTT", `{"target":"a","sent":1,"recv":1,"rtt_ms":[1e308]}`, "RTT 1e+308 ms is not a round trip"},
		{"more RTTs than replies", `{"target":"a","sent":3,"recv":1,"rtt_ms":[1,2,3]}`, "3 RTTs for 1 replies"},
	} {
		for _, last := range []bool{false, true} {
			text := line(1, ok) + line(2, tc.ping)
			if !last {
				text += line(3, ok)
			}
			_, _, err := Decode(strings.NewReader(text), "j")
			if err == nil || !strings.Contains(err.Error(), "j:2: impossible entry") || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "--journal") {
				t.Errorf("%s (last %v): err %v, want j:2 and %q", tc.name, last, err, tc.want)
			}
		}
	}
	// NaN cannot even be written in JSON: it is no journal line either.
	if _, _, err := Decode(strings.NewReader(line(1, `{"target":"a","sent":1,"recv":1,"rtt_ms":[NaN]}`)+line(2, ok)), "j"); err == nil ||
		!strings.Contains(err.Error(), "j:1:") {
		t.Errorf("NaN RTT: %v", err)
	}
	// Resuming such a journal is refused too, before anything is appended.
	path := filepath.Join(t.TempDir(), "w.ndjson")
	os.WriteFile(path, []byte(line(1, ok)+line(2, `{"target":"a","sent":-5,"recv":0,"rtt_ms":[]}`)), 0o644)
	if _, _, err := Open(path, KindPing); err == nil || !strings.Contains(err.Error(), path+":2: impossible entry") {
		t.Errorf("open: %v", err)
	}
	// A real cycle stays accepted.
	if es, _, err := Decode(strings.NewReader(line(1, ok)), "j"); err != nil || len(es) != 1 {
		t.Errorf("good line: %v", err)
	}
}

func TestBadLineBeforeTheEndIsAnErrorWithItsLine(t *testing.T) {
	good := `{"schema":"linecheck.journal/v1","kind":"ping","cycle":1,"run":1,"time":"2026-11-01T00:00:00Z"}`
	for _, tc := range []struct{ name, text, want string }{
		{"garbage in the middle", good + "\nnot json\n" + strings.Replace(good, `"cycle":1`, `"cycle":2`, 1) + "\n", "j:2: not a journal line"},
		{"wrong schema", strings.Replace(good, "journal/v1", "probe/v1", 1) + "\n" + good + "\n", `j:1: not a journal line: schema "linecheck.probe/v1"`},
		// A crash cuts a line short, and a cut-short line is never whole JSON:
		// a last line that is whole JSON of something else is another file, not torn.
		{"another file's JSON as the only line", `{"vnstatversion":"2.10","interfaces":[]}`, `j:1: not a journal line: schema ""`},
		{"another document as the last line", good + "\n" + strings.Replace(good, "journal/v1", "probe/v1", 1) + "\n", `j:2: not a journal line: schema "linecheck.probe/v1"`},
		{"cycles going back", good + "\n" + good + "\n" + good + "\n", "j:2: cycle: 1 after 1"},
		{"trace line without trace", strings.Replace(good, `"ping"`, `"trace"`, 1) + "\n" + good + "\n", "j:1: trace: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Decode(strings.NewReader(tc.text), "j")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestOpenRefusesAJournalOfAnotherKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.ndjson")
	w, _, _ := Open(path, KindPing)
	w.Append(pingEntry(time.Unix(0, 0), 1, 1, 1))
	w.Close()
	if _, _, err := Open(path, KindTrace); err == nil || !strings.Contains(err.Error(), "holds ping cycles, not trace") {
		t.Fatalf("err %v", err)
	}
}

// The expected figures below are worked out by hand from the entries.
func TestSummarizeHourlyProfileAndAvailability(t *testing.T) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	var es []Entry
	add := func(at time.Time, sent, recv int, rtts ...float64) {
		e := pingEntry(at, sent, recv, rtts...)
		e.Kind, e.Cycle, e.Run = KindPing, len(es)+1, 1
		es = append(es, e)
	}
	// 03:00 UTC, two days: quiet line, 10 ms, no loss.
	add(day.Add(3*time.Hour), 4, 4, 10, 10, 10, 11)
	add(day.Add(27*time.Hour), 4, 4, 10, 10, 12, 10)
	// 20:00 UTC: evening peak: 25 % loss, RTTs 40..80, and a cycle with nothing back.
	add(day.Add(20*time.Hour), 4, 3, 40, 60, 80)
	add(day.Add(20*time.Hour+time.Minute), 4, 0)
	r := Summarize(es, ReadInfo{}, "w.ndjson", time.UTC)
	if r.Cycles != 4 || len(r.Targets) != 1 {
		t.Fatalf("report %+v", r)
	}
	tg := r.Targets[0]
	// availability: 3 of 4 cycles answered; loss 1 − 15/16.
	if tg.Availability != 0.75 || tg.Sent != 16 || tg.Recv != 11 || *tg.Loss != 1-11.0/16 {
		t.Errorf("target: avail %v sent %d recv %d loss %v", tg.Availability, tg.Sent, tg.Recv, *tg.Loss)
	}
	if len(tg.Hours) != 2 || tg.Hours[0].Hour != 3 || tg.Hours[1].Hour != 20 {
		t.Fatalf("hours %+v", tg.Hours)
	}
	h3, h20 := tg.Hours[0], tg.Hours[1]
	// 03:00 RTTs sorted 10,10,10,10,10,10,11,12: p50 rank 4 → 10, p95 rank 8 → 12.
	if *h3.Loss != 0 || *h3.P50ms != 10 || *h3.P95ms != 12 || h3.Availability != 1 || h3.Cycles != 2 {
		t.Errorf("03h %+v", h3)
	}
	// 20:00: sent 8 recv 3; RTTs 40,60,80: p50 rank 2 → 60, p95 rank 3 → 80.
	if *h20.Loss != 1-3.0/8 || *h20.P50ms != 60 || *h20.P95ms != 80 || h20.Availability != 0.5 {
		t.Errorf("20h %+v", h20)
	}
	// In UTC+8 the 20:00 UTC cycles fall at 04:00 local.
	r8 := Summarize(es, ReadInfo{}, "w", time.FixedZone("CST", 8*3600))
	if hs := r8.Targets[0].Hours; hs[0].Hour != 4 || hs[1].Hour != 11 {
		t.Errorf("UTC+8 hours %+v", hs)
	}
}

func TestSummarizeTraceUsesTheDestinationEntry(t *testing.T) {
	mk := func(reached bool, rtt float64) Entry {
		tr := &route.Trace{Schema: route.TraceSchema, Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: "icmp",
			Reached: reached, Hops: []route.Hop{{TTL: 1, Sent: 1, Responders: []route.Responder{{Addr: "127.0.0.1", Recv: 1,
				RTT: stats.RTTStats{Avg: rtt, Min: rtt}}}}}}
		if !reached {
			tr.Hops[0].Responders = []route.Responder{}
			tr.Hops[0].Loss = 1
		}
		return Entry{Kind: KindTrace, Time: time.Unix(3600, 0), Trace: tr}
	}
	r := Summarize([]Entry{mk(true, 2), mk(false, 0), mk(true, 4)}, ReadInfo{}, "t", nil)
	tg := r.Targets[0]
	if tg.Cycles != 3 || tg.UpCycles != 2 || tg.Sent != 3 || tg.Recv != 2 || tg.RTT.Max != 4 || tg.RTT.Min != 2 {
		t.Fatalf("%+v", tg)
	}
}

// A cycle that could not probe at all is down for its targets and adds no probes.
func TestSummarizeCountsFailedCyclesAsDown(t *testing.T) {
	ok := pingEntry(time.Unix(0, 0), 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	ok.Kind = KindPing
	failed := pingEntry(time.Unix(60, 0), 0, 0)
	failed.Kind, failed.Error = KindPing, "sendto: network is unreachable"
	r := Summarize([]Entry{ok, failed}, ReadInfo{}, "j", nil)
	tg := r.Targets[0]
	if r.ErrorCycles != 1 || tg.Cycles != 2 || tg.UpCycles != 1 || tg.Availability != 0.5 || tg.Sent != 10 || *tg.Loss != 0 {
		t.Fatalf("report %+v target %+v", r, tg)
	}
	// The line round-trips through the journal.
	path := filepath.Join(t.TempDir(), "j")
	w, _, _ := Open(path, KindPing)
	w.Append(ok)
	w.Append(failed)
	w.Close()
	es, _, err := Read(path)
	if err != nil || len(es) != 2 || es[1].Error == "" {
		t.Fatalf("%v %+v", err, es)
	}
}

// A target whose every cycle failed sent nothing: its loss is absent (null in
// JSON), not 0 %, while its availability is a real 0.
func TestLossWithoutProbesIsAbsent(t *testing.T) {
	failed := pingEntry(time.Unix(0, 0), 0, 0)
	failed.Kind, failed.Error = KindPing, "sendto: network is unreachable"
	r := Summarize([]Entry{failed}, ReadInfo{}, "j", nil)
	tg := r.Targets[0]
	if tg.Loss != nil || tg.Hours[0].Loss != nil || tg.Availability != 0 || tg.RTT != nil {
		t.Fatalf("target %+v", tg)
	}
	b, _ := json.Marshal(tg)
	if !strings.Contains(string(b), `"loss":null`) || strings.Contains(string(b), `"loss":0`) {
		t.Fatalf("json %s", b)
	}
}

// Issue 35: ping sweeps once wrote RTTs below zero (a send time spread over
// its sendmmsg call fell after the reply's kernel stamp), and ping --watch
// then refused its own journal as impossible: it could neither resume nor
// report. Such RTTs are the writer's clock fault: the line is kept with a
// warning naming the file and line, the replies still count as received,
// and the RTT is left out of every figure.
func TestNegativeRTTsAreLeftOutWithAWarning(t *testing.T) {
	line := func(cycle int, ping string) string {
		return `{"schema":"linecheck.journal/v1","kind":"ping","cycle":` + strconv.Itoa(cycle) +
			`,"run":1,"time":"2026-11-01T00:00:00Z","end":"2026-11-01T00:00:01Z","ping":[` + ping + `]}` + "\n"
	}
	ok := `{"target":"a","addr":"127.0.0.1","protocol":"icmp","sent":2,"recv":2,"late":0,"duplicates":0,"rtt_ms":[1,3]}`
	neg := `{"target":"a","addr":"127.0.0.1","protocol":"icmp","sent":3,"recv":3,"late":0,"duplicates":0,"rtt_ms":[-0.002,2,-20.8]}`
	path := filepath.Join(t.TempDir(), "w.ndjson")
	if err := os.WriteFile(path, []byte(line(1, ok)+line(2, neg)), 0o644); err != nil {
		t.Fatal(err)
	}
	es, info, err := Read(path)
	if err != nil || len(es) != 2 {
		t.Fatalf("read: %d entries, %v", len(es), err)
	}
	if len(info.Warnings) != 1 || !strings.HasPrefix(info.Warnings[0], path+":2: ") || !strings.Contains(info.Warnings[0], "2 RTTs below zero") {
		t.Errorf("warnings %q: want one for %s:2 naming 2 RTTs", info.Warnings, path)
	}
	if g := es[1].Ping[0]; g.Recv != 3 || !slices.Equal(g.RTTms, []float64{2}) {
		t.Errorf("cycle 2: recv %d, RTTs %v: want 3 and [2]", g.Recv, g.RTTms)
	}
	// Reported: 5 replies of 5 probes; RTTs 1, 3 and 2, nothing below zero.
	r := Summarize(es, info, path, nil)
	if len(r.Targets) != 1 || r.Targets[0].Recv != 5 || r.Targets[0].RTT == nil || r.Targets[0].RTT.Min != 1 || r.Targets[0].RTT.Max != 3 {
		t.Errorf("report %+v", r.Targets)
	}
	// Resumed: the warning again, and the next cycle appended as cycle 3.
	w, rec, err := Open(path, KindPing)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if len(rec.Warnings) != 1 || !strings.HasPrefix(rec.Warnings[0], path+":2: ") || rec.LastCycle != 2 {
		t.Errorf("resume: %+v", rec)
	}
	if n, err := w.Append(pingEntry(time.Date(2026, 11, 1, 0, 0, 2, 0, time.UTC), 1, 1, 1)); err != nil || n != 3 {
		t.Errorf("append: %d %v", n, err)
	}
	w.Close()
}

// A trace cycle with a sample below zero keeps its other samples, and its
// responder's figures are taken anew from them (1 and 3: min 1, max 3).
func TestTraceSamplesBelowZeroAreLeftOut(t *testing.T) {
	tr := &route.Trace{Schema: route.TraceSchema, Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: "icmp", Reached: true,
		Hops: []route.Hop{{TTL: 1, Sent: 3, Responders: []route.Responder{{Addr: "127.0.0.1", Recv: 3,
			RTT: stats.RTTStats{Min: -0.5, Avg: 1.17, Max: 3}, Samples: []float64{1, -0.5, 3}}}}}}
	b, err := json.Marshal(Entry{Schema: Schema, Kind: KindTrace, Cycle: 1, Run: 1, Time: time.Unix(3600, 0), Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	es, info, err := Decode(strings.NewReader(string(b)+"\n"), "t")
	if err != nil || len(es) != 1 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	r := es[0].Trace.Hops[0].Responders[0]
	if !slices.Equal(r.Samples, []float64{1, 3}) || r.RTT.Min != 1 || r.RTT.Max != 3 || r.RTT.Avg != 2 {
		t.Errorf("responder %+v", r)
	}
	if len(info.Warnings) != 1 || !strings.HasPrefix(info.Warnings[0], "t:1: cycle 1: trace hop ttl 1") {
		t.Errorf("warnings %q", info.Warnings)
	}
}
