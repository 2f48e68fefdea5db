package report

import (
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/compare"
)

// gpuVerdictCell is the delivery verdict as the ranking shows it beside the
// line's SLA verdict.
func gpuVerdictCell(g *compare.GPUDelivery) string {
	switch {
	case g == nil:
		return "-"
	case g.Verdict == "fail":
		return "FAIL"
	case g.Verdict == "pass":
		return "pass"
	}
	return "unchecked"
}

// addGPUVerdictColumn puts a GPU column after SLA in the ranking when any
// candidate records GPU outputs (the ranking of others stays as it was).
func addGPUVerdictColumn(t *Table, r *compare.Result) {
	any := false
	for _, e := range r.Candidates {
		any = any || e.GPU != nil
	}
	if !any {
		return
	}
	at := -1
	for i, h := range t.Headers {
		if h == "SLA" {
			at = i + 1
		}
	}
	if at < 0 {
		return
	}
	t.Headers = append(t.Headers[:at:at], append([]string{"GPU"}, t.Headers[at:]...)...)
	t.Align = t.Align[:at] + "l" + t.Align[at:]
	for i, e := range r.Candidates {
		row := t.Rows[i]
		t.Rows[i] = append(row[:at:at], append([]string{gpuVerdictCell(e.GPU)}, row[at:]...)...)
	}
}

// compareGPUTable is the delivery view: per candidate with recorded.gpu,
// what was delivered, the failed checks, and the price per delivered
// card-hour; ok is false when no candidate records GPU outputs.
func compareGPUTable(r *compare.Result, format Format) (Table, bool) {
	t := Table{Name: "gpu", Title: "GPU delivery (recorded nvidia-smi outputs against the candidate's gpu: block)",
		Headers: []string{"candidate", "delivered", "cards", "interconnect", "delivery", "failed checks", "per delivered card-hour", "currency", "source"},
		Align:   "llrlllrll", Movable: []string{"source"}}
	any := false
	for _, e := range r.Candidates {
		g := e.GPU
		if g == nil {
			continue
		}
		any = true
		per, cur := "-", ""
		if g.PerDeliveredCardHour != nil {
			per, cur = g.PerDeliveredCardHour.Text(), g.PerDeliveredCardHour.Currency
			if format != FormatCSV {
				per = fmtMoney(per)
			}
		}
		failed := strings.Join(g.Failed(), ", ")
		t.Rows = append(t.Rows, []string{e.Name, dashIfEmpty(g.Model), strconv.Itoa(g.Cards), dashIfEmpty(g.Interconnect),
			gpuVerdictCell(g), dashIfEmpty(failed), per, cur, g.Source})
		if format != FormatCSV {
			for _, c := range g.Checks {
				if !c.Pass {
					t.Notes = append(t.Notes, e.Name+": "+c.Name+": required "+anyCell(c.Required)+", measured "+anyCell(c.Measured)+noteSuffix(c.Note))
				}
			}
		}
	}
	if format != FormatCSV {
		t.Notes = append(t.Notes, "per delivered card-hour = the monthly total in the ranking currency / the used hours (the month's hours without a usage profile) / the cards delivered; linecheck gpu --from DIR shows the delivery in full")
	}
	return t, any
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}
