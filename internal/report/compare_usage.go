package report

import (
	"fmt"
	"strconv"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/plot"
)

// compareUsageTable lists each candidate at the buyer's used hours of the GPU
// machine, in the base currency: the month's total, what it costs with the
// cards idle, and per used GPU-hour; the notes say at which used hours two
// priced offers cost the same. Nil without usage figures.
func compareUsageTable(r *compare.Result, format Format) *Table {
	if r.Usage == nil {
		return nil
	}
	money := fmtMoney
	if format.Machine() {
		money = func(s string) string { return s }
	}
	t := Table{
		Title:   fmt.Sprintf("GPU usage: %s of %s hours used (%s), in %s", fmtHours(r.Usage.UsedHours), fmtHours(r.Usage.PeriodHours), usageFrom(r.Usage.From), r.FXBase),
		Headers: []string{"candidate", "offer", "used h", "cards", "monthly " + r.FXBase, "idle (0 h)", "idle share", "per used GPU-h"},
		Align:   "llrrrrrr",
	}
	for _, e := range r.Candidates {
		u, m := e.Usage, e.Monthly
		if u == nil || m == nil {
			continue
		}
		cards, share, per := "-", "-", "-"
		if u.Cards != nil {
			cards = strconv.FormatFloat(*u.Cards, 'f', -1, 64)
		}
		if u.IdleShare != nil {
			share = fmt.Sprintf("%.1f %%", 100**u.IdleShare)
			if format.Machine() {
				share = strconv.FormatFloat(*u.IdleShare, 'f', -1, 64)
			}
		}
		if u.PerGPUHour != nil {
			per = money(u.PerGPUHour.Text())
		}
		if format.Machine() {
			cards, share, per = csvDash(cards), csvDash(share), csvDash(per)
		}
		t.Rows = append(t.Rows, []string{e.Name, m.Offer, fmtHours(u.UsedHours), cards, money(m.Converted.Text()), money(u.Idle.Text()), share, per})
	}
	if !format.Machine() {
		bes := r.Usage.BreakEvenHours
		if r.Horizon != nil { // ranked over the horizon: its crossings
			bes = r.Usage.HorizonBreakEvenHours
		}
		for _, be := range bes {
			t.Notes = append(t.Notes, "break-even: "+be.Text)
		}
	}
	return &t
}

// csvDash leaves an absent figure empty in csv (a cell a machine reads as no value).
func csvDash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// usageSVG plots every priced offer's monthly total (base currency) against
// the used hours, 0 … the period's hours, with the crossings ringed and
// labelled by their hours. Empty without usage figures.
func usageSVG(r *compare.Result) string {
	u := r.Usage
	if u == nil || len(u.Offers) == 0 || u.PeriodHours <= 0 {
		return ""
	}
	ch := plot.XYChart{
		Title:  fmt.Sprintf("Monthly total by used hours (%s h in the period; %s h stated)", fmtHours(u.PeriodHours), fmtHours(u.UsedHours)),
		XLabel: "used hours of the GPU machine", YLabel: r.FXBase + " per month",
		XMin: 0, XMax: u.PeriodHours,
		VLines: []plot.VLine{{Label: fmtHours(u.UsedHours) + " h used", X: u.UsedHours}},
	}
	for _, o := range u.Offers {
		if !o.AtZero.Valid() || !o.AtPeriod.Valid() {
			continue
		}
		a, b := o.AtZero.Amount.InexactFloat64(), o.AtPeriod.Amount.InexactFloat64()
		ch.Curves = append(ch.Curves, plot.Curve{Name: o.Offer, X: []float64{0, u.PeriodHours}, Y: []float64{a, b}})
	}
	for _, be := range u.BreakEvenHours {
		y, err := strconv.ParseFloat(be.Amount, 64)
		if err != nil {
			continue
		}
		ch.Marks = append(ch.Marks, plot.Mark{Label: fmtHours(be.Hours) + " h", X: be.Hours, Y: y})
	}
	return ch.SVG(1000, 420)
}
