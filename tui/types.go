package tui

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/verdict"
)

// HistorySize is how many recent RTT samples a candidate keeps for its
// sparkline, its window percentiles and the route RTT chart.
const HistorySize = 300

// Snapshot is everything the UI shows before the first live update: the
// candidates with their static analysis (line class, routes, costs), the SLA
// thresholds and the traffic profile. A Source loads it.
type Snapshot struct {
	Title      string                  // shown in the title bar, e.g. the candidates file
	Mode       string                  // "replay ×10", "live", "replay ×10 + live"
	SLA        candidates.SLA          // thresholds the live statistics are checked against (verdict.EvaluateLive)
	Candidates []Candidate             // in file order
	Traffic    *verdict.TrafficSummary // the traffic profile the costs are computed on (the core's); nil when none
	Currency   string                  // the currency totals are compared in (fx base)
	Cost       CostOptions             // the options the snapshot's costs were computed with
	// Tracing says live forward traces are running: a route not yet
	// received is being traced, not missing.
	Tracing bool
}

// Candidate is one row of the overview: a server offer with its route quality
// and its monthly cost.
type Candidate struct {
	Name     string
	Provider string
	Region   string
	Target   string // "203.0.113.10 icmp", shown in the detail line

	LineClass  string // cn2-gia, cn2-gt, chinanet-163, cu-9929, cu-4837, cmin2, cmi, transit, unknown
	Confidence string // high, medium, low
	Rule       string // the classification rule that matched
	Direction  string // which direction the class was validated in: "both", "forward" or "return"

	FloorMs float64 // physical floor (2·great-circle distance / 200 km per ms); 0 when unknown

	// Recorded is compare's route quality of the whole recording, shown
	// until live records arrive.
	Recorded verdict.RouteQuality
	// RecordedHourly is the recording's day in 24 hours of the users'
	// zone (compare's hourly), shown on the route screen until live
	// records arrive; nil without probe times or a zone.
	RecordedHourly []verdict.HourSummary
	// Stats are the statistics of the records received so far for the
	// primary target (Target, else the first target seen); Others holds the
	// other targets, by "addr proto[/port]". Like compare, the row shows the
	// worst figure over the targets.
	Stats  LiveStats
	Others map[string]*LiveStats
	// SLA is the verdict's (verdict.EvaluateLive), re-evaluated from Stats
	// as records arrive; no checks until there is something to check.
	SLA verdict.Verdict
	// DeliveryFailed names the parts of the recorded delivery that fail
	// the order (compare.EvaluateDelivery: "gpu", "host"): the row fails,
	// ranks with the failing and is never the cheapest pass, whatever its
	// line does.
	DeliveryFailed []string

	// Throughput is the candidate's throughput test: the recording's
	// (recorded.bw) until a live test (bandwidth_test) gives figures; a
	// failed live test never replaces figures (it is a warning).
	Throughput *verdict.Throughput
	// BWTest names the live throughput test's server ("127.0.0.1 port
	// 5201"); "" without one (no bandwidth_test, or a replay).
	BWTest string
	// bwRunning: the live test is under way (THRU shows "test…").
	bwRunning bool

	// Reference marks a row that is measured but not a candidate (the
	// demo's loopback row): no SLA verdict, no cost.
	Reference bool

	Cost    Cost
	Forward *Route // nil when not traced
	Return  *Route // nil when the return path was not traced
	// Carriers are the return routes toward each user carrier, from a
	// backtrace recording (recorded.return); the route screen switches
	// between them with n.
	Carriers []CarrierRoute

	// Families are the recording's route of each address family
	// (verdict.Evaluation.Families) of a dual-stack candidate; nil
	// otherwise. FamilyRoutes are the live forward routes of the families
	// other than the main target's (family), keyed by family.
	Families     []verdict.FamilyQuality
	FamilyRoutes map[string]*Route
	family       string
	famTraces    map[string]*route.Trace // the latest forward trace of each of FamilyRoutes, for the verdict

	fwdTrace, retTrace *route.Trace // the latest documents, to combine the directions' classes
	// fwdErr is the last forward trace's error while no trace has come
	// since: shown where the route would be, instead of "tracing…".
	fwdErr string
	q      verdict.RouteQuality // the current quality (evaluate)
	// rev counts the changes to the candidate (Model.touched, a new cost):
	// the views' memos of it are keyed by it.
	rev uint64
	// The ranking key (rankKey) as of revision rankRev.
	rankKeyed bool
	rankRev   uint64
	rank      verdict.RankKey
}

