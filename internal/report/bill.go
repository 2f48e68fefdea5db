package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

// BillSeriesDoc is the JSON document of a bill over several series.
type BillSeriesDoc struct {
	Schema string            `json:"schema"`
	Series []*billing.Report `json:"series"`
}

// num renders a float figure at full precision (the report's figures are
// already free of float noise, billing.Sig), never in exponent form.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// mbps renders a rate in bit/s as Mbit/s (RateUnit) with two decimals and
// thousands separated, the figure alone (the unit is in the header).
func mbps(bps float64) string { return GroupThousands(strconv.FormatFloat(bps/1e6, 'f', 2, 64)) }

// money renders a plain decimal amount for a table: rounded to the
// currency's minor unit, every minor digit written, thousands separated
// ("16000" USD → "16,000.00"); "-" when there is none; a string that is not a
// decimal is shown as it is.
func money(s, currency string) string {
	if s == "" {
		return "-"
	}
	v, err := decimal.NewFromString(s)
	if err != nil {
		return s
	}
	return Money(v, billing.MinorUnit(currency))
}

// humanBytes renders a volume (billing.HumanBytes, the one volume renderer).
func humanBytes(b int64) string { return billing.HumanBytes(float64(b)) }

// BillTables renders one bill report as tables for reading: traffic and
// samples, the 95th per direction rule, one row per offer, the charges behind
// each amount and the warnings. Figures are rounded (Mbps to 2 decimals).
func BillTables(r *billing.Report, named bool) []Table {
	title := func(s string) string {
		if named && r.Name != "" {
			return r.Name + " — " + s
		}
		return s
	}
	sm := r.Samples
	traffic := Table{
		Title:   title(fmt.Sprintf("Traffic %s (%s)", r.Period.Label, r.Period.TZ)),
		Headers: []string{"figure", "in", "out", "note"},
		Align:   "lrrl",
		Movable: []string{"note"},
		Rows: [][]string{
			{"volume", humanBytes(r.Traffic.InBytes), humanBytes(r.Traffic.OutBytes), fmt.Sprintf("in+out %s", humanBytes(r.Traffic.TotalBytes))},
			{"average " + RateUnit, mbps(r.Traffic.InAvgBps), mbps(r.Traffic.OutAvgBps), "over measured time"},
			{"peak " + RateUnit, mbps(r.Traffic.InPeakBps), mbps(r.Traffic.OutPeakBps), "highest 5-minute slot"},
			{"samples", fmt.Sprintf("%d of %d", sm.Present, sm.Expected), PctFloor(sm.Coverage, 2),
				fmt.Sprintf("%d missing in %s, --gaps %s; %d of %s with traffic", sm.Missing, billing.Count(sm.GapRuns, "gap", ""), sm.Gaps, sm.ValidDays, billing.Count(r.Period.Days, "day", "")) + filledNote(sm)},
		},
	}
	if r.Scale != 1 {
		traffic.Notes = append(traffic.Notes, fmt.Sprintf("traffic scaled ×%g (--scale)", r.Scale))
	}
	if r.Period.Boundary == billing.BoundaryLibreNMS {
		traffic.Notes = append(traffic.Notes, "period boundary librenms: slots stamped at their end, > from and <= to − 1 s (the period's last slot drops)")
	}
	tables := []Table{traffic}
	if p := r.P95; p != nil {
		tables = append(tables, Table{
			Title:   title(fmt.Sprintf("95th percentile, %s: rank %d of %s (gaps %s)", p.Method, p.Rank, billing.Count(p.N, "sample", ""), p.Gaps)),
			Headers: []string{"rule", RateUnit, "what it is"},
			Align:   "lrl",
			Rows:    p95Rows(p, mbps),
		})
	}
	if len(r.Bills) > 0 {
		tables = append(tables, billsTable(r, title))
		if pt := projectionTable(r, title); pt != nil {
			tables = append(tables, *pt)
		}
		tables = append(tables, chargesTable(r, title, true))
		if h := billHorizonTable(r, title, false); h != nil {
			tables = append(tables, *h)
		}
		if u := billUsageTable(r, title); u != nil {
			tables = append(tables, *u)
		}
	}
	if len(r.Warnings) > 0 { // as notes: a long warning wraps to the width, a cell would not
		w := Table{Title: title("Warnings")}
		for _, x := range r.Warnings {
			w.Notes = append(w.Notes, "warning: "+x)
		}
		tables = append(tables, w)
	}
	return tables
}

