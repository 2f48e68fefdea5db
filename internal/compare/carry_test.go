package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// TestOfferThatCannotCarryIsNeverRecommended: a synthetic month peaking at
// 2.5 Gbit/s (95th ≈ 2.49 Gbit/s) on hk-cn2's 1000 Mbps port. hk-cn2-gia
// passes the SLA and is the cheaper (356,710.15 CNY against tokyo's
// 618,123.16), but its offer cannot carry the traffic: tokyo (10 Gbps
// port) is recommended, the report says why, and the what-if port
// exceeded is warned about.
func TestOfferThatCannotCarryIsNeverRecommended(t *testing.T) {
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	offers, _ := filepath.Abs("../../samples/offers.yaml")
	doc := strings.NewReplacer("REC", rec, "OFFERS", offers).Replace(`vantage: {city: Shanghai}
candidates:
  - name: hk-cn2-gia
    region: {city: Hong Kong}
    targets: [{addr: 203.0.113.10, protocol: icmp}]
    recorded: {probes: REC/hk-cn2-gia-ping.ndjson}
    offer: hk-cn2
    what_if: [hk-cn2-port]
  - name: tokyo
    region: {city: Tokyo}
    targets: [{addr: 198.51.100.30, protocol: icmp}]
    recorded: {probes: REC/tokyo-ping.ndjson}
    offer: tokyo
offers: OFFERS
traffic: {monthly_gb: 800000, peak_mbps: 2500, shape: diurnal, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla: {rtt_p95_ms: 60}
`)
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*verdict.Evaluation{}
	for _, e := range r.Candidates {
		byName[e.Name] = e
	}
	hk, tokyo := byName["hk-cn2-gia"], byName["tokyo"]
	if !hk.SLA.Pass || !tokyo.SLA.Pass {
		t.Fatalf("both must pass the SLA for the test to mean anything: %v %v", hk.SLA.Pass, tokyo.SLA.Pass)
	}
	hc, _ := hk.Cost()
	tc, _ := tokyo.Cost()
	if !hc.LessThan(tc) {
		t.Fatalf("hk-cn2-gia (%s) must be the cheaper (tokyo %s)", hc, tc)
	}
	if hk.Monthly.CanCarry() || hk.Monthly.Carry.Status != "cannot-carry" {
		t.Fatalf("hk-cn2 carry %+v: its 1000 Mbps port is below the 95th", hk.Monthly.Carry)
	}
	if r.Recommended != "tokyo" || r.Ranking[0] != "tokyo" {
		t.Errorf("recommended %q, ranking %v: want tokyo first", r.Recommended, r.Ranking)
	}
	joined := strings.Join(r.Notes, "\n")
	if !strings.Contains(joined, "hk-cn2-gia passes the SLA but is not recommended: offer hk-cn2 cannot carry the traffic") {
		t.Errorf("notes do not say why: %q", r.Notes)
	}
	warn := strings.Join(hk.Warnings, "\n")
	if !strings.Contains(warn, "what-if offer hk-cn2-port: cannot carry the traffic") {
		t.Errorf("no warning for the what-if port: %q", hk.Warnings)
	}
	b, _ := json.Marshal(hk.Monthly)
	if !strings.Contains(string(b), `"can_carry":false`) {
		t.Errorf("monthly JSON lacks the carry judgement: %s", b)
	}
}
