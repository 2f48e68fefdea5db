package billing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lintFixture bills testdata/lint/NAME.yaml on a constant October and lints it.
func lintFixture(t *testing.T, name string, market *MarketFile) []LintWarning {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/lint", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseOffers(data, name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := MonthPeriod(2026, time.October, time.UTC)
	r, err := BillSeries(constSeries(p, 10, 200, nil), p, f.Offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return LintOffers(f.Offers, r.Bills, market)
}

// One fixture per warning, each giving that warning alone; the quote with
// every hidden item, storage below the compute and prices inside the market's
// bands warns of nothing.
func TestLintOneFixtureEachWarning(t *testing.T) {
	market, err := LoadMarket("testdata/lint/market.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ fixture, check, text string }{
		{"complete", "", ""},
		{"lacks-storage", "lacks-item", "no storage item"},
		{"lacks-ip", "lacks-item", "no public IPs item"},
		{"lacks-snapshots", "lacks-item", "no snapshots or backups item"},
		{"lacks-support", "lacks-item", "no support item"},
		// By hand: 30000 GB × 0.5 = 15,000 against 8 × 300 h × 4.8 = 11,520.
		{"idle-storage", "idle-storage", "storage costs 15000.00 CNY a month, more than the compute's 11520.00 at 300 used h"},
		{"out-of-band", "card-hour-band", "8x H100 on demand: 45 CNY a card-hour is above the hourly band 20–40 (H100, on demand) quoted on 2026-11-15 (testdata/lint/market.yaml: issue 33 cost table"},
	} {
		ws := lintFixture(t, c.fixture, market)
		if c.check == "" {
			if len(ws) != 0 {
				t.Errorf("%s: warnings %+v, want none", c.fixture, ws)
			}
			continue
		}
		if len(ws) != 1 || ws[0].Check != c.check || ws[0].Offer != c.fixture || !strings.Contains(ws[0].Text, c.text) {
			t.Errorf("%s: %+v, want one %s warning with %q", c.fixture, ws, c.check, c.text)
		}
	}
	// Without the reference file, no band is checked.
	if ws := lintFixture(t, "out-of-band", nil); len(ws) != 0 {
		t.Errorf("out-of-band without a market file: %+v", ws)
	}
}

// A reference file without its date, its sources or a sound band is refused
// with its line.
func TestLoadMarketRefusesAnUndatedOrUnsourcedFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"sources: [x]\ncard_hour: [{billing: hourly, currency: CNY, low: \"1\", high: \"2\"}]\n", "date \"\": want the day"},
		{"date: 2026-11-15\ncard_hour: [{billing: hourly, currency: CNY, low: \"1\", high: \"2\"}]\n", "sources: want at least one source"},
		{"date: 2026-11-15\nsources: [x]\ncard_hour: [{billing: hourly, currency: CNY, low: \"3\", high: \"2\"}]\n", ":3: card_hour[1]: want low and high"},
		{"date: 2026-11-15\nsources: [x]\ncard_hour: [{billing: monthly, currency: CNY, low: \"1\", high: \"2\"}]\n", "billing \"monthly\""},
		{"date: 2026-11-15\nsources: [x]\nbands: []\n", "bands"},
	} {
		p := filepath.Join(dir, "m.yaml")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadMarket(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
}