func p95Rows(p *billing.P95Block, f func(float64) string) [][]string {
	return [][]string{
		{"greater", f(p.GreaterBps), "max(95th in, 95th out) — most ISPs"},
		{"max", f(p.MaxBps), "95th of per-slot max(in, out)"},
		{"sum", f(p.SumBps), "95th of per-slot in+out"},
		{"in", f(p.InBps), "inbound only"},
		{"out", f(p.OutBps), "outbound only"},
	}
}

// billedOn says what a bill's bandwidth charge is measured on, for reading.
func billedOn(b billing.Bill) string {
	switch {
	case b.Rule.BillableMbps != "":
		return fmt.Sprintf("%s %s (%s %s)", GroupThousands(trimDec(b.Rule.BillableMbps, 2)), RateUnit, ruleShort(b.Rule), b.Rule.Direction)
	case b.Rule.BillableGB != "":
		return fmt.Sprintf("%s %s %s", GroupThousands(trimDec(b.Rule.BillableGB, 1)), b.Rule.Unit, b.Rule.Direction)
	case b.Utilisation != nil:
		return fmt.Sprintf("port, %.0f %% used at 95th", 100*b.Utilisation.P95)
	}
	return ""
}

// carryMark is the bills table's word on whether the offer's port carries the traffic.
func carryMark(c *billing.Carry) string {
	if c == nil {
		return ""
	}
	switch c.Status {
	case billing.CarryCannot:
		return fmt.Sprintf("✗ cannot carry: 95th %s %s > %s %s port", GroupThousands(strconv.FormatFloat(c.P95Mbps, 'f', 1, 64)), RateUnit, GroupThousands(num(c.PortMbps)), RateUnit)
	case billing.CarryPeakAbove:
		return fmt.Sprintf("⚠ peak above the port: slots in %d, out %d, in+out %d", c.SlotsAbove.In, c.SlotsAbove.Out, c.SlotsAbove.Sum)
	}
	return ""
}

func billsTable(r *billing.Report, title func(string) string) Table {
	cur := ""
	if r.Compare != nil {
		cur = r.Compare.Currency
	}
	bills := Table{
		Title:   title("Bills"),
		Headers: []string{"offer", "scheme", "billed on", "bandwidth", "total", "currency", "in " + cur, "note"},
		Align:   "lllrrlrl",
		Movable: []string{"note", "billed on"},
	}
	for _, b := range r.Bills {
		cmp := money(b.AmountCompare, cur)
		if b.AmountCompare == "" {
			cmp = money(b.Amount, b.Currency)
		}
		var marks []string
		if b.Cheapest {
			marks = append(marks, "◀ cheapest")
		}
		if m := carryMark(b.Carry); m != "" {
			marks = append(marks, m)
		}
		bills.Rows = append(bills.Rows, []string{b.Offer, b.Scheme, dashIfEmpty(billedOn(b)), money(b.Bandwidth, b.Currency), money(b.Amount, b.Currency), b.Currency, cmp, strings.Join(marks, " ")})
	}
	if r.Compare == nil { // several currencies without exchange rates: no common column
		bills.Headers = slices.Delete(bills.Headers, 6, 7)
		bills.Align = "lllrrll"
		for i := range bills.Rows {
			bills.Rows[i] = slices.Delete(bills.Rows[i], 6, 7)
		}
	}
	if c := r.Compare; c != nil {
		if r.Cheapest != "" && c.Dearest != r.Cheapest {
			bills.Notes = append(bills.Notes, fmt.Sprintf("dearest/cheapest = %.2f× (%s vs %s)", c.Ratio, c.Dearest, r.Cheapest))
		}
		for _, be := range c.BreakEven {
			bills.Notes = append(bills.Notes, "break-even: "+be.Text)
		}
	}
	return bills
}

