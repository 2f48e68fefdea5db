package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

const samplesFile = "../../samples/candidates.yaml"

// TestSamplesTextFormats checks that every text format carries the ranking
// and the verdict, and that csv parses as csv with plain numbers.
func TestSamplesTextFormats(t *testing.T) {
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "markdown"} {
		var b bytes.Buffer
		if err := Render(&b, CompareReport{r}, Format(format), Options{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Recommended: hk-cn2-gia", "la would cost 109,098.60 CNY", "144,691.54", "SLA checks", "Monthly cost breakdown"} {
			if !bytes.Contains(b.Bytes(), []byte(want)) {
				t.Errorf("%s report lacks %q", format, want)
			}
		}
	}
	var b bytes.Buffer
	if err := Render(&b, CompareReport{r}, FormatCSV, Options{}); err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b.Bytes(), []byte("\n\n"))
	rows, err := csv.NewReader(bytes.NewReader(first)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[1][1] != "hk-cn2-gia" || rows[4][1] != "la" || rows[4][14] != "109098.60" || rows[4][13] != "USD" || rows[2][1] != "hk-bgp" || rows[2][14] != "58800.00" {
		t.Errorf("csv ranking table: %q", rows)
	}
}

// TestCompareTableAlignsWideNames: a candidate named with CJK characters
// (香港 takes four terminal columns) does not shift the columns after it.
func TestCompareTableAlignsWideNames(t *testing.T) {
	r := handResult()
	r.Candidates[0].Name = "香港-cn2"
	var b bytes.Buffer
	if err := Write(&b, "table", CompareTables(r, "table")[0]); err != nil {
		t.Fatal(err)
	}
	col := map[int]bool{}
	rows := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if i := strings.Index(l, " P"); i >= 0 && (strings.Contains(l, "香港") || strings.Contains(l, " la ")) {
			col[lipgloss.Width(l[:i])] = true // where the provider column (P1, P2) starts
			rows++
		}
	}
	if rows != 2 || len(col) != 1 {
		t.Errorf("the provider column starts at %d different display columns:\n%s", len(col), b.String())
	}
}

// TestCompareTablesShowAbsentAsDash: a candidate whose target never
// answered shows "-" for its RTT, jitter and stretch in every table, ranks
// last among the failing ones although it is the cheapest, and the report
// states the ordering rule.
func TestCompareTablesShowAbsentAsDash(t *testing.T) {
	r := handResult()
	dead := &verdict.Evaluation{Name: "dead", Provider: "P3", Region: "Tokyo",
		Route:   verdict.RouteQuality{LineClass: "unknown", Direction: "none", Sent: 20, Loss: 1, FloorMs: 17.7},
		Targets: []verdict.TargetResult{{Target: candidates.Target{Addr: "127.0.0.9", Protocol: "icmp"}, Sent: 20, Loss: 1}},
		SLA:     verdict.Verdict{Checks: []verdict.Check{{Name: verdict.CheckRTTP95, Required: 60.0, Unit: "ms", Note: "no probe was answered"}}},
		Monthly: &verdict.Monthly{Offer: "cheap", Total: "1000.00", Currency: "CNY", Rate: "1", Converted: billing.MoneyOf(decimal.RequireFromString("1000.00"), "CNY")}}
	r.Candidates = append(r.Candidates, dead)
	compare.Rank(r)
	if got := r.Ranking[len(r.Ranking)-1]; got != "dead" {
		t.Fatalf("ranking %v: the dead candidate is not last", r.Ranking)
	}
	var b bytes.Buffer
	if err := Render(&b, CompareReport{r}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "Order: "+verdict.RankingRule) {
		t.Errorf("the report does not state the ordering rule:\n%s", out)
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 10 && f[0] == "3" && f[1] == "dead": // ranking: rank, name, provider, region, class, validated, p50, p95, loss, jitter, stretch
			if f[6] != "-" || f[7] != "-" || f[8] != "100.00%" || f[9] != "-" || f[10] != "-" {
				t.Errorf("ranking row %q: want - for p50, p95, jitter and stretch, 100%% loss", l)
			}
			rows++
		case len(f) > 12 && f[0] == "dead" && f[1] == "127.0.0.9":
			if f[9] != "-" || f[10] != "-" || f[11] != "-" || f[12] != "-" {
				t.Errorf("probe row %q: want - for the RTT figures", l)
			}
			rows++
		}
	}
	if rows != 2 {
		t.Errorf("found %d of the dead candidate's rows (ranking, probes), want 2:\n%s", rows, out)
	}
}

// The samples compared from a Hong Kong vantage: the two Hong Kong
// candidates are in the vantage's city, where the stretch check does not
// apply — its row reads "n/a" with the reason, never FAIL — and hk-bgp no
// longer fails stretch (it still fails its other checks); Tokyo and LA are
// judged as before (issue 35).
func TestCompareStretchNotApplicableInTheVantagesCity(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../samples")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "candidates.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	hk := strings.Replace(string(b), "vantage: {city: Shanghai}", "vantage: {city: Hong Kong}", 1)
	if hk == string(b) {
		t.Fatal("samples/candidates.yaml: no Shanghai vantage to move")
	}
	if err := os.WriteFile(p, []byte(hk), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Render(&out, CompareReport{r}, FormatCSV, Options{Table: "checks"}); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, block := range strings.Split(out.String(), "\n\n") {
		recs, err := csv.NewReader(strings.NewReader(block)).ReadAll()
		if err != nil || len(recs) == 0 || recs[0][1] != "check" {
			continue
		}
		for _, rec := range recs[1:] {
			if rec[1] == "stretch" {
				rows[rec[0]] = rec
			}
		}
	}
	for _, name := range []string{"hk-cn2-gia", "hk-bgp"} {
		row := rows[name]
		if row == nil || row[3] != "" || row[5] != "n/a" || !strings.HasPrefix(row[6], "not applicable: the region is in the vantage's city") {
			t.Errorf("%s stretch row %q: want measured empty, result n/a, a not-applicable note", name, row)
		}
	}
	for _, name := range []string{"tokyo", "la"} {
		if row := rows[name]; row == nil || row[3] == "" || row[5] == "n/a" {
			t.Errorf("%s stretch row %q: want a measured stretch", name, row)
		}
	}
	for _, e := range r.Candidates {
		if e.Name == "hk-bgp" {
			for _, c := range e.SLA.Checks {
				if c.Name == verdict.CheckStretch && !c.Pass {
					t.Errorf("hk-bgp stretch check fails in its own city: %+v", c)
				}
			}
		}
	}
}
