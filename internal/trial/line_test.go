package trial

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// The throughput server on 127.0.0.1 serves a test from this process's
// client for its duration; the test is journalled as it ends, the bundle's
// manifest is rewritten while the server still serves (listing the
// journal), and the part records the journal for compare's recorded.bw.
func TestLinePartServesAndJournalsAThroughputTest(t *testing.T) {
	b := newBundle(t)
	addrs := make(chan net.Addr, 1)
	o := &Options{Line: Line{Listen: "127.0.0.1:0", Duration: 4 * time.Second, SyncEvery: 200 * time.Millisecond,
		OnListen: func(a net.Addr) { addrs <- a }}}
	type outcome struct {
		res      *bw.Result
		err      error
		midwayOK bool
	}
	got := make(chan outcome, 1)
	go func() {
		a := (<-addrs).(*net.TCPAddr)
		res, err := bw.Run(t.Context(), "127.0.0.1", bw.Config{Port: a.Port, Duration: time.Second})
		// The server still serves (4 s): the manifest rewritten meanwhile
		// lists the journal with the test in it.
		ok := false
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !ok; time.Sleep(50 * time.Millisecond) {
			if m, err := ReadManifest(b.Dir); err == nil {
				for _, f := range m.Files {
					ok = ok || (f.Path == "line/bw.journal" && f.Bytes > 0)
				}
			}
		}
		got <- outcome{res, err, ok}
	}()
	p := runLine(t.Context(), b, o)
	out := <-got
	if out.err != nil {
		t.Fatal(out.err)
	}
	if !out.midwayOK {
		t.Error("no manifest listing the journal while the server served")
	}
	if p.Status != StatusRan || p.Reason != "backtrace not run (no --targets FILE)" || strings.Join(p.Files, ",") != "line/bw.journal" ||
		!strings.Contains(strings.Join(p.Lines, "\n"), "1 tests served, 0 failed") {
		t.Errorf("%+v", p)
	}
	if b.manifest.Line.BWJournal != "line/bw.journal" || b.manifest.Line.Backtrace != "" {
		t.Errorf("manifest line %+v", b.manifest.Line)
	}
	es, _, err := journal.Read(filepath.Join(b.Dir, "line", "bw.journal"))
	if err != nil || len(es) != 1 || es[0].Kind != journal.KindBW || es[0].BW == nil || es[0].Error != "" {
		t.Fatalf("%+v %v", es, err)
	}
	// The server's record and the client's are of the same bytes: each
	// side counts what crossed the socket, so the two agree to a few percent.
	if s, c := es[0].BW.Throughput.Mean, out.res.Throughput.Mean; s == nil || c == nil || *s <= 0 || *s < *c*0.9 || *s > *c*1.1 {
		t.Errorf("server mean %v, client mean %v", s, c)
	}
}

// Nothing asked of the line part: not checked, saying why.
func TestLinePartNotAsked(t *testing.T) {
	p := runLine(t.Context(), newBundle(t), &Options{})
	if p.Status != StatusNotChecked || p.Reason != "backtrace not run (no --targets FILE); throughput server not run (no --listen)" {
		t.Errorf("%+v", p)
	}
}

// Stopped while serving: the part is interrupted, the journal kept.
func TestLinePartInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	b := newBundle(t)
	p := runLine(ctx, b, &Options{Line: Line{Listen: "127.0.0.1:0", Duration: time.Hour}})
	if p.Status != StatusInterrupted || !strings.Contains(p.Reason, "stopped before its 1h0m0s") || strings.Join(p.Files, ",") != "line/bw.journal" {
		t.Errorf("%+v", p)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "line", "bw.journal")); err != nil {
		t.Error(err)
	}
}

// The backtrace toward a target on loopback (raw ICMP sockets: root). The
// document is what `linecheck backtrace --format json` writes: route's
// reader for recorded.return reads it back, with 127.0.0.1 reached.
func TestLinePartBacktraceOnLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the backtrace sends ICMP through raw sockets: run as root (CI does)")
	}
	b := newBundle(t)
	o := &Options{Line: Line{
		Targets:     []route.BacktraceTarget{{Name: "loopback", Carrier: "telecom", City: "here", Addr: "127.0.0.1"}},
		TargetsFrom: "targets.yaml", Vantage: "trial-test",
		Trace: probe.TraceConfig{Proto: probe.ICMP, MaxTTL: 4, Cycles: 2, Interval: 20 * time.Millisecond, Timeout: time.Second},
		Rate:  100,
	}}
	p := runLine(t.Context(), b, o)
	if p.Status != StatusRan || strings.Join(p.Files, ",") != "line/backtrace.json" || b.manifest.Line.Backtrace != "line/backtrace.json" ||
		!strings.Contains(strings.Join(p.Lines, "\n"), "backtrace: 1 of 1 targets of targets.yaml traced") {
		t.Fatalf("%+v", p)
	}
	doc, err := route.ReadBacktraceFile(filepath.Join(b.Dir, "line", "backtrace.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Results[0]
	if doc.Vantage != "trial-test" || r.Trace == nil || len(r.Trace.Hops) != 1 || r.Trace.Hops[0].Responders[0].Addr != "127.0.0.1" {
		t.Errorf("%+v", doc)
	}
}

// A port already taken: the part is an error naming --listen, and no
// journal is left behind.
func TestLinePartListenRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b := newBundle(t)
	p := runLine(t.Context(), b, &Options{Line: Line{Listen: ln.Addr().String(), Duration: time.Second}})
	if p.Status != StatusError || !strings.HasPrefix(p.Reason, "throughput server: --listen "+ln.Addr().String()+": ") || len(p.Files) != 0 {
		t.Errorf("%+v", p)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "line", "bw.journal")); err == nil {
		t.Error("a journal was left for a server that never listened")
	}
}
