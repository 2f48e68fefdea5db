package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// A candidate whose recorded delivery fails (hk-cn2-gia, the samples' only
// passing line, delivered as 2 × H100 NVL against an order for 8 × H100
// SXM5) is failed in every format: no format recommends it, each says why
// (the GPU column FAIL, the verdict, the note), and the HTML cost chart
// labels it "(fails)".
func TestFailedDeliveryInEveryFormat(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("../gpu/testdata/h100-nvl-2x")
	if err != nil {
		t.Fatal(err)
	}
	old := "probes: rec/hk-cn2-gia-ping.ndjson}"
	order := "\n    gpu: {count: 8, model: H100 SXM5, memory_gib: 80}\n"
	s := strings.Replace(string(b), old, strings.TrimSuffix(old, "}")+", gpu: "+dir+"}"+order, 1)
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	const verdict = "so none is recommended"
	const note = "hk-cn2-gia passes the SLA but fails its recorded delivery, never recommended: GPU delivery (count, model)"
	for _, tc := range []struct {
		format Format
		table  string
		want   []string
	}{
		{FormatTable, "", []string{verdict, note, "hk-cn2-gia  cn2-gia"}},
		{FormatMarkdown, "", []string{verdict, note}},
		{FormatJSON, "", []string{verdict, `"recommended": ""`, `"delivery_failed": [`}},
		{FormatHTML, "", []string{verdict, "hk-cn2-gia (fails)"}},
		{FormatCSV, "ranking", []string{"hk-cn2-gia", ",pass,FAIL,"}},
	} {
		var out bytes.Buffer
		if err := Render(&out, CompareReport{r}, tc.format, Options{Table: tc.table, Wide: true}); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s lacks %q", tc.format, w)
			}
		}
		if strings.Contains(out.String(), "Recommended: hk-cn2-gia") || strings.Contains(out.String(), "recommended: hk-cn2-gia") {
			t.Errorf("%s recommends the failed delivery", tc.format)
		}
	}
}

// The ranking gains host and interconnect columns only when a candidate
// records them: here one candidate's host delivery passes, another's
// interconnect fails.
func TestRankingDeliveryColumns(t *testing.T) {
	r := &compare.Result{FXBase: "CNY", Candidates: []*verdict.Evaluation{
		{Name: "a", SLA: verdict.Verdict{Pass: true}, Host: &verdict.HostDelivery{Verdict: "pass"}},
		{Name: "b", SLA: verdict.Verdict{Pass: true}, Interconnect: &verdict.InterconnectDelivery{Verdict: "fail"}, DeliveryFailed: []string{"interconnect"}},
	}}
	rank := compareRankTable(r, compareCells{})
	h := strings.Join(rank.Headers, ",")
	if !strings.Contains(h, ",SLA,host,interconnect,") || strings.Contains(h, "GPU") {
		t.Fatalf("headers %s", h)
	}
	at := 0
	for i, x := range rank.Headers {
		if x == "host" {
			at = i
		}
	}
	if rank.Rows[0][at] != "pass" || rank.Rows[0][at+1] != "-" || rank.Rows[1][at] != "-" || rank.Rows[1][at+1] != "FAIL" || len(rank.Align) != len(rank.Headers) {
		t.Errorf("rows %q / %q", rank.Rows[0], rank.Rows[1])
	}
}
