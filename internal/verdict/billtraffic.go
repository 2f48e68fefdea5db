package verdict

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
	"github.com/linecheck/linecheck/internal/candidates"
)

// TrafficMonth returns the traffic series the candidates file bills and its
// billing month: the traffic log (several interfaces summed per slot) or the
// synthetic month, and traffic.period in traffic.tz, else the last calendar
// month with data (for a log) or the month before now (synthetic). compare and
// the TUI price the same series over the same month through it.
func TrafficMonth(f *candidates.File, now time.Time) (*billing.Series, billing.Period, error) {
	t := f.Traffic
	loc := time.UTC
	if t.TZ != "" {
		l, err := time.LoadLocation(t.TZ)
		if err != nil {
			return nil, billing.Period{}, fmt.Errorf("%s: traffic.tz: %w", f.Path, err)
		}
		loc = l
	}
	var (
		s   *billing.Series
		p   billing.Period
		err error
	)
	if t.Period != "" {
		if p, err = billing.ParseMonth(t.Period, loc); err != nil {
			return nil, billing.Period{}, fmt.Errorf("%s: traffic.period: %w", f.Path, err)
		}
	}
	if t.Log != "" {
		series, err := ingest.ReadFile(t.Log, ingest.ReadOptions{})
		if err != nil {
			return nil, billing.Period{}, fmt.Errorf("traffic.log: %w", err)
		}
		if len(series) == 0 {
			return nil, billing.Period{}, fmt.Errorf("traffic.log: %s: no traffic series", t.Log)
		}
		if len(series) == 1 {
			s = series[0]
		} else {
			// Several interfaces on one bill: summed per slot first (docs/billing.md, direction rules).
			s = billing.Aggregate(series, "aggregate")
		}
		if t.Period == "" {
			if p, err = billing.LastMonthWithData(series, loc); err != nil {
				return nil, billing.Period{}, fmt.Errorf("traffic.log: %s: %w", t.Log, err)
			}
		}
		return s, p, nil
	}
	if t.Period == "" {
		// From the first of this month, not from now: AddDate(0, -1, 0) on
		// March 31 gives March 3.
		n := now.In(loc)
		p = billing.MonthPeriod(n.Year(), n.Month(), loc)
		p = billing.MonthPeriod(p.Start.AddDate(0, -1, 0).Year(), p.Start.AddDate(0, -1, 0).Month(), loc)
	}
	if s, err = billing.Synthetic(p, t.MonthlyGB, t.PeakMbps, t.Shape); err != nil {
		return nil, billing.Period{}, fmt.Errorf("%s: traffic: %w", f.Path, err)
	}
	return s, p, nil
}

// billTraffic prices the file's traffic month (TrafficMonth) under offers
// with each offer's own rules, at o's used hours.
func billTraffic(f *candidates.File, now time.Time, offers []*billing.Offer, o billing.Options) (*TrafficSummary, *billing.Series, billing.Period, map[string]offerBill, error) {
	t := f.Traffic
	s, p, err := TrafficMonth(f, now)
	if err != nil {
		return nil, nil, billing.Period{}, nil, err
	}
	sum := &TrafficSummary{}
	if t.Log != "" {
		sum.Source = relTo(f.Dir, t.Log)
	} else {
		sum.Source = fmt.Sprintf("synthetic %g GB/month, peak %g Mbit/s", t.MonthlyGB, t.PeakMbps)
		sum.Shape = t.Shape
	}
	rep, bills, err := billOffers(s, p, offers, o)
	if err != nil {
		return nil, nil, billing.Period{}, nil, err
	}
	sum.PeriodStart, sum.PeriodEnd = p.Start, p.End
	sum.InBytes, sum.OutBytes = rep.Traffic.InBytes, rep.Traffic.OutBytes
	sum.PeakBps = max(rep.Traffic.InPeakBps, rep.Traffic.OutPeakBps)
	if rep.P95 != nil {
		sum.P95bps = rep.P95.GreaterBps
	}
	sum.Samples, sum.Missing = rep.Samples.Present, rep.Samples.Missing
	sum.Times, sum.InBps, sum.OutBps = billing.PeriodRates(s, p, 1)
	return sum, s, p, bills, nil
}

// billOffers bills the series over the period under offers with o.
func billOffers(s *billing.Series, p billing.Period, offers []*billing.Offer, o billing.Options) (*billing.Report, map[string]offerBill, error) {
	rep, err := billing.BillSeries(s, p, offers, o)
	if errors.Is(err, billing.ErrUsageHours) {
		return nil, nil, err // names its field (--usage-hours or file:line usage.hours)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("traffic: %w", err)
	}
	bills := map[string]offerBill{}
	for i, b := range rep.Bills {
		// The exact total, not the rounded Amount: money is rounded once, after
		// the fx conversion, never twice.
		total := b.ExactTotal()
		ob := offerBill{offer: b.Offer, scheme: b.Scheme, currency: b.Currency, total: total, bill: b}
		for _, it := range b.Items {
			amt := it.Amount
			if d, err := decimal.NewFromString(it.Amount); err == nil {
				amt = billing.FormatMoney(d, b.Currency)
			}
			detail := strings.TrimSpace(fmt.Sprintf("%s %s × %s", it.Quantity, it.Unit, it.UnitPrice))
			if it.Quantity == "" {
				detail = ""
			}
			if it.Note != "" {
				detail = strings.TrimSpace(detail + "; " + it.Note)
				detail = strings.TrimPrefix(detail, "; ")
			}
			ob.items = append(ob.items, CostItem{Name: it.Name, Kind: it.Kind, Quantity: it.Quantity, Unit: it.Unit,
				UnitPrice: it.UnitPrice, Amount: amt, AmountExact: it.Amount, Detail: detail, Billing: it.Billing})
		}
		if pr := rep.Projection; pr != nil && i < len(pr.Bills) {
			pb := pr.Bills[i]
			ob.projected = &Projected{Total: pb.Total(), RecordedDays: pr.RecordedDays, PeriodDays: pr.PeriodDays, Basis: pb.Basis}
		}
		for _, w := range rep.Lint {
			if w.Offer == b.Offer {
				ob.lint = append(ob.lint, "lint: "+w.Text)
			}
		}
		bills[b.Offer] = ob
	}
	return rep, bills, nil
}
