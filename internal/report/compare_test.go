package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/linecheck/linecheck/internal/compare"
)

const samplesFile = "../../samples/candidates.yaml"

// TestSamplesTextFormats checks that every text format carries the ranking
// and the verdict, and that csv parses as csv with plain numbers.
func TestSamplesTextFormats(t *testing.T) {
	f, err := compare.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "markdown"} {
		var b bytes.Buffer
		if err := WriteCompare(&b, r, format); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Recommended: hk-cn2-gia", "la would cost 109,098.60 CNY", "144,691.54", "SLA checks", "Monthly cost breakdown"} {
			if !bytes.Contains(b.Bytes(), []byte(want)) {
				t.Errorf("%s report lacks %q", format, want)
			}
		}
	}
	var b bytes.Buffer
	if err := WriteCompare(&b, r, "csv"); err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b.Bytes(), []byte("\n\n"))
	rows, err := csv.NewReader(bytes.NewReader(first)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[1][1] != "hk-cn2-gia" || rows[2][14] != "109098.60" || rows[2][13] != "USD" {
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
