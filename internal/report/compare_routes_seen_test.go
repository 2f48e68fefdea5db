package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// Each distinct route of the days' traces, with when it was seen in the
// users' zone: the table and Markdown write local minutes, CSV RFC 3339,
// the HTML report the same table.
func TestRoutesSeenTableNamesEachRouteWithItsTimes(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	at := func(d, h, m int) *time.Time { v := time.Date(2026, 11, d, h, m, 0, 0, sh); return &v }
	e := &verdict.Evaluation{Name: "hk"}
	e.Route.RoutesSeen = []verdict.SeenRoute{
		{Direction: "forward", ASPath: "AS4812 → AS4809", LineClass: "cn2-gia", First: at(2, 0, 5), Last: at(4, 23, 5), Count: 71},
		{Direction: "forward", ASPath: "AS4812 → AS4134 → AS2914", LineClass: "chinanet-163", First: at(2, 21, 5), Last: at(2, 21, 5), Count: 1},
		{Direction: "return", LineClass: "unknown", Count: 2, Untimed: 2},
	}
	r := &compare.Result{Candidates: []*verdict.Evaluation{e, {Name: "other"}}}
	r.SLA.Zone = sh
	tab, ok := compareRoutesSeenTable(r, FormatTable)
	if !ok {
		t.Fatal("no routes-seen table")
	}
	want := [][]string{
		{"hk", "forward", "cn2-gia", "AS4812 → AS4809", "2026-11-02 00:05", "2026-11-04 23:05", "71"},
		{"hk", "forward", "chinanet-163", "AS4812 → AS4134 → AS2914", "2026-11-02 21:05", "2026-11-02 21:05", "1"},
		{"hk", "return", "unknown", "-", "-", "-", "2 (2 untimed)"},
	}
	if !reflect.DeepEqual(tab.Rows, want) {
		t.Errorf("rows\n%q\nwant\n%q", tab.Rows, want)
	}
	if !strings.Contains(tab.Title, "Asia/Shanghai") {
		t.Errorf("title %q does not name the zone", tab.Title)
	}
	csv, _ := compareRoutesSeenTable(r, FormatCSV)
	if got := csv.Rows[1][4]; got != "2026-11-02T21:05:00+08:00" {
		t.Errorf("CSV first %q, want RFC 3339 in the users' zone", got)
	}
	if got := csv.Rows[2][6:]; !reflect.DeepEqual(got, []string{"2", "2"}) || csv.Headers[7] != "untimed" {
		t.Errorf("CSV traces, untimed %q under %q: want the counts in columns of their own", got, csv.Headers)
	}
	var b bytes.Buffer
	if err := WriteCompareHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<h2>Routes seen over the days</h2>") || !strings.Contains(b.String(), "2026-11-02 21:05") {
		t.Error("the HTML report lacks the routes seen")
	}
	if _, ok := compareRoutesSeenTable(&compare.Result{Candidates: []*verdict.Evaluation{{Name: "x"}}}, FormatTable); ok {
		t.Error("a routes-seen table without traces over days")
	}
}
