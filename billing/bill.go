package billing

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Schema is the JSON schema name of a bill report.
const Schema = "linecheck.bill/v1"

// Options override the offers' rules for a what-if; "" keeps each offer's own
// (and the defaults nearest-rank, greater, skip).
type Options struct {
	Method      Method    // 95th method for every offer and the p95 block
	Direction   Direction // direction rule for every rate-billed offer (p95, peak, average, daily-peak-average)
	Gaps        string    // skip (default) or zero
	Boundary    Boundary  // which slots belong to the period ("" = slot-start)
	AllowCoarse bool      // bill percentile schemes on data coarser than 300 s
	Scale       float64   // multiply the traffic by this factor (0 = 1)
	UsageHours  Dec       // used hours of the GPU machine for every offer (--usage-hours; unset = the offers')
	// HorizonMonths is the months offers are priced over (horizon_months,
	// --horizon; 0 = one month): a purchase with a resale value spreads
	// price − resale over it in the monthly bill. PriceHorizon prices it.
	HorizonMonths int
	// Lint checks every offer's quote (LintOffers) into Report.Lint and the
	// warnings; Market adds the card-hour bands of a dated reference file.
	Lint   bool
	Market *MarketFile
	// NoProjection leaves out the month projected from a partial recording
	// (--no-projection; Report.Projection stays nil).
	NoProjection bool
}

// ErrTooLarge is returned when the traffic cannot be billed: a slot that is
// not a finite, non-negative byte count, or a period volume beyond int64
// bytes (9.2 EB — more than any link carries in a month, so the log's units
// or the --scale factor are wrong). Volumes are never printed wrapped.
var ErrTooLarge = errors.New("traffic beyond what can be billed")

// ErrCoarse is returned when percentile billing is asked of coarse data.
var ErrCoarse = errors.New("coarse data refused for percentile billing")

// Report is the linecheck.bill/v1 document for one series.
type Report struct {
	Schema   string    `json:"schema,omitempty"`
	Name     string    `json:"name,omitempty"`
	Source   string    `json:"source,omitempty"`
	Format   string    `json:"format,omitempty"`
	Period   PeriodDoc `json:"period"`
	Samples  Samples   `json:"samples"`
	Traffic  Traffic   `json:"traffic"`
	P95      *P95Block `json:"p95"`
	Bills    []Bill    `json:"bills"`
	Cheapest string    `json:"cheapest"`
	// Horizon states the months every offer is priced over (absent: none).
	Horizon string `json:"horizon,omitempty"`
	// Lint is what --lint found in the quotes (absent without --lint).
	Lint    []LintWarning `json:"lint,omitempty"`
	Compare *Compare      `json:"comparison,omitempty"`
	Scale   float64       `json:"scale"`
	// Projection is the month projected from a partial recording (null when
	// every day has traffic, or with --no-projection).
	Projection *Projection `json:"projection"`
	Warnings   []string    `json:"warnings"`
	measures   []*measure  // per bill, for break-even
}

// PeriodDoc is the period as written in the report.
type PeriodDoc struct {
	Start string `json:"start"`
	End   string `json:"end"`
	TZ    string `json:"tz"`
	Label string `json:"label"`
	Days  int    `json:"days"`
	// Boundary is the rule that decided which slots belong to the period.
	Boundary Boundary `json:"boundary"`
}

// Samples is the coverage of the period.
type Samples struct {
	Expected  int      `json:"expected"`
	Present   int      `json:"present"`
	Missing   int      `json:"missing"`
	Coverage  float64  `json:"coverage"`      // present / expected, 0..1
	StepS     int64    `json:"step_s"`        // slot width: 300
	SourceS   int64    `json:"source_step_s"` // spacing of the source samples
	Gaps      string   `json:"gaps_policy"`
	GapRuns   int      `json:"gap_runs"`
	GapList   []GapRun `json:"gaps"` // the first 50 runs of missing slots
	ValidDays int      `json:"valid_days"`
	// Filled counts the present slots the logging tool filled in rather than
	// measured (Series.Filled: MRTG over a poller outage); MeasuredCoverage
	// is (present − filled) / expected, what is known to be measured, beside
	// Coverage as the log reports it.
	Filled           int     `json:"filled"`
	MeasuredCoverage float64 `json:"measured_coverage"`
	// Resolutions says which source rows the period's traffic came from,
	// finest first, when the source mixes steps (Series.Parts: a vnstat
	// export's 5-minute and hourly entries, an MRTG log's consolidated
	// rows); absent otherwise.
	Resolutions []Resolution `json:"resolutions,omitempty"`
}