// projectionTable is the month projected from a partial recording, beside
// the bills as recorded (nil when the recording covers every day).
func projectionTable(r *billing.Report, title func(string) string) *Table {
	p := r.Projection
	if p == nil {
		return nil
	}
	cur := ""
	if r.Compare != nil {
		cur = r.Compare.Currency
	}
	t := Table{
		Title: title(fmt.Sprintf("Projected month (not a bill: %d of %d days recorded, %s of the slots; --no-projection leaves it out)",
			p.RecordedDays, p.PeriodDays, PctFloor(p.Coverage, 1))),
		Headers: []string{"offer", "scheme", "as recorded", "projected", "currency", "projected in " + cur, "bandwidth basis"},
		Align:   "llrrlrl",
		Movable: []string{"bandwidth basis"},
	}
	for i, pb := range p.Bills {
		cmp := money(pb.AmountCompare, cur)
		if pb.AmountCompare == "" {
			cmp = money(pb.Amount, pb.Currency)
		}
		t.Rows = append(t.Rows, []string{pb.Offer, pb.Scheme, money(r.Bills[i].Amount, pb.Currency), money(pb.Amount, pb.Currency), pb.Currency, cmp, pb.Basis})
	}
	if cur == "" {
		t.Headers = slices.Delete(t.Headers, 5, 6)
		t.Align = "llrrll"
		for i := range t.Rows {
			t.Rows[i] = slices.Delete(t.Rows[i], 5, 6)
		}
	}
	t.Notes = append(t.Notes, p.Note)
	return &t
}

// chargesTable lists every line item; for reading the offer is named once and
// quantities and amounts are shortened, in machine form every row is whole.
func chargesTable(r *billing.Report, title func(string) string, reading bool) Table {
	items := Table{
		Title:   title("Charges (exact; each total is rounded once)"),
		Headers: []string{"offer", "item", "quantity", "unit", "unit price", "amount", "note"},
		Align:   "llrlrrl",
		Movable: []string{"note"},
	}
	for _, b := range r.Bills {
		for i, it := range b.Items {
			name, q, a := b.Offer, it.Quantity, it.Amount
			if reading {
				if i > 0 {
					name = ""
				}
				q, a = GroupThousands(trimDec(q, 3)), money(a, b.Currency)
			}
			up, unit := it.UnitPrice, it.Unit
			if reading {
				up = GroupThousands(up)
				if unit == "Mbps" { // the core's unit name; tables say RateUnit (JSON keeps it)
					unit = RateUnit
				}
			}
			items.Rows = append(items.Rows, []string{name, it.Name, q, unit, up, a, it.Note})
		}
		if reading {
			items.Notes = append(items.Notes, fmt.Sprintf("%s: %s", b.Offer, b.Rule.Text))
		}
	}
	return items
}

// BillCSVTables renders one bill report for machines: the tables of
// BillTables with figures in base units at full precision (bytes, bit/s),
// exact decimal quantities and amounts, named columns, and the bill's carry
// verdict and billable quantity as columns of their own.
func BillCSVTables(r *billing.Report, named bool) []Table {
	sm, tr := r.Samples, r.Traffic
	tables := []Table{{
		Headers: []string{"figure", "in", "out", "note"},
		Rows: [][]string{
			{"volume_bytes", strconv.FormatInt(tr.InBytes, 10), strconv.FormatInt(tr.OutBytes, 10), "in+out " + strconv.FormatInt(tr.TotalBytes, 10)},
			{"average_bps", num(tr.InAvgBps), num(tr.OutAvgBps), "over measured time"},
			{"peak_bps", num(tr.InPeakBps), num(tr.OutPeakBps), "highest 5-minute slot"},
			{"samples", strconv.Itoa(sm.Present), strconv.Itoa(sm.Present),
				fmt.Sprintf("of %d expected (coverage %s); %d missing in %s, --gaps %s; %d of %s with traffic; boundary %s",
					sm.Expected, num(sm.Coverage), sm.Missing, billing.Count(sm.GapRuns, "gap", ""), sm.Gaps, sm.ValidDays, billing.Count(r.Period.Days, "day", ""), r.Period.Boundary) + filledNote(sm)},
		},
	}}
	if p := r.P95; p != nil {
		rows := p95Rows(p, num)
		t := Table{Headers: []string{"rule", "bps", "what it is", "method", "rank", "n"}}
		for _, row := range rows {
			t.Rows = append(t.Rows, append(row, string(p.Method), strconv.Itoa(p.Rank), strconv.Itoa(p.N)))
		}
		tables = append(tables, t)
	}
	if len(r.Bills) > 0 {
		bills := Table{Headers: []string{"offer", "scheme", "billable", "unit", "statistic", "method", "direction", "value_bps", "value_bytes",
			"bandwidth", "total", "currency", "amount_compare", "compare_currency", "cheapest", "carry", "slots_above_port_in", "slots_above_port_out", "slots_above_port_sum"}}
		for _, b := range r.Bills {
			billable, unit := b.Rule.BillableMbps, b.Rule.Unit
			if billable == "" {
				billable = b.Rule.BillableGB
			}
			bps, byts := "", ""
			if b.Rule.Bps != 0 || b.Rule.BillableMbps != "" {
				bps = num(b.Rule.Bps)
			}
			if b.Rule.Statistic == "volume" {
				byts = strconv.FormatInt(b.Rule.Bytes, 10)
			}
			cmpAmount, cmpCur := b.AmountCompare, b.CompareCurrency
			if r.Compare != nil && cmpAmount == "" {
				cmpAmount, cmpCur = b.Amount, r.Compare.Currency
			}
			carry, in, out, sum := "", "", "", ""
			if c := b.Carry; c != nil {
				carry = c.Status
				in, out, sum = strconv.Itoa(c.SlotsAbove.In), strconv.Itoa(c.SlotsAbove.Out), strconv.Itoa(c.SlotsAbove.Sum)
			}
			bills.Rows = append(bills.Rows, []string{b.Offer, b.Scheme, billable, unit, b.Rule.Statistic, string(b.Rule.Method), string(b.Rule.Direction),
				bps, byts, b.Bandwidth, b.Amount, b.Currency, cmpAmount, cmpCur, strconv.FormatBool(b.Cheapest), carry, in, out, sum})
		}
		tables = append(tables, bills, chargesTable(r, func(s string) string { return s }, false))
		tables = append(tables, usageCSVTable(r)...)
	}
	if len(r.Warnings) > 0 {
		w := Table{Headers: []string{"warning"}}
		for _, x := range r.Warnings {
			w.Rows = append(w.Rows, []string{x})
		}
		tables = append(tables, w)
	}
	if named { // CSV has no table titles: every row names its series
		for ti := range tables {
			t := &tables[ti]
			t.Headers = append([]string{"series"}, t.Headers...)
			for i := range t.Rows {
				t.Rows[i] = append([]string{r.Name}, t.Rows[i]...)
			}
		}
	}
	return tables
}

