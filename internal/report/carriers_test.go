package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
)

// The three-network table, in every format, on the bundled scenario with
// users per carrier: hk-cn2-gia's route toward Unicom users is the GIA
// tri-network hand-off (allowed there), toward Mobile users CMI (not allowed).
func TestThreeNetworksTable(t *testing.T) {
	f, err := candidates.Load("../../samples/three-networks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{
		"table":    "hk-cn2-gia  unicom   Beijing    -             cn2-gia",
		"markdown": "| hk-cn2-gia | unicom | Beijing | - | cn2-gia | bj-unicom (Beijing) |",
		"csv":      "hk-cn2-gia,mobile,Guangzhou,,cmi,gz-mobile (Guangzhou),\"CMI ×2, lands on CMNET\",cmin2,FAIL",
		"html":     "<tr><td>hk-cn2-gia</td><td>mobile</td><td>Guangzhou</td><td>-</td><td>cmi</td>",
	}
	for format, want := range rows {
		var b bytes.Buffer
		write := func() error { return Render(&b, CompareReport{r}, Format(format), Options{}) }
		if format == "csv" { // one tidy table, chosen by name; no data is an empty cell
			write = func() error { return Render(&b, CompareReport{r}, FormatCSV, Options{Table: "carriers"}) }
		}
		if err := write(); err != nil {
			t.Fatal(err)
		}
		title := "Three networks"
		if format == "csv" { // csv tables carry their header row, not a title
			title = "candidate,carrier,users,forward,return,return_measured_to,return_evidence,allowed,SLA\n"
		}
		if !strings.Contains(b.String(), title) || !strings.Contains(b.String(), want) {
			t.Errorf("%s: no three-network row %q", format, want)
		}
	}
	var b bytes.Buffer
	Render(&b, CompareReport{r}, FormatTable, Options{})
	if !strings.Contains(b.String(), "line class toward telecom users in {cn2-gia}") {
		t.Errorf("the header does not state the per-carrier SLA")
	}
}