// Resolution is the share of a period read from source rows of one step.
type Resolution struct {
	StepS int64   `json:"step_s"`
	Rows  int     `json:"rows"`  // source rows that meet the period
	Hours float64 `json:"hours"` // of the period they cover
}

// Traffic is the volume and the simple rates of the period.
type Traffic struct {
	InBytes    int64   `json:"in_bytes"`
	OutBytes   int64   `json:"out_bytes"`
	TotalBytes int64   `json:"total_bytes"`
	InAvgBps   float64 `json:"in_avg_bps"` // over measured time
	OutAvgBps  float64 `json:"out_avg_bps"`
	InPeakBps  float64 `json:"in_peak_bps"`
	OutPeakBps float64 `json:"out_peak_bps"`
}

// P95Block is the 95th percentile under the method in force, for all five direction rules.
type P95Block struct {
	Method     Method  `json:"method"`
	InBps      float64 `json:"in_bps"`
	OutBps     float64 `json:"out_bps"`
	GreaterBps float64 `json:"greater_bps"`
	MaxBps     float64 `json:"max_bps"`
	SumBps     float64 `json:"sum_bps"`
	N          int     `json:"n"`    // samples the percentile is taken over
	Rank       int     `json:"rank"` // 1-based ascending rank billed (linear: the lower neighbour)
	Gaps       string  `json:"gaps"`
}

// Of returns the 95th under the direction rule d ("" = greater).
func (b *P95Block) Of(d Direction) float64 {
	switch d {
	case DirIn:
		return b.InBps
	case DirOut:
		return b.OutBps
	case DirMax:
		return b.MaxBps
	case DirSum:
		return b.SumBps
	}
	return b.GreaterBps
}

// Bill is one offer priced for the period's traffic.
type Bill struct {
	Offer    string     `json:"offer"`
	Provider string     `json:"provider,omitempty"`
	Line     string     `json:"line,omitempty"`
	Scheme   string     `json:"scheme"`
	Amount   string     `json:"amount"`
	Currency string     `json:"currency"`
	Items    []LineItem `json:"items"`
	Rule     Rule       `json:"rule"`
	// Bandwidth is the amount of the bandwidth items alone (rounded).
	Bandwidth string `json:"bandwidth_amount"`
	// AmountCompare is the amount in the comparison currency (when it differs).
	AmountCompare   string       `json:"amount_compare,omitempty"`
	CompareCurrency string       `json:"compare_currency,omitempty"`
	Cheapest        bool         `json:"cheapest"`
	Utilisation     *Utilisation `json:"utilisation,omitempty"`
	// Carry judges the offer's port against the traffic (null without port_mbps).
	Carry *Carry   `json:"carry"`
	Flags []string `json:"flags"`
	// Usage is the bill at the buyer's used hours: idle share, cost per GPU-hour.
	Usage *UsageDoc `json:"usage"`
	// Horizon is the offer priced over Options.HorizonMonths (absent without
	// a horizon); the cheapest offer is then the cheapest over it.
	Horizon *Horizon `json:"horizon,omitempty"`

	total, compare decimal.Decimal // exact, unrounded
	// projectedBW is the month's per-GB bandwidth projected from a partial
	// recording (nil: the bill's), which a horizon repeats.
	projectedBW   *decimal.Decimal
	projectedNote string
}

// LineItem is one charge: quantity × unit_price = amount (exact, before the
// single rounding of the bill's total).
type LineItem struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"` // bandwidth, compute, storage, ip, transfer, support, other
	Quantity  string `json:"quantity"`
	Unit      string `json:"unit"`
	UnitPrice string `json:"unit_price"`
	Amount    string `json:"amount"`
	Note      string `json:"note,omitempty"`
	Billing   string `json:"billing,omitempty"` // compute: hourly, monthly, reserved or spot
}