// sparkMemo is a drawn sparkline and what it was drawn from.
type sparkMemo struct {
	version uint64
	width   int
	text    string
}

// Summary is the figures a row shows, from the candidate's current quality.
type Summary struct {
	Sent     int
	P50, P95 float64 // ms
	MinRTT   float64 // ms
	JitterMs float64 // the window's mean |D| (the SLA's jitter)
	Loss     float64 // fraction 0..1
	Stretch  float64 // min RTT / floor; 0 when unknown
	// BelowFloor: the minimum RTT is under the physical floor (stretch < 1,
	// geo.FlagBelowFloor), however small the ratio rounds.
	BelowFloor bool
	HaveStats  bool
}

// LiveStats are running statistics over the probe records received so far.
// Counters are cumulative; percentiles are over the last HistorySize samples.
type LiveStats struct {
	Sent, Recv, Lost, Late, Dup int            // since the start
	MinRTT                      float64        // ms, over the window
	Jitter                      float64        // the window's jitter (mean |D|, the SLA's figure), ms
	P50, P95                    float64        // ms, over the window
	RTT                         stats.RTTStats // over the window (verdict.Window.Result)
	J                           stats.Jitter   // over the window; J.RFC3550 is the running value, "now"
	Last                        time.Time
	History                     *Ring // recent samples; NaN marks a lost probe

	win     *verdict.Window      // the latest HistorySize probes, for the figures
	res     verdict.TargetResult // win's figures as of the last settle
	dirty   bool                 // percentiles are stale
	scratch []float64
	family  string // the probed address's family (verdict.Family), for sla.families
}

// Loss is lost/(received+lost): probes whose wait has ended (docs/definitions.md).
// Late replies count as lost for the path, since they missed the timeout.
func (s *LiveStats) Loss() float64 {
	done := s.Recv + s.Lost + s.Late
	if done == 0 {
		return 0
	}
	return float64(s.Lost+s.Late) / float64(done)
}

// CostOptions are the billing choices the cost detail keys change.
type CostOptions struct {
	Method    billing.Method    // 95th method ("" = each offer's own)
	Direction billing.Direction // direction rule ("" = each offer's own)
	Scale     float64           // traffic scale factor (1 = as recorded)
	// UsageHours are the used hours of the GPU machine every offer is priced
	// at when UsageSet (the `u` key, --usage-hours); unset: the offers file's.
	UsageHours float64
	UsageSet   bool
}

// Methods are the 95th-percentile methods the `m` key cycles through; ""
// keeps each offer's own rule.
var Methods = append([]billing.Method{""}, billing.Methods...)

// Directions are the direction rules the `d` key cycles through; "" keeps
// each offer's own rule.
var Directions = append([]billing.Direction{""}, billing.Directions...)

// ruleText names a method or direction choice; "" is the offer's own.
func ruleText[T ~string](s T) string {
	if s == "" {
		return "per offer"
	}
	return string(s)
}

// Scales are the traffic scale factors `+` and `-` step through.
var Scales = []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4}

// DefaultCostOptions keep every offer's own rules, on the traffic as recorded.
func DefaultCostOptions() CostOptions {
	return CostOptions{Scale: 1}
}

// SchemeCost is what the candidate's traffic costs under one bandwidth
// scheme: the offer's own, or one of the provider's other offers (what-if).
type SchemeCost struct {
	Scheme  string // fixed, per-gb, p95 (or peak, average … as billing names them)
	Offer   string
	Detail  string        // "612.3 Mbps billed, commit 500 Mbps"
	Amount  billing.Money // the bandwidth charge alone
	Total   billing.Money // the whole monthly bill of that offer (bandwidth + items)
	Offered bool          // the candidate's offer: the one counted in Cost.Total
	// CannotCarry: the traffic's 95th exceeds the offer's port, so it can
	// never be the cheapest; Carry says why (or what the peak does).
	CannotCarry bool
	Carry       string
}

