package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

func TestStepUsage(t *testing.T) {
	for _, c := range []struct {
		cur  float64
		d    int
		want float64
	}{{300, 1, 400}, {300, -1, 200}, {250, 1, 300}, {250, -1, 200}, {0, -1, 0}, {700, 1, 744}, {744, 1, 744}, {744, -1, 700}, {0, 1, 100}} {
		if got := stepUsage(c.cur, 744, c.d); got != c.want {
			t.Errorf("stepUsage(%v, 744, %d) = %v, want %v", c.cur, c.d, got, c.want)
		}
	}
}

// The u key on the bundled scenario: from the offers file's 300 h to 400 h,
// every candidate re-priced at once. By hand: hk-bgp's what-if gpu-spot =
// 15000 port + 2800 storage + 200 IPs + 400 h × 8 cards × 1.15 × 5 = 36400
// CNY; hk-bgp's own bill (8 cards × 19.50 per card-hour, billed at the used
// hours) goes from 9000 + 46800 + 3000 = 58800 (24.50 per used GPU-hour) to
// 9000 + 8 × 400 × 19.50 + 3000 = 74400, i.e. 74400 / 400 / 8 = 23.25 CNY per
// used GPU-hour, idle month 9000 + 2800 + 200 = 12000.
func TestUsageKeyRepricesAtOnce(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	feed, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 140, Height: 40, NoColor: true})
	m.selected, m.moved = "hk-bgp", true
	if !strings.Contains(plain(m), "at 300 of 744 h used, 24.50 CNY per GPU-hour") {
		t.Fatalf("overview lacks the offers file's 300 h:\n%s", plain(m))
	}
	nm, cmd := m.Update(keyMsg("u"))
	m = nm.(Model)
	if o := m.costOpts; !o.UsageSet || o.UsageHours != 400 || cmd == nil {
		t.Fatalf("after u: options %+v, cmd %v", o, cmd)
	}
	m = step(t, m, cmd())
	frame := plain(m)
	if !strings.Contains(frame, "at 400 of 744 h used, 23.25 CNY per GPU-hour") {
		t.Errorf("overview not re-priced at 400 h:\n%s", frame)
	}
	c := m.current()
	found := false
	for _, s := range c.Cost.Schemes {
		if s.Offer == "gpu-spot" {
			found = true
			if s.Total.Text() != "36400.00" {
				t.Errorf("gpu-spot at 400 h = %s, want 36400.00", s.Total.Text())
			}
		}
	}
	if !found {
		t.Fatal("hk-bgp has no gpu-spot what-if")
	}
	frame = plain(press(t, m, "c"))
	for _, want := range []string{"used 400 h", "used 400 of 744 h · idle month 12,000.00 CNY", "per used GPU-hour 23.25 CNY", "gpu-spot"} {
		if !strings.Contains(frame, want) {
			t.Errorf("cost view lacks %q:\n%s", want, frame)
		}
	}
}

// --usage-hours above the month is refused when the feed is built, naming the flag.
func TestUsageHoursAboveTheMonth(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	_, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, UsageHours: billing.Dec{Decimal: decimal.NewFromInt(800), Set: true}})
	if err == nil || !strings.Contains(err.Error(), "--usage-hours 800: more than the 744 hours") {
		t.Errorf("800 h: %v", err)
	}
}

// FIXED / PER-GB / 95TH compare the bandwidth schemes alone (issue 20):
// hk-bgp's what-ifs are 15000 ports, some with another GPU machine, so the
// FIXED cell is 15.0k (not gpu-spot's whole 31.8k against hk-bgp's 58.8k)
// and its own 95th commit of 9000 is the cheapest bandwidth (starred).
func TestSchemeColumnsCompareBandwidthOnly(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	feed, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 140, Height: 40, NoColor: true})
	for _, l := range strings.Split(plain(m), "\n") {
		f := strings.Fields(strings.TrimLeft(l, "› "))
		if len(f) > 0 && f[0] == "hk-bgp" {
			if got := strings.Join(f[len(f)-4:], " "); got != "58,800 15.0k - 9000*" {
				t.Errorf("hk-bgp MONTHLY FIXED PER-GB 95TH = %q, want \"58,800 15.0k - 9000*\"", got)
			}
			return
		}
	}
	t.Errorf("no hk-bgp row:\n%s", plain(m))
}

// A partial traffic log: the cost detail notes the month projected from the
// recorded days (issue 20), and --no-projection leaves it out.
func TestCostNotesTheProjectedMonth(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	src := filepath.Dir(samplesFile)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "rec"), os.DirFS(filepath.Join(src, "rec"))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"candidates.yaml", "offers.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, err := os.ReadFile(filepath.Join(src, "traffic", "2026-10.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(log), "\n")
	os.MkdirAll(filepath.Join(dir, "traffic"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "traffic", "2026-10.csv"), []byte(strings.Join(lines[:865], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, no := range []bool{false, true} {
		feed, err := FeedFromFile(filepath.Join(dir, "candidates.yaml"), FeedOptions{Offline: true, NoProjection: no, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		found := ""
		for _, c := range feed.Snapshot.Candidates {
			for _, n := range c.Cost.Notes {
				if c.Name == "tokyo" && strings.HasPrefix(n, "projected month (not a bill): ") {
					found = n
				}
			}
		}
		switch {
		case no && found != "":
			t.Errorf("--no-projection kept %q", found)
		case !no && !strings.Contains(found, "from 3 of 31 days of traffic recorded (bandwidth: volume × 10.33"):
			t.Errorf("tokyo's projected month note %q", found)
		}
	}
}