// Rule says exactly what was measured for the bandwidth charge.
type Rule struct {
	Statistic    string    `json:"statistic"` // p95, peak, average, daily-peak-average, volume, port
	Method       Method    `json:"method,omitempty"`
	Direction    Direction `json:"direction,omitempty"`
	Decided      Direction `json:"decided_by,omitempty"` // greater: which direction was larger
	Gaps         string    `json:"gaps,omitempty"`
	N            int       `json:"n,omitempty"`
	Rank         int       `json:"rank,omitempty"`
	Bps          float64   `json:"value_bps,omitempty"`
	Bytes        int64     `json:"value_bytes,omitempty"`
	Prorate      string    `json:"prorate,omitempty"`
	ValidDays    int       `json:"valid_days,omitempty"`
	Days         int       `json:"days,omitempty"`
	BillableMbps string    `json:"billable_mbps,omitempty"`
	BillableGB   string    `json:"billable_gb,omitempty"` // in GB or GiB, see Unit
	Unit         string    `json:"unit,omitempty"`        // Mbps, GB (10^9 bytes) or GiB (2^30 bytes)
	Text         string    `json:"text"`
}

// Utilisation of a fixed port (fractions of the port speed).
type Utilisation struct {
	PortMbps   float64    `json:"port_mbps"`
	Average    float64    `json:"average"` // greater of the average in/out rates
	P95        float64    `json:"p95"`     // greater of the 95th in/out
	Peak       float64    `json:"peak"`
	SlotsAbove SlotsAbove `json:"slots_above_port"`
}

// Compare is the comparison of the offers for this traffic.
type Compare struct {
	Currency  string      `json:"currency"`
	Ratio     float64     `json:"ratio_dearest_cheapest"`
	Dearest   string      `json:"dearest"`
	BreakEven []BreakEven `json:"break_even"`
	// BreakEvenHours lists the used hours at which two offers' totals cross.
	BreakEvenHours []BreakEvenHours `json:"break_even_hours"`
}

// BreakEven is a traffic level at which two offers cost the same: an offer
// and the cheapest one, or a per-GB offer and a rate-billed (95th …) one.
type BreakEven struct {
	Offer    string  `json:"offer"`
	Versus   string  `json:"versus"`
	Scale    float64 `json:"scale"`     // × this period's traffic
	OutBytes int64   `json:"out_bytes"` // outbound volume at that scale
	P95Bps   float64 `json:"p95_bps"`   // 95th (nearest-rank, greater) at that scale
	Amount   string  `json:"amount"`    // what both cost there, in Currency
	Currency string  `json:"currency"`
	Text     string  `json:"text"`
}