// CostItem is one other monthly item of an offer (compute, storage, IPs …).
type CostItem struct {
	Name   string
	Detail string
	Amount billing.Money
}

// Level is a horizontal line on the traffic chart: a 95th value or the billed rate.
type Level struct {
	Name string // "95th out"
	Mbps float64
}

// Cost is the monthly cost of one candidate under some CostOptions.
type Cost struct {
	Opts      CostOptions
	Offer     string
	Total     billing.Money // offered scheme + items, in the offer's currency
	TotalBase billing.Money // Total converted to the snapshot currency (for ranking); may equal Total
	FX        float64       // snapshot currency per unit of the offer's currency; 0 means 1
	Schemes   []SchemeCost
	Items     []CostItem
	Levels    []Level // 95th line(s) for the chart
	// Direction is the rule the chart draws: the cost view's, else the
	// offer's own ("" when unknown: in and out).
	Direction  billing.Direction
	CommitMbps float64 // 0 when the offer has no commit
	Notes      []string
	Err        string // why the cost could not be computed
	// UsedHours is the used hours the offer was priced at (nil: not priced)
	// in a period of PeriodHours; Idle the month at 0 used hours and
	// PerGPUHour the total per used GPU-hour, both in the snapshot currency
	// (PerGPUHour empty when the offer states no cards or no hours are used).
	UsedHours   *float64
	PeriodHours float64
	Idle        billing.Money
	PerGPUHour  billing.Money
	// Horizon is the offer priced over the file's horizon_months (nil
	// without one): the figure the ranking uses when set.
	Horizon *HorizonCost
}

// HorizonCost is an offer's total over the horizon, in its currency and in
// the snapshot currency.
type HorizonCost struct {
	Months int
	Total  billing.Money
	Base   billing.Money
}

// Scheme returns the cheapest priced offer under the named scheme.
func (c Cost) Scheme(name string) (SchemeCost, bool) {
	var best SchemeCost
	ok := false
	for _, s := range c.Schemes {
		if s.Scheme == name && s.Total.Valid() && (!ok || s.Total.Amount.LessThan(best.Total.Amount)) {
			best, ok = s, true
		}
	}
	return best, ok
}

// trafficGrid is the traffic chart's drawing buffer: the snapshot's
// traffic (compare.TrafficSummary, the core's) with its slots placed on
// the period's 5-minute grid, so gaps stay gaps (NaN).
type trafficGrid struct {
	Start   time.Time
	Step    time.Duration
	InMbps  []float64
	OutMbps []float64
}

// gridOf places ts's present slots on its period's grid; nil without
// traffic or without slots.
func gridOf(ts *verdict.TrafficSummary) *trafficGrid {
	if ts == nil || len(ts.Times) == 0 {
		return nil
	}
	step := billing.SlotSeconds * time.Second
	n := max(int(ts.PeriodEnd.Sub(ts.PeriodStart)/step), 0)
	g := &trafficGrid{Start: ts.PeriodStart, Step: step, InMbps: make([]float64, n), OutMbps: make([]float64, n)}
	for k := range n {
		g.InMbps[k], g.OutMbps[k] = math.NaN(), math.NaN() // absent until a slot says otherwise
	}
	for i, t := range ts.Times {
		if k := int(t.Sub(ts.PeriodStart) / step); k >= 0 && k < n && i < len(ts.InBps) && i < len(ts.OutBps) {
			g.InMbps[k], g.OutMbps[k] = ts.InBps[i]/1e6, ts.OutBps[i]/1e6
		}
	}
	return g
}

// Route is one traced direction of a candidate, mtr style.
type Route struct {
	Direction  string // forward or return
	Target     string
	Protocol   string
	Reached    bool
	LineClass  string
	Rule       string
	Confidence string
	Hops       []route.Hop // the trace's own hops (shown through showHop)
	Notes      []string
	// ASPath is the chain of networks the route crosses (route.ASPathText).
	ASPath string
	// Live is a route traced from here (probe.Trace's Source "live"): only
	// its hops are named by reverse DNS.
	Live bool
	// MTU is true when the path MTU was measured (trace --mtu): the route
	// screen then shows each hop's MTU.
	MTU bool
	// Paths are the paths of a multipath trace (trace --multipath), f
	// switches between them; PathsSummary is what holds on every path.
	Paths        []RoutePath
	PathsSummary string
}

