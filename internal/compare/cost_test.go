package compare

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

const whatIfOffers = `offers:
  - name: port
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 100, price: "1000"}
    items:
      - {name: server, kind: compute, price_per_month: "5000"}
  - name: metered
    currency: USD
    bandwidth: {scheme: per-gb, base: 1000, price_per_gb: "0.05"}
    items:
      - {name: server, kind: compute, price_per_month: "700"}
`

func TestPricingWithWhatIfAndFX(t *testing.T) {
	yaml := `vantage: {city: Shanghai}
candidates:
  - name: a
    region: {city: Tokyo}
    targets: [{addr: 127.0.0.1}]
    offer: port
    what_if: [metered]
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
fx: {base: CNY, USD: 7.10}
`
	dir := writeFiles(t, map[string]string{"c.yaml": yaml, "offers.yaml": whatIfOffers})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := verdict.NewPricing(f, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	m, whatIf, err := p.Monthly(&f.Candidates[0])
	if err != nil {
		t.Fatal(err)
	}
	// 1000 (port) + 5000 (server), already CNY.
	if m.Total != "6000.00" || m.Currency != "CNY" || m.Converted.Text() != "6000.00" || m.Rate != "1" {
		t.Errorf("monthly = %+v", m)
	}
	// 1000 GB × 0.05 = 50 USD + 700 USD = 750 USD = 5325.00 CNY at 7.10.
	if len(whatIf) != 1 || whatIf[0].Offer != "metered" || whatIf[0].Scheme != "per-gb" || whatIf[0].Total != "750.00" ||
		whatIf[0].Currency != "USD" || whatIf[0].Converted.Text() != "5325.00" {
		t.Errorf("what-if = %+v", whatIf)
	}
	if tr := p.Traffic; tr == nil || tr.PeriodStart != time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC) || len(tr.Times) != 8928 {
		t.Errorf("traffic summary = %+v", p.Traffic)
	}
}