// BillSeries prices the traffic of s in p under every offer (see the package
// doc for every rule). With no offers the report holds the traffic, the
// samples and the 95th figures with "bills": [].
func BillSeries(s *Series, p Period, offers []*Offer, opt Options) (*Report, error) {
	if s == nil {
		return nil, ErrNoData
	}
	if err := opt.settle(); err != nil {
		return nil, err
	}
	if !p.End.After(p.Start) {
		return nil, fmt.Errorf("empty period %s – %s", p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339))
	}
	name := s.Name
	if s.Source != "" {
		name = s.Source
		if s.Name != "" && !strings.Contains(s.Source, s.Name) {
			name += " (" + s.Name + ")"
		}
	}
	switch opt.Boundary {
	case "":
		opt.Boundary = BoundaryStart
	case BoundaryStart, BoundaryLibreNMS:
	default:
		return nil, fmt.Errorf("boundary %q: use one of %s", opt.Boundary, joinNames(Boundaries))
	}
	v := newView(s, p, opt.Boundary, opt.Gaps, opt.Scale)
	if len(v.slots) == 0 {
		cover := "the log has no samples inside it"
		if len(s.Slots) > 0 {
			loc := p.location()
			cover = fmt.Sprintf("the data covers %s to %s", time.Unix(s.Slots[0].Start, 0).In(loc).Format("2006-01-02 15:04"),
				time.Unix(s.Slots[len(s.Slots)-1].Start+v.width, 0).In(loc).Format("2006-01-02 15:04 MST"))
		}
		return nil, fmt.Errorf("%s: %w in period %s (%s)", name, ErrNoData, p.Label(), cover)
	}
	if err := v.checkVolume(opt.Scale); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res := v.resolutions(s)
	// A multi-resolution source is coarse where its coarse rows meet the
	// period: its 5-minute part alone bills as 5-minute data.
	step := coarseStep(s, v)
	coarse := step > SlotSeconds
	needPct := len(offers) == 0
	for _, o := range offers {
		switch o.Bandwidth.Scheme {
		case "p95", "peak", "daily-peak-average":
			needPct = true
		}
	}
	if coarse && !opt.AllowCoarse && needPct {
		where, hint := "", ""
		if len(res) > 1 {
			where = " in part of the period, which has " + resolutionText(res)
		}
		if s.FineHint != "" {
			hint = " (" + s.FineHint + ")"
		}
		return nil, fmt.Errorf("%s: step %d s is coarser than the 300 s grid%s: %w (averaging over %d minutes hides the bursts a 95th, peak or daily peak bills, so the result is biased low); use 5-minute data%s, or --allow-coarse to bill it anyway", name, step, where, ErrCoarse, step/60, hint)
	}

	r := &Report{Schema: Schema, Name: s.Name, Source: s.Source, Format: s.Format, Scale: opt.Scale, Bills: []Bill{}, Warnings: []string{}}
	r.Warnings = append(r.Warnings, s.Warnings...)
	loc := p.location()
	r.Period = PeriodDoc{Start: p.Start.In(loc).Format(time.RFC3339), End: p.End.In(loc).Format(time.RFC3339), TZ: p.TZ, Label: p.Label(), Days: len(v.days), Boundary: opt.Boundary}
	r.addSamples(v, s, opt.Gaps)
	r.Samples.SourceS = step
	if len(res) > 1 {
		r.Samples.Resolutions = res
		r.Warnings = append(r.Warnings, "volume from "+resolutionText(res))
	}
	if coarse {
		if needPct {
			r.Warnings = append(r.Warnings, fmt.Sprintf("source step %d s is coarser than 300 s: percentile figures are biased low (--allow-coarse)", step))
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("source step %d s is coarser than 300 s: 95th figures are not reported", step))
		}
	}
	r.Traffic = v.traffic()
	if !coarse || needPct {
		r.P95 = v.p95Block(opt.Method, opt.Gaps, len(offers) == 0)
	}

	for _, o := range offers {
		if _, _, err := usedHours(o, p, opt); err != nil {
			return nil, err
		}
		if err := needHorizon(o, opt.HorizonMonths); err != nil {
			return nil, err
		}
		if err := needBaseline(o); err != nil {
			return nil, err
		}
	}
	for _, o := range offers {
		b, ms := priceOffer(v, o, opt)
		if sm := r.Samples; o.Bandwidth.Scheme == "per-gb" && sm.Present > 0 && sm.ValidDays < r.Period.Days {
			k := float64(sm.Expected) / float64(sm.Present)
			a, _, _ := ms.perGB(k)
			b.projectedBW = &a
			b.projectedNote = fmt.Sprintf(" (projected from %d of %d days recorded: volume × %.4g)", sm.ValidDays, r.Period.Days, k)
		}
		if opt.HorizonMonths > 0 {
			h, err := PriceHorizon(o, b, opt.HorizonMonths, opt)
			if err != nil {
				return nil, err
			}
			b.Horizon = h
		}
		r.Bills = append(r.Bills, b)
		r.measures = append(r.measures, ms)
		r.Warnings = append(r.Warnings, prefixed(o.Name, b.Flags)...)
	}
	if opt.HorizonMonths > 0 {
		r.Horizon = HorizonText(opt.HorizonMonths)
	}
	addUsage(r)
	if opt.Lint || opt.Market != nil {
		r.Lint = LintOffers(offers, r.Bills, opt.Market)
		for _, w := range r.Lint {
			r.Warnings = append(r.Warnings, "lint: "+w.Text)
		}
	}
	compareBills(r, v)
	if r.Compare != nil {
		r.Compare.BreakEvenHours = breakEvenHours(r)
	}
	if !opt.NoProjection {
		r.Projection = project(r)
	}
	r.tidy()
	return r, nil
}

// settle checks the options BillSeries takes and fills their defaults
// (the boundary apart: it is checked once the series is named).
func (opt *Options) settle() error {
	if opt.Method != "" {
		if _, err := ParseMethod(string(opt.Method)); err != nil {
			return err
		}
	}
	if opt.Direction != "" {
		if _, err := ParseDirection(string(opt.Direction)); err != nil {
			return err
		}
	}
	switch opt.Gaps {
	case "":
		opt.Gaps = "skip"
	case "skip", "zero":
	default:
		return fmt.Errorf("gaps %q: use skip or zero", opt.Gaps)
	}
	if opt.Scale == 0 {
		opt.Scale = 1
	}
	if opt.HorizonMonths < 0 {
		return fmt.Errorf("horizon %d months: want 1 or more", opt.HorizonMonths)
	}
	if opt.Scale < 0 || math.IsNaN(opt.Scale) || math.IsInf(opt.Scale, 0) {
		return fmt.Errorf("scale %v: want a positive factor", opt.Scale)
	}
	return nil
}

