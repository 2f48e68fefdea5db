package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
)

// The bundled scenario at its 300 used hours: the GPU usage table (hk-bgp's
// 128064 CNY over 300 h × 8 cards = 53.36 per used GPU-hour), the crossings
// as sentences, and in HTML the plot of every priced offer's month against
// the used hours with the crossings ringed and labelled.
func TestCompareGPUUsageTableAndPlot(t *testing.T) {
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, CompareReport{r}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"GPU usage: 300 of 744 hours used (",
		"break-even: gpu-hourly costs the same as gpu-monthly at 375 h (108,000.00 CNY)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "hk-bgp" && f[1] == "hk-bgp" && strings.Contains(l, "%") {
			row = strings.Join(f, " ")
		}
	}
	// hk-bgp at 300 used h: 9000 + 8 × 300 × 19.50 + 2800 + 200 = 58800; idle
	// 12000 (20.4 %); 58800 / 300 / 8 = 24.50 per used GPU-hour.
	if row != "hk-bgp hk-bgp 300 8 58,800.00 12,000.00 20.4 % 24.50" {
		t.Errorf("hk-bgp usage row %q", row)
	}
	// csv: absent figures are empty cells, not "-".
	b.Reset()
	if err := Render(&b, CompareReport{r}, FormatCSV, Options{Table: "usage"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "candidate,offer,used_hours,cards,monthly_CNY,idle_amount,idle_share_fraction,per_used_gpu_hour\n") ||
		!strings.Contains(b.String(), "\nhk-cn2-gia,hk-cn2,300,,144691.54,144691.54,1,\n") {
		t.Errorf("csv usage rows:\n%s", b.String())
	}

	b.Reset()
	if err := WriteCompareHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	i := strings.Index(h, "<h2>GPU usage</h2>")
	if i < 0 {
		t.Fatal("HTML has no GPU usage section")
	}
	sec := h[i:]
	sec = sec[:strings.Index(sec, "</svg>")+len("</svg>")]
	svg := sec[strings.Index(sec, "<svg"):]
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("usage SVG: %v", err)
		}
	}
	// Every priced offer is a named curve; the 375 h crossing is labelled.
	for _, o := range r.Usage.Offers {
		if !strings.Contains(svg, ">"+o.Offer+"<") {
			t.Errorf("usage plot lacks the curve %s", o.Offer)
		}
	}
	for _, want := range []string{">375 h<", ">used hours of the GPU machine<", ">CNY per month<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("usage plot lacks %s", want)
		}
	}
	if len(r.Usage.Offers) != 13 {
		t.Errorf("%d priced offers, want 13 (4 candidates' offers and 9 what-ifs)", len(r.Usage.Offers))
	}
}

// Offers without a compute item price nothing by the GPU hour: compare has
// no usage figures (result and candidates' usage null) and no GPU usage
// table or plot in any format, where it printed "720 of 720 hours used …
// idle share 100.0 %" (issue 35). The bill of the same offers has no usage
// table either.
func TestNoUsageTableWithoutComputeItems(t *testing.T) {
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	offers := `offers:
  - name: port-only
    currency: USD
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "900"}
    items:
      - {kind: ip, name: IPv4, count: 4, price_each: "3"}
  - name: p95-only
    currency: USD
    bandwidth: {scheme: p95, method: nearest-rank, direction: greater, port_mbps: 1000, price_per_mbps: "1.5"}
`
	cand := "recorded_only: true\nvantage: {city: Shanghai}\ncandidates:\n"
	for _, c := range []struct{ name, offer string }{{"a", "port-only"}, {"b", "p95-only"}} {
		cand += "  - name: " + c.name + "\n    region: {city: Hong Kong}\n    targets: [{addr: 203.0.113.10, protocol: icmp}]\n" +
			"    recorded: {probes: " + rec + "/hk-cn2-gia-ping.ndjson}\n    offer: " + c.offer + "\n"
	}
	cand += "offers: offers.yaml\ntraffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-09}\n"
	for name, body := range map[string]string{"c.yaml": cand, "offers.yaml": offers} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage != nil {
		t.Errorf("usage summary %+v without a compute item", r.Usage)
	}
	for _, e := range r.Candidates {
		if e.Monthly == nil || e.Usage != nil {
			t.Errorf("%s: monthly %v, usage %+v: want a bill and no usage", e.Name, e.Monthly, e.Usage)
		}
	}
	for _, format := range []Format{FormatTable, FormatMarkdown, FormatHTML, FormatCSV, FormatJSON} {
		var b bytes.Buffer
		if err := Render(&b, CompareReport{r}, format, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"GPU usage", "idle share", "idle_share", "hours used", "per used GPU"} {
			if strings.Contains(b.String(), bad) {
				t.Errorf("%s output has %q:\n%s", format, bad, b.String())
			}
		}
	}
}
