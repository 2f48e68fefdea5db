package tui

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

const samplesFile = "../samples/candidates.yaml"

func TestFeedFromSamplesMatchesCompare(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	feed, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, Speed: 300, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Run(context.Background(), f, compare.Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	snap := feed.Snapshot
	m := NewLoaded(context.Background(), feed, snap, Options{Width: 100, Height: 30, NoColor: true})
	if len(snap.Candidates) != len(res.Candidates) || snap.Traffic == nil || len(feed.Streams) != len(res.Candidates) {
		t.Fatalf("snapshot: %d candidates (compare %d), traffic %v, %d streams",
			len(snap.Candidates), len(res.Candidates), snap.Traffic != nil, len(feed.Streams))
	}
	byName := map[string]*verdict.Evaluation{}
	for _, e := range res.Candidates {
		byName[e.Name] = e
	}
	for _, c := range snap.Candidates {
		e := byName[c.Name]
		if e == nil {
			t.Fatalf("%s not in compare's result", c.Name)
		}
		// The TUI re-bills the traffic itself (to change the rules on a key);
		// with the offers' own rules it must agree with compare to the cent.
		if c.Cost.Total.Text() != e.Monthly.Total || c.Cost.Total.Currency != e.Monthly.Currency {
			t.Errorf("%s: total %s %s, compare says %s %s", c.Name, c.Cost.Total.Text(), c.Cost.Total.Currency, e.Monthly.Total, e.Monthly.Currency)
		}
		if c.Cost.TotalBase.Text() != e.Monthly.Converted.Text() {
			t.Errorf("%s: converted %s, compare says %s", c.Name, c.Cost.TotalBase.Text(), e.Monthly.Converted.Text())
		}
		mc := m.Candidate(c.Name)
		if mc.LineClass != e.Route.LineClass || mc.SLA.Pass != e.SLA.Pass || mc.view().P95 != e.Route.RTT.P95 {
			t.Errorf("%s: class %s pass %v p95 %v; compare %s %v %v", c.Name, mc.LineClass, mc.SLA.Pass, mc.view().P95,
				e.Route.LineClass, e.SLA.Pass, e.Route.RTT.P95)
		}
	}
	// Doubling the traffic cannot make a 95th or per-GB bill cheaper, and must
	// change at least one.
	base, err := feed.CostFunc(DefaultCostOptions())
	if err != nil {
		t.Fatal(err)
	}
	doubled, err := feed.CostFunc(CostOptions{Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for name, b := range base {
		d := doubled[name]
		if amountFloat(d.Total) < amountFloat(b.Total) {
			t.Errorf("%s: ×2 traffic costs %s < %s", name, d.Total.Text(), b.Total.Text())
		}
		if d.Total.Text() != b.Total.Text() {
			changed = true
		}
	}
	if !changed {
		t.Error("scaling the traffic ×2 changed no bill")
	}
}

func TestLiveRefusedForRecordedOnly(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	if _, err := FeedFromFile(samplesFile, FeedOptions{}); err == nil {
		t.Fatal("a live feed was built for the recorded_only samples")
	}
}

// TestTUIAndCompareAgreeCheckByCheck feeds the TUI the bundled recordings
// as probe records and traces (its statistics start empty: the recording's
// summary is removed) and checks that every candidate's SLA verdict equals
// compare's on the same recordings, check by check: name, pass, measured
// value and note.
func TestTUIAndCompareAgreeCheckByCheck(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	feed, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Run(context.Background(), f, compare.Options{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	snap := feed.Snapshot
	snap.Candidates = append([]Candidate(nil), snap.Candidates...)
	for i := range snap.Candidates {
		c := &snap.Candidates[i]
		c.Recorded, c.LineClass, c.Direction = verdict.RouteQuality{}, "", ""
	}
	m := NewLoaded(context.Background(), nil, snap, Options{Width: 100, Height: 30, NoColor: true})
	// Before any record, every check of every candidate fails for want of
	// data, as compare's do on a candidate that was never measured.
	for _, c := range snap.Candidates {
		for _, ch := range m.Candidate(c.Name).SLA.Checks {
			if ch.Pass && ch.Name != verdict.CheckLineClass {
				t.Errorf("%s: %s passes without data", c.Name, ch.Name)
			}
		}
	}
	var msgs UpdatesMsg
	for _, tr := range feed.Traces {
		msgs = append(msgs, tr)
	}
	for name, recs := range feed.Streams {
		for _, r := range recs {
			msgs = append(msgs, ProbeMsg{Candidate: name, Record: r})
		}
	}
	m = step(t, m, msgs)
	for _, e := range res.Candidates {
		got := m.Candidate(e.Name).SLA
		if got.Pass != e.SLA.Pass || len(got.Checks) != len(e.SLA.Checks) {
			t.Errorf("%s: TUI pass %v with %d checks, compare %v with %d", e.Name, got.Pass, len(got.Checks), e.SLA.Pass, len(e.SLA.Checks))
			continue
		}
		for i, want := range e.SLA.Checks {
			g := got.Checks[i]
			if g.Name != want.Name || g.Pass != want.Pass || g.Note != want.Note || !reflect.DeepEqual(g.Measured, want.Measured) {
				t.Errorf("%s: check %s: TUI %+v, compare %+v", e.Name, want.Name, g, want)
			}
		}
	}
}

// TestCostViewNeverMarksAnOfferThatCannotCarry scales the bundled traffic
// until its 95th exceeds the 1000 Mbps ports (the sample's 95th is about
// 400 Mbps: ×4 passes 1000): those offers are flagged as unable to carry the
// traffic, with the reason, and never marked cheapest or as the cheapest
// SLA pass.
func TestCostViewNeverMarksAnOfferThatCannotCarry(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	feed, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	costs, err := feed.CostFunc(CostOptions{Scale: 4})
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 120, Height: 40, NoColor: true})
	m = step(t, m, CostMsg{Opts: m.costOpts, Costs: costs})
	for name, c := range costs {
		for _, s := range c.Schemes {
			if !s.CannotCarry {
				continue
			}
			flagged++
			if cheapestScheme(c) == s.Scheme {
				t.Errorf("%s: %s cannot carry the traffic but is marked cheapest", name, s.Offer)
			}
			if !strings.Contains(s.Carry, "cannot carry the traffic") {
				t.Errorf("%s: %s flagged without the reason: %q", name, s.Offer, s.Carry)
			}
			if s.Offered && m.cheapestPassing() == name {
				t.Errorf("%s: its offer cannot carry the traffic, yet it is the cheapest SLA pass", name)
			}
		}
	}
	if flagged == 0 {
		t.Fatal("no offer is flagged at ×4: the test proves nothing")
	}
	m.selected, m.moved = "hk-cn2-gia", true
	frame := plain(press(t, m, "c"))
	if !strings.Contains(frame, "!") || !strings.Contains(frame, "cannot carry") {
		t.Errorf("the cost view does not flag the offers that cannot carry the traffic:\n%s", frame)
	}
}

// TestFileWithTargetsOnly: offers, traffic, sla, vantage and regions are
// optional for the TUI (compare's strict loader still checks every key):
// the rows show route quality, the costs are absent, not zero.
func TestFileWithTargetsOnly(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/bare.yaml"
	if err := os.WriteFile(path, []byte("candidates:\n  - name: lo\n    targets: [{addr: 127.0.0.1, protocol: icmp}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	feed, err := FeedFromFile(path, FeedOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := feed.Snapshot.Candidates[0]; c.Cost.Total.Valid() || feed.CostFunc != nil {
		t.Errorf("a file without offers was priced: %+v", c.Cost)
	}
	m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 100, Height: 30, NoColor: true})
	if f := plain(m); !strings.Contains(f, "SLA - (the candidates file sets no thresholds)") || !strings.Contains(f, "Cost -") {
		t.Errorf("frame:\n%s", f)
	}
	// The SLA column says the same: absent ("-"), not pending ("…").
	if cell := overviewCell(t, plain(m), "lo", "SLA"); cell != "-" {
		t.Errorf("SLA cell of a file without thresholds = %q, want -", cell)
	}
	// A typo is still refused with its line, as compare refuses it.
	if err := os.WriteFile(path, []byte("candidates:\n  - name: lo\n    targets: [{addr: 127.0.0.1, protocl: tcp}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FeedFromFile(path, FeedOptions{Offline: true}); err == nil || !strings.Contains(err.Error(), "bare.yaml:3") {
		t.Errorf("typo protocl: %v", err)
	}
}

// overviewCell returns the overview's cell of the row named row under the
// column titled col, by the column's position in the header line.
func overviewCell(t *testing.T, frame, row, col string) string {
	t.Helper()
	lines := strings.Split(frame, "\n")
	for i, ln := range lines {
		at := strings.Index(ln, " "+col+" ")
		if at < 0 || !strings.Contains(ln, "CANDIDATE") {
			continue
		}
		at = len([]rune(ln[:at+1]))
		for _, r := range lines[i+1:] {
			rr := []rune(r)
			f := strings.Fields(string(rr[min(2, len(rr)):]))
			if len(f) == 0 || f[0] != row || len(rr) <= at {
				continue
			}
			end := at
			for end < len(rr) && rr[end] != ' ' {
				end++
			}
			return string(rr[at:end])
		}
	}
	t.Fatalf("no row %q under column %q in:\n%s", row, col, frame)
	return ""
}