func TestPricingRefusesUnknownOfferAndMissingRate(t *testing.T) {
	base := `vantage: {city: Shanghai}
candidates:
  - name: a
    region: {city: Tokyo}
    targets: [{addr: 127.0.0.1}]
    offer: OFFER
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, period: 2026-10}
fx: {base: CNY}
`
	cases := []struct{ offer, want string }{
		{"nope", `c.yaml:3: candidate a: offer "nope" is not in`},
		{"metered", "offer metered is priced in USD: fx: no rate for USD"},
	}
	for _, c := range cases {
		dir := writeFiles(t, map[string]string{"c.yaml": strings.Replace(base, "OFFER", c.offer, 1), "offers.yaml": whatIfOffers})
		f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := verdict.NewPricing(f, time.Time{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("offer %s: err = %v, want %q", c.offer, err, c.want)
		}
	}
}

func TestSyntheticMonthDefaultsToTheMonthBeforeNow(t *testing.T) {
	yaml := `vantage: {city: Shanghai}
candidates:
  - {name: a, region: {city: Tokyo}, targets: [{addr: 127.0.0.1}], offer: port}
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50}
fx: {base: CNY}
`
	dir := writeFiles(t, map[string]string{"c.yaml": yaml, "offers.yaml": whatIfOffers})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := verdict.NewPricing(f, time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Traffic.PeriodStart; got != time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) {
		t.Errorf("period starts %v, want 2026-12-01", got)
	}
	if p.Traffic.Shape != "diurnal" {
		t.Errorf("shape %q, want the default diurnal", p.Traffic.Shape)
	}
}

// Without fx: the offers file's compare_currency and exchange_rates rank
// the candidates (the rates bill uses); else the one currency they share;
// offers in two currencies with no rate anywhere are refused, never ranked on
// raw amounts (750 USD is not less than 6000 CNY).
func TestPricingWithoutFX(t *testing.T) {
	yaml := `vantage: {city: Shanghai}
candidates:
  - name: a
    region: {city: Tokyo}
    targets: [{addr: 127.0.0.1}]
    offer: OFFER
    what_if: [WHATIF]
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
`
	load := func(offer, whatIf, offers string) *candidates.File {
		t.Helper()
		body := strings.NewReplacer("OFFER", offer, "WHATIF", whatIf).Replace(yaml)
		dir := writeFiles(t, map[string]string{"c.yaml": body, "offers.yaml": offers})
		f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// Two currencies, no rate anywhere: refused, naming both and the fix.
	f := load("port", "metered", whatIfOffers)
	if _, err := verdict.NewPricing(f, time.Time{}); err == nil ||
		!strings.Contains(err.Error(), "the offers are priced in CNY (port) and USD (metered) and there is no fx") ||
		!strings.Contains(err.Error(), "add `fx: {base: CNY, USD: <CNY per 1 USD>}`") {
		t.Errorf("CNY and USD without fx: %v", err)
	}
	// The offers file's rates: 750 USD at 7.10 = 5325.00 CNY, as with fx.
	f = load("port", "metered", "compare_currency: CNY\nexchange_rates: {USD: \"7.10\"}\n"+whatIfOffers)
	p, err := verdict.NewPricing(f, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_, whatIf, err := p.Monthly(&f.Candidates[0])
	if err != nil || p.FX().Base != "CNY" || len(whatIf) != 1 || whatIf[0].Converted.Text() != "5325.00" || whatIf[0].Converted.Currency != "CNY" {
		t.Errorf("offers file rates: base %q, what-if %+v, %v", p.FX().Base, whatIf, err)
	}
	// The pricing does not write its settled exchange into the file it was
	// given (NewPricingWith set f.FX before: issue 19).
	if f.FX.Base != "" || len(f.FX.Rates) != 0 {
		t.Errorf("NewPricing wrote into its input: f.FX = %+v", f.FX)
	}
	r := NewResult(f, Options{})
	r.useFX(p.FX())
	if r.FXBase != "CNY" || r.FX["USD"] != "7.10" {
		t.Errorf("result fx: base %q rates %v", r.FXBase, r.FX)
	}
	// One currency: it is the base.
	f = load("metered", "metered", whatIfOffers)
	if p, err := verdict.NewPricing(f, time.Time{}); err != nil || p.FX().Base != "USD" || f.FX.Base != "" {
		t.Errorf("USD only: base %q (file %q), %v", p.FX().Base, f.FX.Base, err)
	}
}

// A traffic log of 3 days of October: the candidate's bill as recorded and
// the month projected from them (issue 20). By hand: 100 Mbit/s out for
// 864 slots is 3240 GB, 162.00 USD at 0.05 (+ 700 server = 862.00, 6120.20
// CNY at 7.10); the month, 33480 GB, 1674.00 (+ 700 = 2374.00, 16855.40 CNY).
func TestPricingProjectsAPartialLog(t *testing.T) {
	var log strings.Builder
	log.WriteString("timestamp,in_bytes,out_bytes\n")
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := range 864 {
		fmt.Fprintf(&log, "%d,375000000,3750000000\n", start+int64(i)*300)
	}
	yaml := `vantage: {city: Shanghai}
candidates:
  - name: a
    region: {city: Tokyo}
    targets: [{addr: 127.0.0.1}]
    offer: metered
offers: offers.yaml
traffic: {log: t.csv, period: 2026-10}
fx: {base: CNY, USD: 7.10}
`
	dir := writeFiles(t, map[string]string{"c.yaml": yaml, "offers.yaml": whatIfOffers, "t.csv": log.String()})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, no := range []bool{false, true} {
		p, err := verdict.NewPricingWith(f, time.Time{}, billing.Options{NoProjection: no})
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := p.Monthly(&f.Candidates[0])
		if err != nil {
			t.Fatal(err)
		}
		if m.Total != "862.00" || m.Converted.Text() != "6120.20" {
			t.Errorf("as recorded %s USD = %s CNY, want 862.00 = 6120.20", m.Total, m.Converted.Text())
		}
		switch pr := m.Projected; {
		case no && pr != nil:
			t.Errorf("NoProjection kept %+v", pr)
		case !no && (pr == nil || pr.Total.Text() != "2374.00" || pr.Converted.Text() != "16855.40" || pr.RecordedDays != 3 || pr.PeriodDays != 31):
			t.Errorf("projected %+v, want 2374.00 USD = 16855.40 CNY from 3 of 31 days", pr)
		}
	}
}
