package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// A candidate with multipath paths gets the Paths table: tidy in CSV
// (--table paths: numbers, every flow id, share as a fraction, empty for
// no data) and a section in HTML; without paths there is no such table.
func TestComparePathsTable(t *testing.T) {
	share := 0.25
	r := &compare.Result{Candidates: []*verdict.Evaluation{{Name: "lab", Route: verdict.RouteQuality{
		Paths: []verdict.PathLine{
			{Direction: "forward", Path: 1, Of: 2, Flows: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, Share: &share, LineClass: "chinanet-163",
				Confidence: "low", Leaves: "enters the ChinaNet backbone at TTL 2 (10.77.100.2)",
				Hops: []verdict.PathLineHop{{TTL: 1, Addr: "10.77.0.2"}, {TTL: 2, Addr: ""}, {TTL: 3, Addr: "10.77.100.2"}}},
			{Direction: "forward", Path: 2, Of: 2, Flows: []int{10}, LineClass: "cn2-gia", Confidence: "low", Hops: []verdict.PathLineHop{}},
		},
		PathsSummary: []string{"forward: path 1 of 2 (flows 1, …) enters the ChinaNet backbone at TTL 2 (10.77.100.2): chinanet-163, not cn2-gia as path 2"},
	}}}}
	var csv *Table
	for _, tb := range CompareCSVTables(r) {
		if tb.Name == "paths" {
			csv = &tb
		}
	}
	if csv == nil {
		t.Fatal("no paths CSV table")
	}
	if got := strings.Join(csv.Headers, ","); got != "candidate,direction,path,of,flows,share,line_class,confidence,leaves,hops" {
		t.Errorf("headers %s", got)
	}
	want := [][]string{
		{"lab", "forward", "1", "2", "1 2 3 4 5 6 7 8 9", "0.25", "chinanet-163", "low", "enters the ChinaNet backbone at TTL 2 (10.77.100.2)", "1:10.77.0.2 2:* 3:10.77.100.2"},
		{"lab", "forward", "2", "2", "10", "", "cn2-gia", "low", "", ""},
	}
	for i, row := range csv.Rows {
		if strings.Join(row, "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d\n %q\nwant\n %q", i, row, want[i])
		}
	}
	var html bytes.Buffer
	if err := WriteCompareHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "<h2>Paths</h2>") || !strings.Contains(html.String(), "not cn2-gia as path 2") {
		t.Error("HTML report lacks the paths")
	}
	r.Candidates[0].Route.Paths = nil
	for _, tb := range CompareTables(r, FormatTable) {
		if strings.HasPrefix(tb.Title, "Paths") {
			t.Error("a Paths table without paths")
		}
	}
}