// addSamples fills the report's samples block from the view, with the
// warnings for filled-in and missing slots.
func (r *Report) addSamples(v *view, s *Series, gaps string) {
	present := len(v.slots)
	r.Samples = Samples{Expected: v.expected, Present: present, Missing: max(v.expected-present, 0), StepS: v.width, SourceS: s.Step, Gaps: gaps, ValidDays: v.validDays}
	if v.expected > 0 {
		r.Samples.Coverage = math.Round(float64(present)/float64(v.expected)*1e6) / 1e6
	}
	for _, t := range s.Filled {
		if t >= v.from && t < v.to {
			r.Samples.Filled++
		}
	}
	r.Samples.MeasuredCoverage = r.Samples.Coverage
	if v.expected > 0 && r.Samples.Filled > 0 {
		r.Samples.MeasuredCoverage = math.Round(float64(present-r.Samples.Filled)/float64(v.expected)*1e6) / 1e6
		r.Warnings = append(r.Warnings, fmt.Sprintf("coverage %.2f %% as the log reports it, %.2f %% known to be measured: %d present slots were filled in by the logging tool, not measured",
			100*r.Samples.Coverage, 100*r.Samples.MeasuredCoverage, r.Samples.Filled))
	}
	r.Samples.GapList, r.Samples.GapRuns = v.gapRuns(50)
	if r.Samples.GapList == nil {
		r.Samples.GapList = []GapRun{}
	}
	if r.Samples.Missing > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d slots missing (%.2f %% coverage, %s); percentiles %s",
			r.Samples.Missing, v.expected, 100*r.Samples.Coverage, Count(r.Samples.GapRuns, "gap", ""), map[string]string{"skip": "over present slots (--gaps skip)", "zero": "count missing slots as zero (--gaps zero)"}[gaps]))
	}
}

// traffic is the view's volumes, mean rates and peaks.
func (v *view) traffic() Traffic {
	var in, out, inPeak, outPeak float64
	for _, sl := range v.slots {
		in += sl.In
		out += sl.Out
		inPeak = max(inPeak, sl.In)
		outPeak = max(outPeak, sl.Out)
	}
	secs := float64(int64(len(v.slots)) * v.width)
	t := Traffic{InBytes: int64(math.Round(in)), OutBytes: int64(math.Round(out)), InAvgBps: in * 8 / secs, OutAvgBps: out * 8 / secs,
		InPeakBps: v.rate(inPeak), OutPeakBps: v.rate(outPeak)}
	t.TotalBytes = t.InBytes + t.OutBytes
	return t
}

// p95Block is the report's 95th figures by method m ("" = the first of
// Methods) in every direction. last says nothing reads the sorted samples
// again (no offers), so the ranks may be selected in place.
func (v *view) p95Block(m Method, gaps string, last bool) *P95Block {
	if m == "" {
		m = Methods[0]
	}
	p95 := func(d Direction) stat { return v.p95(m, d, false) }
	if last {
		// Select the ranks, the four parts' in one pass where it
		// settles them.
		v.rankParts(m)
		p95 = func(d Direction) stat { return v.p95Ranked(m, d) }
	}
	g := p95(DirGreater)
	b := &P95Block{Method: m, InBps: p95(DirIn).bps, OutBps: p95(DirOut).bps, GreaterBps: g.bps,
		MaxBps: p95(DirMax).bps, SumBps: p95(DirSum).bps, N: g.n, Rank: g.rank, Gaps: gaps}
	v.releaseScratch()
	return b
}

// sigDigits is the precision of the report's float figures: far beyond any
// measurement, and short of float64's last digits, which are noise from the
// arithmetic (0.0020152499999999997 for 0.00201525).
const sigDigits = 12

// Sig rounds x to the report's 12 significant digits (no float noise).
func Sig(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', sigDigits, 64), 64)
	return v
}

