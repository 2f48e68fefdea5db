package verdict

import (
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
)

// Savings compares the recommended candidate with the next passing one.
type Savings struct {
	Versus   string  `json:"versus"`
	Amount   string  `json:"amount"`
	Currency string  `json:"currency"`
	Percent  float64 `json:"percent"`
	// Months is the horizon the saving is over (absent: a month).
	Months int `json:"months,omitempty"`
}

// TrafficSummary describes the traffic month offers were priced on.
type TrafficSummary struct {
	Source      string    `json:"source"` // the log file, or "synthetic"
	Shape       string    `json:"shape,omitempty"`
	PeriodStart time.Time `json:"period_start"`
	PeriodEnd   time.Time `json:"period_end"`
	InBytes     int64     `json:"in_bytes"`
	OutBytes    int64     `json:"out_bytes"`
	// P95bps is the 95th percentile under the default method and direction rule.
	P95bps  float64 `json:"p95_bps"`
	PeakBps float64 `json:"peak_bps"`
	Samples int     `json:"samples"`
	Missing int     `json:"missing"`
	// Rates are the per-slot rates in bit/s (in, out), for plots; not in JSON.
	Times  []time.Time `json:"-"`
	InBps  []float64   `json:"-"`
	OutBps []float64   `json:"-"`
}

