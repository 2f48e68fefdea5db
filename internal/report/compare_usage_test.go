package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/compare"
)

// The bundled scenario at its 300 used hours: the GPU usage table (hk-bgp's
// 128064 CNY over 300 h × 8 cards = 53.36 per used GPU-hour), the crossings
// as sentences, and in HTML the plot of every priced offer's month against
// the used hours with the crossings ringed and labelled.
func TestCompareGPUUsageTableAndPlot(t *testing.T) {
	f, err := compare.Load(samplesFile)
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