// ruleShort names the statistic of a rate bill for the bills table.
func ruleShort(r billing.Rule) string {
	switch r.Statistic {
	case "p95":
		return "95th " + string(r.Method)
	case "daily-peak-average":
		return "avg daily peak"
	}
	return r.Statistic
}

// trimDec shortens a decimal string to at most places decimals for display.
func trimDec(s string, places int) string {
	i := strings.IndexByte(s, '.')
	if i < 0 || len(s)-i-1 <= places {
		return s
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(v, 'f', places, 64)
}

// filledNote says, on the samples line, how much of the coverage the logging
// tool filled in rather than measured (MRTG over a poller outage).
func filledNote(sm billing.Samples) string {
	if sm.Filled == 0 {
		return ""
	}
	return fmt.Sprintf("; %d filled in by the logger, not measured: %.2f %% known measured", sm.Filled, 100*sm.MeasuredCoverage)
}

// PortSummary is one line per series (port, interface, file) of a bill
// over several, as LibreNMS lists ports: volumes, the 95th (greater, under
// the report's method), coverage, and the cheapest offer with its amount.
func PortSummary(reports []*billing.Report) Table {
	t := Table{Title: fmt.Sprintf("Ports (%d series; each is detailed below)", len(reports)),
		Headers: []string{"series", "in", "out", "total", "95th " + RateUnit, "samples", "cheapest", "amount", "currency"},
		Align:   "lrrrrrlrl"}
	for _, r := range reports {
		p95 := "-"
		if r.P95 != nil {
			p95 = mbps(r.P95.GreaterBps)
		}
		cheapest, amount, cur := "-", "-", ""
		for _, b := range r.Bills {
			if b.Cheapest {
				cheapest, amount, cur = b.Offer, money(b.Amount, b.Currency), b.Currency
			}
		}
		t.Rows = append(t.Rows, []string{r.Name, humanBytes(r.Traffic.InBytes), humanBytes(r.Traffic.OutBytes), humanBytes(r.Traffic.TotalBytes),
			p95, PctFloor(r.Samples.Coverage, 2), cheapest, amount, cur})
	}
	if len(reports[0].Bills) == 0 { // no --offers: no price columns
		t.Headers, t.Align = t.Headers[:6], t.Align[:6]
		for i := range t.Rows {
			t.Rows[i] = t.Rows[i][:6]
		}
	}
	return t
}