// hopShown is one row of the route screen as drawn: the trace's own hop
// (route.Hop, the core's type, rendered as it is) with its main responder
// picked and the reverse-DNS name the screen shows for it ("" for none).
type hopShown struct {
	route.Hop
	main route.Responder // the responder with the most replies; zero for a silent hop
	name string
}

// showHop picks h's main responder: the one with the most replies, the
// first of equals; the others are ECMP alternates.
func showHop(h route.Hop) hopShown {
	s := hopShown{Hop: h}
	best := -1
	for i, rs := range h.Responders {
		if best < 0 || rs.Recv > h.Responders[best].Recv {
			best = i
		}
	}
	if best >= 0 {
		s.main = h.Responders[best]
	}
	return s
}

// addr is the main responder's address, "" for a silent hop.
func (h hopShown) addr() string { return h.main.Addr }

// carrier is the main responder's network as the route screen names it
// (the carrier table's short name, the AS name or the special range's kind).
func (h hopShown) carrier() string {
	return route.ShortName(h.main.Carrier)
}

// alternates counts the other responders at the TTL (ECMP).
func (h hopShown) alternates() int { return max(len(h.Responders)-1, 0) }

// rateLimited: the hop is flagged icmp-rate-limited, its loss does not
// carry on to later hops.
func (h hopShown) rateLimited() bool { return hopRateLimited(h.Hop) }

func hopRateLimited(h route.Hop) bool { return slices.Contains(h.Flags, "icmp-rate-limited") }

// last is the main responder's latest RTT (ms); NaN when unknown.
func (h hopShown) last() float64 {
	if n := len(h.main.Samples); n > 0 {
		return h.main.Samples[n-1]
	}
	return math.NaN()
}

// rtt is the main responder's RTT statistics; percentiles a recording has
// none of (mtr --json) are unknown (NaN), not zero.
func (h hopShown) rtt() stats.RTTStats {
	r := h.main.RTT
	if h.main.Recv > 0 && r.P50 == 0 && r.P95 == 0 && r.Avg > 0 {
		r.P50, r.P95, r.P99 = math.NaN(), math.NaN(), math.NaN()
	}
	return r
}

// routeFromTrace turns a linecheck.trace/v1 document into the route screen's
// route; its hops are the document's own.
func routeFromTrace(dir string, t route.Trace) *Route {
	r := &Route{
		Direction: dir,
		Target:    t.Target,
		Protocol:  string(t.Protocol),
		Reached:   t.Reached,
		LineClass: t.LineClass,
		Live:      t.Source == "live",
		ASPath:    route.ASPathText(t.ASPath),
		MTU:       t.MTU != nil,
		Hops:      t.Hops,
	}
	if t.Port != 0 {
		r.Protocol += "/" + strconv.Itoa(t.Port)
	}
	if r.Target == "" {
		r.Target = t.Addr
	}
	if e := t.LineEvidence; e != nil {
		r.Rule, r.Confidence = e.Rule, e.Confidence
		r.Notes = append(r.Notes, e.Notes...)
	}
	r.Paths, r.PathsSummary = pathsOf(t)
	return r
}

// rateLimitNote explains a flagged hop so nobody misreads its loss.
func rateLimitNote(h route.Hop) string {
	return "loss at hop " + strconv.Itoa(h.TTL) + " does not carry on: ICMP rate limiting, not forwarding loss"
}

// CarrierRoute is the return route toward the users of one carrier and city,
// with the per-carrier SLA verdict ("" when not checked).
type CarrierRoute struct {
	Carrier, City string
	// Target names the backtrace route matched to these users, in its city.
	Target, TargetCity string
	// Forward and Return are compare's line class per direction toward
	// these users (the forward one from a vantage on their carrier); ""
	// when that direction was not measured.
	Forward, Return string
	Route           *Route
	Verdict         string
}
