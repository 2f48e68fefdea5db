package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/billing"
)

// BillCSVNames are the tables `bill --format csv --table NAME` writes, the
// default first. Each is one tidy table: one header, one row per entity, a
// leading series column, figures in base units at full precision with the
// unit in the column name.
var BillCSVNames = []string{"bills", "p95", "items", "traffic", "usage", "break_even", "horizon"}

// billCSV is the one CSV table name ("" = bills) of the reports.
func billCSV(name string, reports []*billing.Report) (Table, error) {
	if name == "" {
		name = BillCSVNames[0]
	}
	if !slices.Contains(BillCSVNames, name) {
		return Table{}, fmt.Errorf("--table %q: bill's CSV tables are %s", name, strings.Join(BillCSVNames, ", "))
	}
	t := Table{Name: name}
	for _, r := range reports {
		part := billCSVTable(r, name)
		t.Headers = append([]string{"series"}, part.Headers...)
		for _, row := range part.Rows {
			t.Rows = append(t.Rows, append([]string{r.Name}, row...))
		}
	}
	return t, nil
}

// billCSVTable is one report's rows of the CSV table name (without the series column).
func billCSVTable(r *billing.Report, name string) Table {
	switch name {
	case "traffic":
		sm, tr := r.Samples, r.Traffic
		return Table{
			Headers: []string{"period", "tz", "days", "boundary", "in_bytes", "out_bytes", "total_bytes", "in_avg_bps", "out_avg_bps", "in_peak_bps", "out_peak_bps",
				"samples_expected", "samples_present", "samples_missing", "gap_runs", "gaps", "coverage", "filled", "valid_days", "scale"},
			Rows: [][]string{{r.Period.Label, r.Period.TZ, strconv.Itoa(r.Period.Days), string(r.Period.Boundary),
				strconv.FormatInt(tr.InBytes, 10), strconv.FormatInt(tr.OutBytes, 10), strconv.FormatInt(tr.TotalBytes, 10),
				num(tr.InAvgBps), num(tr.OutAvgBps), num(tr.InPeakBps), num(tr.OutPeakBps),
				strconv.Itoa(sm.Expected), strconv.Itoa(sm.Present), strconv.Itoa(sm.Missing), strconv.Itoa(sm.GapRuns), sm.Gaps, num(sm.Coverage),
				strconv.Itoa(sm.Filled), strconv.Itoa(sm.ValidDays), num(r.Scale)}},
		}
	case "p95":
		t := Table{Headers: []string{"rule", "p95_bps", "what_it_is", "method", "rank", "n"}}
		if p := r.P95; p != nil {
			for _, row := range p95Rows(p, num) {
				t.Rows = append(t.Rows, append(row, string(p.Method), strconv.Itoa(p.Rank), strconv.Itoa(p.N)))
			}
		}
		return t
	case "items":
		t := Table{Headers: []string{"offer", "item", "kind", "quantity", "unit", "unit_price", "amount", "currency", "note"}}
		for _, b := range r.Bills {
			for _, it := range b.Items {
				t.Rows = append(t.Rows, []string{b.Offer, it.Name, it.Kind, it.Quantity, it.Unit, it.UnitPrice, it.Amount, b.Currency, it.Note})
			}
		}
		return t
	case "usage":
		t := Table{Headers: []string{"offer", "used_hours", "period_hours", "from", "cards", "total", "idle_amount", "idle_share", "per_gpu_hour", "currency"}}
		if u := usageCSVTable(r); len(u) > 0 {
			t.Rows = u[0].Rows
		}
		return t
	case "horizon": // empty without --horizon
		t := Table{Headers: []string{"offer", "item", "kind", "amount", "currency", "rule"}}
		if h := billHorizonTable(r, func(s string) string { return s }, true); h != nil {
			t.Rows = h.Rows
		}
		return t
	case "break_even":
		t := Table{Headers: []string{"kind", "offer", "versus", "scale", "out_bytes", "p95_bps", "used_hours", "amount", "currency", "text"}}
		if c := r.Compare; c != nil {
			for _, be := range c.BreakEven {
				t.Rows = append(t.Rows, []string{"traffic", be.Offer, be.Versus, num(be.Scale), strconv.FormatInt(be.OutBytes, 10), num(be.P95Bps), "", be.Amount, be.Currency, be.Text})
			}
			for _, be := range c.BreakEvenHours {
				t.Rows = append(t.Rows, []string{"used-hours", be.A, be.B, "", "", "", num(be.Hours), be.Amount, be.Currency, be.Text})
			}
		}
		return t
	}
	// bills: the bills table of BillCSVTables, with the item names.
	for _, t := range BillCSVTables(r, false) {
		if len(t.Headers) > 0 && t.Headers[0] == "offer" && t.Headers[1] == "scheme" {
			t.Headers = append(t.Headers, "amount")
			ti := slices.Index(t.Headers, "total")
			for i := range t.Rows {
				t.Rows[i] = append(t.Rows[i], t.Rows[i][ti])
			}
			return t
		}
	}
	return Table{Headers: []string{"offer", "scheme", "billable", "unit", "statistic", "method", "direction", "value_bps", "value_bytes",
		"bandwidth", "total", "currency", "amount_compare", "compare_currency", "cheapest", "carry", "slots_above_port_in", "slots_above_port_out", "slots_above_port_sum", "amount"}}
}