// tidy rounds every float figure of the report to Sig: the JSON and CSV carry
// these full-precision figures; tables round further for reading.
func (r *Report) tidy() {
	t := &r.Traffic
	for _, x := range []*float64{&t.InAvgBps, &t.OutAvgBps, &t.InPeakBps, &t.OutPeakBps} {
		*x = Sig(*x)
	}
	if p := r.P95; p != nil {
		for _, x := range []*float64{&p.InBps, &p.OutBps, &p.GreaterBps, &p.MaxBps, &p.SumBps} {
			*x = Sig(*x)
		}
	}
	for i := range r.Bills {
		b := &r.Bills[i]
		b.Rule.Bps = Sig(b.Rule.Bps)
		if c := b.Carry; c != nil {
			c.P95Mbps, c.PeakMbps = Sig(c.P95Mbps), Sig(c.PeakMbps)
		}
	}
	if c := r.Compare; c != nil {
		for i := range c.BreakEven {
			c.BreakEven[i].P95Bps = Sig(c.BreakEven[i].P95Bps)
		}
	}
}

func prefixed(name string, flags []string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = name + ": " + f
	}
	return out
}

// PeriodRates returns the slot start times and the in/out rates (bit/s) of s
// inside p, scaled, for charts.
func PeriodRates(s *Series, p Period, scale float64) (t []time.Time, in, out []float64) {
	if scale == 0 {
		scale = 1
	}
	v := newView(s, p, BoundaryStart, "skip", scale)
	loc := p.location()
	for _, sl := range v.slots {
		t = append(t, time.Unix(sl.Start, 0).In(loc))
		in = append(in, v.rate(sl.In))
		out = append(out, v.rate(sl.Out))
	}
	return t, in, out
}

// Aggregate sums several series per slot into one named series, so that a
// bill over several ports takes its percentile of the sums (never a combination
// of per-port percentiles). A slot is present when any input has it; slots
// covered by only some inputs are counted in a warning.
func Aggregate(series []*Series, name string) *Series {
	out := &Series{Name: name, Format: "aggregate", Step: SlotSeconds}
	idx := map[int64]int{}
	count := map[int64]int{}
	var sources []string
	for _, s := range series {
		if s == nil {
			continue
		}
		sources = append(sources, s.Name)
		out.Step = max(out.Step, s.Step)
		if out.FineHint == "" {
			out.FineHint = s.FineHint
		}
		for _, sl := range s.Slots {
			if i, ok := idx[sl.Start]; ok {
				out.Slots[i].In += sl.In
				out.Slots[i].Out += sl.Out
			} else {
				idx[sl.Start] = len(out.Slots)
				out.Slots = append(out.Slots, sl)
			}
			count[sl.Start]++
		}
		for _, w := range s.Warnings {
			out.Warnings = append(out.Warnings, s.Name+": "+w)
		}
	}
	slices.SortFunc(out.Slots, func(a, b Slot) int { return cmpInt(a.Start, b.Start) })
	out.Parts = aggregateParts(series)
	partial := 0
	for _, c := range count {
		if c < len(sources) {
			partial++
		}
	}
	if partial > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("aggregate of %d series: %d slots are present in only some of them (summed over those present)", len(sources), partial))
	}
	out.Source = fmt.Sprint(sources)
	return out
}

// aggregateParts is the parts of an aggregate: when any input mixes
// resolutions, every input's parts (a uniform input is one part over its
// slots), so that the engine still finds the coarse stretches and the
// report counts every input's rows; nil otherwise.
func aggregateParts(series []*Series) []Part {
	mixed := false
	for _, s := range series {
		mixed = mixed || s != nil && len(s.Parts) > 0
	}
	if !mixed {
		return nil
	}
	var out []Part
	for _, s := range series {
		switch {
		case s == nil || len(s.Slots) == 0:
		case len(s.Parts) > 0:
			out = append(out, s.Parts...)
		default:
			step := max(s.Step, SlotSeconds)
			a, b := s.Slots[0].Start, s.Slots[len(s.Slots)-1].Start+SlotSeconds
			out = append(out, Part{Start: a, End: b, Step: step, Rows: int((b - a + step - 1) / step)})
		}
	}
	slices.SortFunc(out, func(a, b Part) int { return cmpInt(a.Start, b.Start) })
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ExactTotal is the bill's unrounded total in its currency: convert this, not
// the rounded Amount, so that money is rounded once.
func (b Bill) ExactTotal() decimal.Decimal { return b.total }
