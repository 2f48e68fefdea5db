package report

import (
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// gpuVerdictCell is the delivery verdict as the ranking shows it beside the
// line's SLA verdict.
func gpuVerdictCell(g *verdict.GPUDelivery) string {
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

// addGPUVerdictColumn puts the delivery columns after SLA in the ranking:
// GPU when any candidate records GPU outputs, host and interconnect when
// any records a trial bundle with those parts (the ranking of others stays
// as it was). Each says pass, FAIL, unchecked or "-".
func addGPUVerdictColumn(t *Table, r *compare.Result) {
	cols := []struct {
		title string
		cell  func(*verdict.Evaluation) string
		any   bool
	}{
		{"GPU", func(e *verdict.Evaluation) string { return gpuVerdictCell(e.GPU) }, false},
		{"host", func(e *verdict.Evaluation) string {
			if e.Host == nil {
				return "-"
			}
			return verdictCell(e.Host.Verdict)
		}, false},
		{"interconnect", func(e *verdict.Evaluation) string {
			if e.Interconnect == nil {
				return "-"
			}
			return verdictCell(e.Interconnect.Verdict)
		}, false},
	}
	for _, e := range r.Candidates {
		cols[0].any = cols[0].any || e.GPU != nil
		cols[1].any = cols[1].any || e.Host != nil
		cols[2].any = cols[2].any || e.Interconnect != nil
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
	for _, c := range cols {
		if !c.any {
			continue
		}
		t.Headers = append(t.Headers[:at:at], append([]string{c.title}, t.Headers[at:]...)...)
		t.Align = t.Align[:at] + "l" + t.Align[at:]
		for i, e := range r.Candidates {
			row := t.Rows[i]
			t.Rows[i] = append(row[:at:at], append([]string{c.cell(e)}, row[at:]...)...)
		}
		at++
	}
}

// verdictCell is a delivery part's verdict as the ranking shows it.
func verdictCell(v string) string {
	switch v {
	case "fail":
		return "FAIL"
	case "pass":
		return "pass"
	}
	return "unchecked"
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
			if !format.Machine() {
				per = fmtMoney(per)
			}
		}
		failed := strings.Join(g.Failed(), ", ")
		t.Rows = append(t.Rows, []string{e.Name, dashIfEmpty(g.Model), strconv.Itoa(g.Cards), dashIfEmpty(g.Interconnect),
			gpuVerdictCell(g), dashIfEmpty(failed), per, cur, g.Source})
		if !format.Machine() {
			for _, c := range g.Checks {
				if !c.Pass {
					t.Notes = append(t.Notes, e.Name+": "+c.Name+": required "+anyCell(c.Required)+", measured "+anyCell(c.Measured)+noteSuffix(c.Note))
				}
			}
		}
	}
	if !format.Machine() {
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
