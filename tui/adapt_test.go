package tui

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
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
	f, err := compare.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Run(context.Background(), f, compare.Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	snap := feed.Snapshot
	if len(snap.Candidates) != len(res.Candidates) || snap.Traffic == nil || len(feed.Streams) != len(res.Candidates) {
		t.Fatalf("snapshot: %d candidates (compare %d), traffic %v, %d streams",
			len(snap.Candidates), len(res.Candidates), snap.Traffic != nil, len(feed.Streams))
	}
	byName := map[string]*compare.Evaluation{}
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
		if c.Cost.Total.Amount != e.Monthly.Total || c.Cost.Total.Currency != e.Monthly.Currency {
			t.Errorf("%s: total %s %s, compare says %s %s", c.Name, c.Cost.Total.Amount, c.Cost.Total.Currency, e.Monthly.Total, e.Monthly.Currency)
		}
		if c.Cost.TotalBase.Amount != e.Monthly.Converted.Amount {
			t.Errorf("%s: converted %s, compare says %s", c.Name, c.Cost.TotalBase.Amount, e.Monthly.Converted.Amount)
		}
		if c.LineClass != e.Route.LineClass || c.SLA.Pass != e.SLA.Pass || c.Summary.P95 != e.Route.RTT.P95 {
			t.Errorf("%s: class %s pass %v p95 %v; compare %s %v %v", c.Name, c.LineClass, c.SLA.Pass, c.Summary.P95,
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
		if d.Total.Float() < b.Total.Float() {
			t.Errorf("%s: ×2 traffic costs %s < %s", name, d.Total.Amount, b.Total.Amount)
		}
		if d.Total.Amount != b.Total.Amount {
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