// Evaluation is one candidate's outcome: route quality, SLA checks, cost.
type Evaluation struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Region   string `json:"region"`
	// Rank is 1-based in Result.Ranking.
	Rank    int            `json:"rank"`
	Route   RouteQuality   `json:"route"`
	Targets []TargetResult `json:"targets"`
	SLA     Verdict        `json:"sla"`
	Monthly *Monthly       `json:"monthly"`
	// Horizon is the offer priced over the horizon (horizon_months,
	// --horizon): the figure ranking uses when set; absent without one.
	Horizon *CandidateHorizon `json:"horizon,omitempty"`
	// WhatIf prices the same traffic under the candidate's other offers (what_if:).
	WhatIf []SchemeCost `json:"what_if,omitempty"`
	// Usage is the offer at the buyer's used hours: idle month, cost per used GPU-hour.
	Usage *CandidateUsage `json:"usage"`
	// Throughput is the bw test (live bandwidth_test or recorded.bw); nil
	// when the candidate has none.
	Throughput *Throughput `json:"throughput,omitempty"`
	// GPU is the delivery verdict of recorded.gpu against the gpu: block;
	// nil when the candidate records no GPU outputs.
	GPU *GPUDelivery `json:"gpu,omitempty"`
	// Host is the delivery form and inventory of recorded.trial against
	// the host: block; nil without a trial bundle.
	Host *HostDelivery `json:"host,omitempty"`
	// Interconnect is recorded.trial's all-reduce and ibstat outputs
	// against the interconnect: block; nil without them.
	Interconnect *InterconnectDelivery `json:"interconnect,omitempty"`
	// DeliveryFailed names the parts of the recorded delivery that fail
	// the order ("gpu"): such a candidate fails, is never recommended and
	// ranks among the failing ones. Empty when every recorded part passes
	// or under --advisory-delivery (then the failure is a warning only).
	DeliveryFailed []string `json:"delivery_failed,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	// Windows summarise the probes of each SLA window judged (sla.windows,
	// or the evening default when the recording covers one); absent
	// without one.
	Windows []WindowSummary `json:"windows,omitempty"`
	// Hourly is the day in 24 hours of the users' zone over the recorded
	// probes; absent without probe times (a live one-shot run).
	Hourly []HourSummary `json:"hourly,omitempty"`
	// Families are the route of each address family, side by side, when
	// the candidate has IPv4 and IPv6 targets or sla.families is set
	// (issue 32); Route is then the worse family's. Absent otherwise.
	Families []FamilyQuality `json:"families,omitempty"`
}

// RouteQuality is what the probes and traces say about the line.
// Each RTT, loss and jitter figure is the worst over the candidate's targets,
// so a slow TCP port cannot hide behind a fast ICMP reply or the reverse.
type RouteQuality struct {
	LineClass string `json:"line_class"`
	// Direction is the direction the line class was validated in:
	// "both", "forward", "return" or "none".
	Direction    string              `json:"direction"`
	Evidence     *route.LineEvidence `json:"evidence,omitempty"`
	ForwardClass string              `json:"forward_class,omitempty"`
	ReturnClass  string              `json:"return_class,omitempty"`
	// ForwardASPath and ReturnASPath are the chains of networks each
	// direction crosses (route.ASPath); absent with --no-asn.
	ForwardASPath []route.ASHop `json:"forward_as_path,omitempty"`
	ReturnASPath  []route.ASHop `json:"return_as_path,omitempty"`
	Notes         []string      `json:"notes,omitempty"`
	// Carriers is the route toward the users of each carrier (users with a
	// carrier): return class from a backtrace recording, forward class when
	// the vantage is on that carrier, sla.line_classes_by_carrier checked.
	Carriers []route.UserRoute `json:"carriers,omitempty"`
	// Paths is the line class of every path of a multipath trace (trace
	// --multipath, a candidate with multipath: true), forward paths first;
	// sla.line_classes holds only if it holds on each. PathsSummary says,
	// per direction, whether one class holds on every path or which path
	// differs and where it leaves (route.ClassifyPaths). Absent without
	// multipath traces.
	Paths        []PathLine    `json:"paths,omitempty"`
	PathsSummary []string      `json:"paths_summary,omitempty"`
	RTT          RTTSummary    `json:"rtt_ms"`
	Loss         float64       `json:"loss"`
	Jitter       JitterSummary `json:"jitter_ms"`
	Sent         int           `json:"sent"`
	Recv         int           `json:"recv"`
	// Stretch is min RTT / physical floor; 0 when either is unknown.
	Stretch float64 `json:"stretch"`
	// PathMTU is the forward route's path MTU in bytes (trace --mtu, or a
	// live run with sla.min_path_mtu); absent when not measured.
	PathMTU      int      `json:"path_mtu_bytes,omitempty"`
	FloorMs      float64  `json:"floor_ms"`
	StretchFlags []string `json:"stretch_flags,omitempty"`
	// Samples are the RTTs (ms) of the first target that answered, for the
	// distribution plot; SamplesOf names that target.
	Samples   []float64 `json:"-"`
	SamplesOf string    `json:"-"`
	// Throughput is the candidate's bw test, for the throughput checks of
	// CheckSLA (in the document it is Evaluation.Throughput).
	Throughput *Throughput `json:"-"`
	// Forward and Return are the traces the class was read from (nil when
	// not traced), and Backtrace the return recording's other routes: kept
	// out of the document, for HideHops to know what the hops named.
	Forward, Return *route.Trace        `json:"-"`
	Backtrace       *route.BacktraceDoc `json:"-"`

	// RoutesSeen are the distinct routes of the traces taken over the days
	// (SeenRoute); absent without a list of traces or a journal.
	RoutesSeen []SeenRoute `json:"routes_seen,omitempty"`
}

// RTTSummary is the RTT block of a route, in ms.
type RTTSummary struct {
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// JitterSummary is the jitter block of a route, in ms: route's three
// labelled figures (RFC 3550, mean absolute, PDV p95).
type JitterSummary = stats.Jitter

// TargetResult is one probe target's statistics.
type TargetResult struct {
	candidates.Target
	Sent       int            `json:"sent"`
	Recv       int            `json:"recv"`
	Late       int            `json:"late"`
	Duplicates int            `json:"duplicates"`
	Loss       float64        `json:"loss"`
	RTT        stats.RTTStats `json:"rtt_ms"`
	Jitter     stats.Jitter   `json:"jitter_ms"`
	// Samples are RTTs (ms) of received replies in send order.
	Samples []float64 `json:"-"`
}

// Verdict is the outcome of the SLA checks of one candidate.
type Verdict struct {
	Pass   bool    `json:"pass"`
	Checks []Check `json:"checks"`
}

// Check is one SLA threshold against its measurement. Required and Measured
// are numbers for numeric checks; for line_class Required is the list of
// accepted classes and Measured the class found.
type Check struct {
	Name string `json:"name"`
	// Window is the span of time the check judged: WindowAll (the whole
	// recording) or the name of an SLA window (sla.windows, the evening
	// default; issue 30).
	Window   string `json:"window"`
	Required any    `json:"required"`
	Measured any    `json:"measured"`
	Unit     string `json:"unit"`
	Pass     bool   `json:"pass"`
	// Note explains a failure that is not a plain threshold (no data, direction).
	Note string `json:"note,omitempty"`
	// Unmeasured is true when the check fails for want of a measurement
	// (no answer, no trace, no throughput test, an unknown floor) rather
	// than on a figure: compare fails it, serve reports it apart
	// (linecheck_sla_check_nodata), never as a measured fail.
	Unmeasured bool `json:"-"`
	// NotApplicable is true for a check that does not apply (stretch when
	// the region is in the vantage's city): it passes with a note beginning
	// NotApplicable, Measured is nil, and the tables say "n/a".
	NotApplicable bool `json:"-"`
	// Hours are the window's hours in words ("20:00–23:00 Asia/Shanghai");
	// "" for the whole recording.
	Hours string `json:"-"`
	// Family is the address family the check judged (sla.families: each
	// family's route on its own, issue 32); absent for the whole candidate.
	Family string `json:"family,omitempty"`
}

// Monthly is a candidate's monthly cost: the offer's bandwidth scheme on the
// users' traffic plus every other item, in the offer currency, and converted.
type Monthly struct {
	Offer    string     `json:"offer"`
	Scheme   string     `json:"scheme"`
	Total    string     `json:"total"`
	Currency string     `json:"currency"`
	Items    []CostItem `json:"items"`
	// Converted is Total in the fx base currency, the figure ranking uses.
	Converted Money `json:"converted"`
	// Rate is the fx rate applied (base per 1 offer currency); "1" when equal.
	Rate string `json:"fx_rate"`
	// Carry is billing's judgement of the offer's port against the traffic
	// (null when the offer states no port): an offer whose port the 95th
	// exceeds cannot carry the traffic and is never recommended.
	Carry *billing.Carry `json:"carry"`
	// Projected is the month projected from a partial traffic recording
	// (null when the log covers every day of its month, or --no-projection).
	Projected *Projected `json:"projected"`
}

// Projected is a candidate's month projected from a partial recording:
// per-GB volume scaled to the month, the 95th as measured (billing's
// Projection), converted like the bill.
type Projected struct {
	Total        Money  `json:"total"`
	Converted    Money  `json:"converted"`
	RecordedDays int    `json:"recorded_days"`
	PeriodDays   int    `json:"period_days"`
	Basis        string `json:"basis"`
}

// Money is an amount with its currency.
type Money = billing.Money

// CostItem is one line of a monthly bill. Quantity, Unit, UnitPrice and
// AmountExact are the bill's own fields (quantity × unit_price =
// amount_exact, before rounding), absent when the bill has none; Amount is
// rounded in the offer's currency and Detail says the same in words.
type CostItem struct {
	Name        string `json:"name"`
	Kind        string `json:"kind,omitempty"`
	Quantity    string `json:"quantity,omitempty"`
	Unit        string `json:"unit,omitempty"`
	UnitPrice   string `json:"unit_price,omitempty"`
	Amount      string `json:"amount"`
	AmountExact string `json:"amount_exact,omitempty"`
	Detail      string `json:"detail,omitempty"`
	Billing     string `json:"billing,omitempty"` // compute: hourly, monthly, reserved or spot
}

// SchemeCost is a what-if price of the same traffic under another offer.
type SchemeCost struct {
	Offer     string `json:"offer"`
	Scheme    string `json:"scheme"`
	Total     string `json:"total"`
	Currency  string `json:"currency"`
	Converted Money  `json:"converted"`
	// Carry judges the what-if offer's port (null without one).
	Carry *billing.Carry `json:"carry"`
}

// Passes reports whether the candidate passes: its SLA checks all pass and
// no part of its recorded delivery fails (DeliveryFailed).
func (e *Evaluation) Passes() bool {
	return e.SLA.Pass && len(e.DeliveryFailed) == 0
}

// ValidationGap says, in one phrase, which direction the line class was
// not validated in ("" when both were): the SLA note, the report's warning
// and the HTML verdict all say it this way. A trace that ran but gave no
// class is told apart from no trace at all.
func (q RouteQuality) ValidationGap() string {
	switch q.Direction {
	case "both":
		return ""
	case "forward":
		return "line class validated on the forward path only; the return path (server → users) was not checked"
	case "return":
		return "line class validated on the return path only; the forward path (users → server) was not checked"
	}
	if q.ForwardClass != "" || q.ReturnClass != "" {
		return "traced, but no direction gave a line class; the line class is not validated"
	}
	return "no trace in either direction; the line class is not validated"
}

// CanCarry reports whether the offer can carry the traffic (true without a port).
func (m *Monthly) CanCarry() bool { return m == nil || m.Carry == nil || m.Carry.CanCarry }
