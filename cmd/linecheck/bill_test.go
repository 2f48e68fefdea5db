package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	sampleCSV    = "../../samples/traffic/2026-10.csv"
	sampleOffers = "../../samples/offers.yaml"
)

// billRun runs `linecheck bill args...` in a child process (flags are package
// state; see lcRun) and returns stdout, stderr and the exit code.
func billRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return lcRun(t, append([]string{"bill"}, args...)...)
}

func TestBillSampleTableMarksCheapest(t *testing.T) {
	out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"8915 of 8928", "99.85 %", "95th percentile, nearest-rank", "◀ cheapest", "hk-cn2", "tokyo", "dearest/cheapest", "Charges", "rank 8470 of 8915"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

type billJSON struct {
	Schema string `json:"schema"`
	Period struct {
		Start, End, TZ string
	} `json:"period"`
	Samples struct {
		Expected, Present, Missing int
	} `json:"samples"`
	P95 *struct {
		Method     string  `json:"method"`
		GreaterBps float64 `json:"greater_bps"`
		SumBps     float64 `json:"sum_bps"`
		OutBps     float64 `json:"out_bps"`
	} `json:"p95"`
	Bills []struct {
		Offer, Scheme, Amount, Currency string
		Cheapest                        bool
	} `json:"bills"`
	Cheapest string `json:"cheapest"`
	Name     string `json:"name"`
}

func TestBillJSONOneSeries(t *testing.T) {
	out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc billJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "linecheck.bill/v1" || doc.Period.Start != "2026-10-01T00:00:00Z" || doc.Period.End != "2026-11-01T00:00:00Z" || doc.Period.TZ != "UTC" {
		t.Errorf("header %+v", doc)
	}
	if doc.Samples.Expected != 8928 || doc.Samples.Present != 8915 || doc.Samples.Missing != 13 {
		t.Errorf("samples %+v", doc.Samples)
	}
	if len(doc.Bills) != 15 || doc.Cheapest == "" { // six offers, five what-if variants, four GPU usage models
		t.Fatalf("bills %+v", doc.Bills)
	}
	n := 0
	for _, b := range doc.Bills {
		if b.Cheapest {
			n++
			if b.Offer != doc.Cheapest {
				t.Errorf("cheapest mark on %s, cheapest %s", b.Offer, doc.Cheapest)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d offers marked cheapest", n)
	}
	// Without --offers: the traffic and 95th figures with "bills": [].
	out, _, code = billRun(t, sampleCSV, "--format", "json")
	if code != 0 || !strings.Contains(out, `"bills": []`) || !strings.Contains(out, `"greater_bps"`) {
		t.Errorf("no offers: exit %d\n%s", code, out)
	}
}

// The sample is UTC; billed as a Berlin month (2026-09-30T22:00Z – 2026-10-31T23:00Z,
// 745 h = 8940 slots) it misses 24 slots before its first row and drops its
// last 12 (23:00–23:55Z, November in Berlin): present 8915 − 12 = 8903, missing 37.
func TestBillTimeZoneMonth(t *testing.T) {
	out, errs, code := billRun(t, sampleCSV, "--period", "2026-10", "--tz", "Europe/Berlin", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc billJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Samples.Expected != 8940 || doc.Samples.Present != 8903 || doc.Samples.Missing != 37 {
		t.Errorf("Berlin October samples %+v, want 8940/8903/37", doc.Samples)
	}
	if doc.Period.Start != "2026-10-01T00:00:00+02:00" || doc.Period.TZ != "Europe/Berlin" {
		t.Errorf("period %+v", doc.Period)
	}
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two interfaces: eth0 bursts in the first two slots, eth1 in the next two
// (100 Mbps = 3 750 000 000 bytes per slot, else 10 Mbps = 375 000 000). Each
// port's 95th (rank 19 of 20) is 100 Mbps; --aggregate bills the per-slot sum,
// whose 95th is 110 Mbps — not 200.
func TestBillSeveralSeriesAndAggregate(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 20; i++ {
		ts := start.Add(time.Duration(i) * 5 * time.Minute).Format(time.RFC3339)
		e0, e1 := 375000000, 375000000
		if i < 2 {
			e0 = 3750000000
		} else if i < 4 {
			e1 = 3750000000
		}
		fmt.Fprintf(&b, "%s,eth0,0,%d\n%s,eth1,0,%d\n", ts, e0, ts, e1)
	}
	csv := writeFile(t, "ports.csv", b.String())
	period := []string{"--from", "2026-10-01T00:00:00Z", "--to", "2026-10-01T01:40:00Z", "--format", "json"}
	out, errs, code := billRun(t, append([]string{csv}, period...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var multi struct {
		Schema string     `json:"schema"`
		Series []billJSON `json:"series"`
	}
	if err := json.Unmarshal([]byte(out), &multi); err != nil {
		t.Fatal(err)
	}
	if multi.Schema != "linecheck.bill/v1" || len(multi.Series) != 2 || multi.Series[0].Name != "eth0" || multi.Series[1].Name != "eth1" {
		t.Fatalf("several series doc: %s", out)
	}
	for _, s := range multi.Series {
		if s.P95 == nil || s.P95.OutBps != 100e6 || s.Samples.Expected != 20 {
			t.Errorf("%s: %+v %+v", s.Name, s.P95, s.Samples)
		}
	}
	out, errs, code = billRun(t, append([]string{csv, "--aggregate"}, period...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var agg billJSON
	if err := json.Unmarshal([]byte(out), &agg); err != nil {
		t.Fatal(err)
	}
	if agg.P95 == nil || agg.P95.OutBps != 110e6 {
		t.Errorf("aggregate 95th %+v, want 110 Mbps", agg.P95)
	}
}

func TestBillBadInputExitsTwoWithAMessage(t *testing.T) {
	badOffers := writeFile(t, "offers.yaml", "offers:\n  - name: x\n    currency: USD\n    bandwidth:\n      scheme: p96\n")
	var coarse strings.Builder
	coarse.WriteString("timestamp,in_bytes,out_bytes\n")
	for i := 0; i < 36; i++ {
		fmt.Fprintf(&coarse, "%d,1000000,2000000\n", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Unix()+int64(i)*7200)
	}
	coarseCSV := writeFile(t, "coarse.csv", coarse.String())
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown gaps policy", []string{sampleCSV, "--gaps", "fill"}, `--gaps "fill"`},
		{"unknown method", []string{sampleCSV, "--p95-method", "p96"}, "nearest-rank, librenms"},
		{"unknown direction", []string{sampleCSV, "--direction", "both"}, "greater, max, sum"},
		{"unknown format", []string{sampleCSV, "--format", "xml"}, `--format "xml"`},
		{"bad month", []string{sampleCSV, "--period", "2026-13"}, "YYYY-MM"},
		{"period and range", []string{sampleCSV, "--period", "2026-10", "--from", "2026-10-01"}, "choose one"},
		{"from without to", []string{sampleCSV, "--from", "2026-10-01"}, "--to"},
		{"negative scale", []string{sampleCSV, "--scale", "-1"}, "--scale"},
		{"unknown zone", []string{sampleCSV, "--tz", "Mars/Olympus"}, "--tz"},
		{"plot extension", []string{sampleCSV, "--plot", "x.gif"}, ".svg or .png"},
		{"no log", []string{}, "no LOG"},
		{"missing file", []string{"/nonexistent/traffic.csv"}, "/nonexistent/traffic.csv"},
		{"empty period", []string{sampleCSV, "--period", "2026-09"}, "no traffic samples"},
		{"coarse data", []string{coarseCSV, "--period", "2026-10"}, "--allow-coarse"},
		{"bad offers", []string{sampleCSV, "--offers", badOffers}, "offers.yaml:5:"},
		{"unknown flag", []string{sampleCSV, "--bogus"}, "unknown flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := billRun(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Errorf("stderr %q lacks %q", errs, c.want)
			}
		})
	}
	// Coarse data is billed when allowed, with a warning.
	out, errs, code := billRun(t, coarseCSV, "--period", "2026-10", "--allow-coarse")
	if code != 0 || !strings.Contains(out, "coarser than 300 s") {
		t.Errorf("--allow-coarse: exit %d %s\n%s", code, errs, out)
	}
}

func TestBillPlotSVGAndPNG(t *testing.T) {
	dir := t.TempDir()
	svgPath, pngPath := filepath.Join(dir, "m.svg"), filepath.Join(dir, "m.png")
	if _, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--plot", svgPath); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	doc, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("plot is not well-formed: %v", err)
		}
	}
	// hk-cn2-port is the one fixed offer on a 500 Mbit/s port; la, hk-bgp-port
	// and the four gpu-* offers share 1000 Mbit/s (samples/offers.yaml).
	for _, want := range []string{"95th nearest-rank greater 260.5 Mbit/s", "hk-cn2 commit 200 Mbit/s", "la-p95 commit 100 Mbit/s", "stroke-dasharray", ">Oct 15<", ">Mbit/s<",
		"port 500 Mbit/s: hk-cn2-port", "port 1000 Mbit/s: la, hk-bgp-port +4"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if bytes.Contains(doc, []byte("scaled")) {
		t.Error("the title speaks of a scale without --scale")
	}
	if _, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--scale", "2", "--plot", svgPath); code != 0 {
		t.Fatalf("--scale 2: exit %d: %s", code, errs)
	}
	if doc, _ = os.ReadFile(svgPath); !bytes.Contains(doc, []byte("traffic scaled ×2 (--scale)")) || !bytes.Contains(doc, []byte("95th nearest-rank greater 521.1 Mbit/s")) {
		t.Error("the --scale 2 picture does not say ×2 in its title, or its 95th is not twice 260.5 (521.1)")
	}
	if _, errs, code := billRun(t, sampleCSV, "--plot", pngPath); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(pngPath)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("PNG: %v", err)
	}
}

func TestBillOverridesAndScale(t *testing.T) {
	get := func(args ...string) billJSON {
		out, errs, code := billRun(t, append([]string{sampleCSV, "--offers", sampleOffers, "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var doc billJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	base, cacti, scaled := get(), get("--p95-method", "cacti"), get("--scale", "2")
	if cacti.P95.Method != "cacti" || cacti.P95.GreaterBps > base.P95.GreaterBps {
		t.Errorf("cacti (floor rank) must not exceed nearest-rank: %v vs %v", cacti.P95.GreaterBps, base.P95.GreaterBps)
	}
	if d := scaled.P95.GreaterBps - 2*base.P95.GreaterBps; d > 1e-3 || d < -1e-3 {
		t.Errorf("--scale 2: 95th %v, want twice %v", scaled.P95.GreaterBps, base.P95.GreaterBps)
	}
	sum := get("--direction", "sum")
	for i, b := range sum.Bills {
		if b.Scheme == "p95" && b.Offer == "hk-cn2" && b.Amount == base.Bills[i].Amount {
			t.Errorf("--direction sum must change hk-cn2's bill (%s)", b.Amount)
		}
	}
}

// The sample month under LibreNMS's boundary loses its last slot (8927
// expected, 8914 present after the 13-slot gap); 0.95 × 8914 = 8468.3, so
// librenms-legacy bills rank 8468 and librenms (PR #18481) rank 8467.
func TestBillLibreNMSBoundaryAndMethods(t *testing.T) {
	for method, rank := range map[string]int{"librenms": 8467, "librenms-legacy": 8468} {
		out, errs, code := billRun(t, sampleCSV, "--boundary", "librenms", "--p95-method", method, "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var doc struct {
			Period  struct{ Boundary string }
			Samples struct{ Expected, Present int }
			P95     struct {
				Method string
				Rank   int
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Period.Boundary != "librenms" || doc.Samples.Expected != 8927 || doc.Samples.Present != 8914 || doc.P95.Method != method || doc.P95.Rank != rank {
			t.Errorf("%s: %+v", method, doc)
		}
	}
	if _, errs, code := billRun(t, sampleCSV, "--boundary", "end"); code != 2 || !strings.Contains(errs, "--boundary") {
		t.Errorf("unknown boundary: exit %d %s", code, errs)
	}
}

// Impossible traffic is refused with exit 2, never a panic or a wrapped
// volume: 1e308 bytes a slot with --offers (the money conversion panicked on
// +Inf), the sample at --scale 1e300, ten slots of 2e18 bytes and the sample
// at --scale 1e6 (both printed −9223372036854775808 B with exit 0).
func TestBillRefusesTrafficBeyondWhatCanBeBilled(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.csv")
	os.WriteFile(huge, []byte("timestamp,in_bytes,out_bytes\n2026-10-01T00:00:00Z,1e308,1e308\n2026-10-01T00:05:00Z,1e308,1e308\n"), 0o644)
	var b strings.Builder
	b.WriteString("timestamp,in_bytes,out_bytes\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "2026-10-01T00:%02d:00Z,2000000000000000000,0\n", 5*i)
	}
	ten := filepath.Join(dir, "ten.csv")
	os.WriteFile(ten, []byte(b.String()), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{huge, "--offers", sampleOffers}, "huge.csv: traffic beyond what can be billed"},
		{[]string{sampleCSV, "--offers", sampleOffers, "--scale", "1e300"}, "--scale 1e+300"},
		{[]string{ten}, "ten.csv: traffic beyond what can be billed: the period's volume (in+out 2e+19 bytes)"},
		{[]string{sampleCSV, "--scale", "1e6", "--format", "json"}, "--scale 1e+06"},
		{[]string{sampleCSV, "--scale", "NaN"}, "--scale NaN: want a positive, finite factor"},
		{[]string{sampleCSV, "--scale", "+Inf"}, "--scale +Inf: want a positive, finite factor"},
	} {
		out, errs, code := billRun(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" || strings.Contains(errs, "panic") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %s; want exit 2 with %q", c.args, code, len(out), errs, c.want)
		}
	}
}

// Three days of October under a per-GB offer: the bill as recorded and,
// beside it, the month projected from the recorded days (issue 20); by
// hand 100 Mbit/s out for 864 slots is 3240 GB = 162.00 at 0.05, for the
// month 33480 GB = 1674.00. --no-projection leaves it out.
func TestBillProjectsAPartialRecording(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp,in_bytes,out_bytes\n")
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := range 864 {
		fmt.Fprintf(&b, "%d,375000000,3750000000\n", start+int64(i)*300)
	}
	log := writeFile(t, "three.csv", b.String())
	offers := writeFile(t, "o.yaml", "offers:\n  - {name: gb, currency: USD, bandwidth: {scheme: per-gb, price_per_gb: \"0.05\"}}\n")
	out, errs, code := billRun(t, log, "--offers", offers, "--period", "2026-10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Projected month (not a bill: 3 of 31 days recorded") {
		t.Fatalf("no projection:\n%s", out)
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "gb" && f[1] == "per-gb" && strings.Contains(l, "volume") {
			row = strings.Join(f[:5], " ")
		}
	}
	if row != "gb per-gb 162.00 1,674.00 USD" {
		t.Errorf("projection row %q, want gb per-gb 162.00 1,674.00 USD", row)
	}
	out, _, _ = billRun(t, log, "--offers", offers, "--period", "2026-10", "--no-projection")
	if strings.Contains(out, "Projected month") {
		t.Error("--no-projection kept the projection")
	}
}
