package tui

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/rdns"
	"github.com/linecheck/linecheck/internal/route"
)

// Screen is what the model shows.
type Screen int

// The screens.
const (
	ScreenOverview Screen = iota
	ScreenRoute
	ScreenCost
	ScreenHelp
)

// String names the screen.
func (s Screen) String() string {
	return [...]string{"overview", "route", "cost", "help"}[s]
}

// Options configure a Model.
type Options struct {
	// Width and Height are the initial size, until the terminal reports its
	// own (tests render at fixed sizes with them).
	Width, Height int
	// NoColor forces a monochrome rendering (NO_COLOR is also honoured
	// through the terminal's colour profile).
	NoColor bool
	// Sort is the initial sort column (a Column key, e.g. "monthly"); ""
	// is compare's ranking order.
	Sort string
	// Names looks up hop names for the route screen, of live routes only
	// (a recording's addresses are never looked up from here); nil: no
	// names (tests, and wherever nothing may be resolved).
	Names *rdns.Cache
}

// Model is the Bubble Tea model of the UI.
type Model struct {
	ctx  context.Context
	src  Source
	opts Options

	width, height int
	screen        Screen
	back          Screen // where Esc returns from help

	snap     Snapshot
	cands    []*Candidate
	order    []int // indices into cands, in display order
	selected string
	moved    bool // the user moved the cursor; until then it stays on the top row
	sortCol  string
	sortDesc bool
	scroll   int // route view hop scroll
	showRet  bool
	// hideNames turns the route screen's reverse DNS names off (n).
	hideNames bool
	// pendingNames are live hops' addresses to look up (namesCmd).
	pendingNames []string
	// hop is the route screen's hop cursor (-1: the destination).
	hop     int
	hopHist map[string]*Ring // each hop's RTT per trace snapshot, by hopKey
	carrier int              // index into the candidate's Carriers on the return route screen
	path    int              // the route screen's path of a multipath trace (f): 0 every path's hops, k path k

	costOpts    CostOptions
	costPending bool

	paused   bool
	inflight bool
	loaded   bool
	done     bool

	dirty  map[*Candidate]bool
	traces int
	// bwNote is the live throughput test under way, bwHint the answer to
	// the b key (until the next key); both shown in the status line.
	bwNote, bwHint string
	errCount       int
	lastErr        string
	noColor        bool

	st        *Styles
	chart     *chartCache             // memo of the cost screen's traffic panel
	rttChart  *chartCache             // memo of the route screen's RTT chart
	sparks    map[string]sparkMemo    // memo of the overview's sparklines, by candidate
	rows      map[*Candidate]*rowMemo // memo of the overview's rows
	details   *detailMemo             // memo of the overview's detail block
	hopChart  *chartCache             // memo of the route screen's hop RTT chart
	help      *helpMemo               // memo of the help screen
	hopRows   *hopRowMemo             // memo of the route screen's hop rows
	breakdown *breakdownMemo          // memo of the cost screen's breakdown
}

// New returns a model that loads from src when it starts.
func New(ctx context.Context, src Source, opts Options) Model {
	if opts.Width == 0 {
		opts.Width = 100
	}
	if opts.Height == 0 {
		opts.Height = 30
	}
	return Model{
		ctx: ctx, src: src, opts: opts,
		width: opts.Width, height: opts.Height,
		sortCol:   opts.Sort,
		hop:       -1,
		costOpts:  DefaultCostOptions(),
		noColor:   opts.NoColor,
		st:        newStylesPtr(!opts.NoColor),
		chart:     &chartCache{},
		rttChart:  &chartCache{},
		sparks:    map[string]sparkMemo{},
		rows:      map[*Candidate]*rowMemo{},
		details:   &detailMemo{},
		hopChart:  &chartCache{},
		help:      &helpMemo{},
		hopRows:   &hopRowMemo{},
		breakdown: &breakdownMemo{},
	}
}

// NewLoaded returns a model with snap already applied (tests, benchmarks).
func NewLoaded(ctx context.Context, src Source, snap Snapshot, opts Options) Model {
	m := New(ctx, src, opts)
	m.applySnapshot(snap)
	return m
}

// Init loads the snapshot.
func (m Model) Init() tea.Cmd {
	if m.loaded {
		return m.nextCmd()
	}
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		s, err := src.Load(ctx)
		return SnapshotMsg{Snapshot: s, Err: err}
	}
}

func (m *Model) nextCmd() tea.Cmd {
	if m.src == nil || m.paused || m.inflight || m.done {
		return nil
	}
	m.inflight = true
	src, ctx := m.src, m.ctx
	return func() tea.Msg { return src.Next(ctx) }
}

// NamesMsg says that reverse lookups of live hops ended (Options.Names
// holds their names now).
type NamesMsg struct{}

// namesCmd looks up the names of the live hops that arrived since the last
// call, in a command (I/O never runs in Update or View); nil when there are
// none or names are off.
func (m *Model) namesCmd() tea.Cmd {
	addrs := m.pendingNames
	m.pendingNames = nil
	if len(addrs) == 0 || m.opts.Names == nil {
		return nil
	}
	names, ctx := m.opts.Names, m.ctx
	return func() tea.Msg {
		names.Wait(ctx, addrs)
		return NamesMsg{}
	}
}

func (m *Model) costCmd() tea.Cmd {
	if m.src == nil {
		return nil
	}
	m.costPending = true
	src, ctx, opts := m.src, m.ctx, m.costOpts
	return func() tea.Msg {
		c, err := src.Cost(ctx, opts)
		return CostMsg{Opts: opts, Costs: c, Err: err}
	}
}

func (m *Model) applySnapshot(s Snapshot) {
	m.snap = s
	m.cands = make([]*Candidate, len(s.Candidates))
	for i := range s.Candidates {
		c := s.Candidates[i]
		c.evaluate(s.SLA)
		m.cands[i] = &c
	}
	if s.Cost.Method != "" || s.Cost.UsageSet {
		m.costOpts = s.Cost
	}
	m.loaded = true
	m.rows = map[*Candidate]*rowMemo{} // the candidates are new
	m.resort()
}

// Update applies a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case SnapshotMsg:
		if msg.Err != nil {
			m.fail(fmt.Errorf("load: %w", msg.Err))
			return m, nil
		}
		m.applySnapshot(msg.Snapshot)
		return m, m.nextCmd()
	case UpdatesMsg:
		m.inflight = false
		for _, u := range msg {
			m.apply(u)
		}
		m.settle()
		return m, tea.Batch(m.nextCmd(), m.namesCmd())
	case ProbeMsg, TraceMsg, FeedErrMsg, ThroughputStartMsg, ThroughputMsg:
		m.inflight = false
		m.apply(msg)
		m.settle()
		return m, tea.Batch(m.nextCmd(), m.namesCmd())
	case NamesMsg:
		// The lookups ended: the frame this Update brings shows them.
		return m, nil
	case FeedDoneMsg:
		m.inflight = false
		m.done = true
		return m, nil
	case CostMsg:
		if msg.Opts != m.costOpts {
			return m, nil // a later key press superseded this result
		}
		m.costPending = false
		if msg.Err != nil {
			m.fail(fmt.Errorf("cost: %w", msg.Err))
			return m, nil
		}
		for _, c := range m.cands {
			if nc, ok := msg.Costs[c.Name]; ok {
				c.Cost = nc
				c.rev++
			}
		}
		m.resort()
		return m, nil
	}
	return m, nil
}

func (m *Model) fail(err error) {
	m.errCount++
	m.lastErr = err.Error()
}

func (m *Model) find(name string) *Candidate {
	for _, c := range m.cands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// shownRoute is the route the route screen shows for c: forward, return,
// or the return route toward the chosen user carrier; of a multipath
// trace, the path chosen with f.
func (m *Model) shownRoute(c *Candidate) *Route {
	r, _ := m.withPath(m.baseRoute(c))
	return r
}

// baseRoute is shownRoute before a path of a multipath trace is chosen.
func (m *Model) baseRoute(c *Candidate) *Route {
	if c == nil {
		return nil
	}
	if !m.showRet {
		return c.Forward
	}
	if len(c.Carriers) > 0 {
		return c.Carriers[m.carrier%len(c.Carriers)].Route
	}
	return c.Return
}

// moveHop moves the route screen's hop cursor (whose RTT is charted).
// Without a cursor the destination is charted; the first ↓ selects the
// first hop, the first ↑ the destination.
func (m *Model) moveHop(d int) {
	r := m.shownRoute(m.current())
	if r == nil || len(r.Hops) == 0 {
		return
	}
	if m.hop < 0 || m.hop >= len(r.Hops) {
		if d > 0 {
			m.hop = 0
		} else {
			m.hop = len(r.Hops) - 1
		}
		return
	}
	m.hop = max(0, min(m.hop+d, len(r.Hops)-1))
}

// dataClock is the time of the newest probe record received.
func (m *Model) dataClock() time.Time {
	var last time.Time
	for _, c := range m.cands {
		if c.Stats.Last.After(last) {
			last = c.Stats.Last
		}
		for _, o := range c.Others {
			if o.Last.After(last) {
				last = o.Last
			}
		}
	}
	return last
}

// recordHops keeps each hop's latest RTT of a trace snapshot, so that the
// route screen can chart any hop over time, not only the destination.
func (m *Model) recordHops(cand, dir string, r *Route, t route.Trace) {
	at := m.dataClock()
	if at.IsZero() {
		if s, err := time.Parse(time.RFC3339, t.Start); err == nil {
			at = s
		} else {
			return
		}
	}
	if m.hopHist == nil {
		m.hopHist = map[string]*Ring{}
	}
	for _, rh := range r.Hops {
		h := showHop(rh)
		k := hopKey(cand, dir, h.TTL)
		ring := m.hopHist[k]
		if ring == nil {
			ring = NewRing(HistorySize)
			m.hopHist[k] = ring
		}
		if ring.Len() > 0 {
			if t, _ := ring.At(ring.Len() - 1); !at.After(t) {
				continue // one sample per moment: a snapshot repeated is not a new sample
			}
		}
		v := h.last()
		if h.addr() == "" || math.IsNaN(v) {
			v = math.NaN()
		}
		ring.Push(at, v)
	}
}

func hopKey(cand, dir string, ttl int) string { return cand + "|" + dir + "|" + strconv.Itoa(ttl) }

// resetStats starts every candidate's probe statistics afresh, as mtr's r
// does: counters, percentiles, the RTT history and its charts. Routes keep
// the figures of their trace, which the feeder sends whole.
func (m *Model) resetStats() {
	for _, c := range m.cands {
		c.Stats = LiveStats{}
		c.Others = nil
		m.touched(c)
	}
	m.sparks = map[string]sparkMemo{}
	m.rttChart = &chartCache{}
	m.hopHist = nil
	m.settle()
}

// apply folds one feed message into the state.
func (m *Model) apply(msg tea.Msg) {
	switch u := msg.(type) {
	case ProbeMsg:
		c := m.find(u.Candidate)
		if c == nil {
			return
		}
		c.applyRecord(u.Record)
		m.touched(c)
	case TraceMsg:
		c := m.find(u.Candidate)
		if c == nil {
			return
		}
		m.traces++
		r := routeFromTrace(u.Direction, u.Trace)
		if r.Live && m.opts.Names != nil {
			for _, rh := range r.Hops {
				a := showHop(rh).addr()
				if a == route.Hidden {
					continue // --hide-hops: nothing to name, nothing to ask
				}
				if _, done := m.opts.Names.Cached(a); !done && !slices.Contains(m.pendingNames, a) {
					m.pendingNames = append(m.pendingNames, a)
				}
			}
		}
		tr := u.Trace
		m.recordHops(c.Name, u.Direction, r, tr)
		if u.Direction == "return" {
			c.Return, c.retTrace = r, &tr
		} else {
			c.Forward, c.fwdTrace, c.fwdErr = r, &tr, ""
		}
		// The row's class is decided over both directions, as compare does.
		if class, dir, _ := route.CombineDirections(c.fwdTrace, c.retTrace); class != "" {
			c.LineClass, c.Direction = class, dir
			if dir == "none" {
				c.Direction = ""
			}
			if ev := evidenceFor(class, c.fwdTrace, c.retTrace); ev != nil {
				c.Rule, c.Confidence = ev.Rule, ev.Confidence
			}
		}
		m.touched(c)
	case FeedErrMsg:
		if c := m.find(u.Candidate); c != nil && u.Direction == "forward" && c.Forward == nil {
			c.fwdErr = u.Err.Error()
			m.touched(c)
		}
		if u.Candidate != "" {
			m.fail(fmt.Errorf("%s: %w", u.Candidate, u.Err))
		} else {
			m.fail(u.Err)
		}
	case ThroughputStartMsg:
		m.applyThroughputStart(u)
	case ThroughputMsg:
		m.applyThroughput(u)
	case UpdatesMsg:
		for _, x := range u {
			m.apply(x)
		}
	}
}

// evidenceFor picks the evidence of the direction that gave the class.
func evidenceFor(class string, fwd, ret *route.Trace) *route.LineEvidence {
	for _, t := range []*route.Trace{fwd, ret} {
		if t != nil && t.LineClass == class && t.LineEvidence != nil {
			return t.LineEvidence
		}
	}
	return nil
}

// touched marks a candidate whose statistics and verdict must be
// recomputed at the end of the batch.
func (m *Model) touched(c *Candidate) {
	c.rev++ // what the views memoised of c is stale
	if m.dirty == nil {
		m.dirty = map[*Candidate]bool{}
	}
	m.dirty[c] = true
}

// settle recomputes percentiles and SLA verdicts of the candidates a batch
// touched, then the order: once per batch, not once per record.
func (m *Model) settle() {
	for c := range m.dirty {
		c.settle()
		c.evaluate(m.snap.SLA)
		delete(m.dirty, c)
	}
	m.resort()
}

func (m *Model) current() *Candidate {
	if c := m.find(m.selected); c != nil {
		return c
	}
	if len(m.order) > 0 {
		return m.cands[m.order[0]]
	}
	return nil
}

func (m *Model) cursorIndex() int {
	for i, ci := range m.order {
		if m.cands[ci].Name == m.selected {
			return i
		}
	}
	return 0
}

func (m *Model) move(d int) {
	if len(m.order) == 0 {
		return
	}
	i := m.cursorIndex() + d
	i = max(0, min(i, len(m.order)-1))
	m.selected = m.cands[m.order[i]].Name
	m.moved = true
	m.scroll, m.hop = 0, -1
}

func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	m.bwHint = ""
	if cmd, done := m.globalKey(k); done {
		return m, cmd
	}
	if m.screen == ScreenHelp || m.navKey(k) {
		return m, nil
	}
	return m, m.costKey(k)
}

// globalKey handles the keys of every screen (help included): quit, help,
// back and pause; done is false for any other key.
func (m *Model) globalKey(k tea.KeyPressMsg) (cmd tea.Cmd, done bool) {
	km := keys
	switch {
	case key.Matches(k, km.Quit):
		return tea.Quit, true
	case key.Matches(k, km.Help):
		if m.screen == ScreenHelp {
			m.screen = m.back
		} else {
			m.back, m.screen = m.screen, ScreenHelp
		}
		return nil, true
	case key.Matches(k, km.Back):
		switch m.screen {
		case ScreenHelp:
			m.screen = m.back
		case ScreenRoute, ScreenCost:
			m.screen = ScreenOverview
		}
		return nil, true
	case key.Matches(k, km.Pause):
		m.paused = !m.paused
		return m.nextCmd(), true
	}
	return nil, false
}

// navKey handles the keys that move the cursor, change screens, sort, and
// those of the route screen; false for a key it does not know (the cost
// options' keys among them).
func (m *Model) navKey(k tea.KeyPressMsg) bool {
	km := keys
	switch {
	case key.Matches(k, km.Up):
		if m.screen == ScreenRoute {
			m.moveHop(-1)
		} else {
			m.move(-1)
		}
	case key.Matches(k, km.Down):
		if m.screen == ScreenRoute {
			m.moveHop(1)
		} else {
			m.move(1)
		}
	case key.Matches(k, km.PrevCand):
		m.move(-1)
	case key.Matches(k, km.NextCand):
		m.move(1)
	case key.Matches(k, km.Route):
		if m.screen == ScreenOverview {
			m.screen, m.scroll, m.hop = ScreenRoute, 0, -1
		}
	case key.Matches(k, km.Cost):
		if m.screen == ScreenCost {
			m.screen = ScreenOverview
		} else {
			m.screen = ScreenCost
		}
	case m.screen == ScreenOverview && key.Matches(k, km.SortNext):
		m.cycleSort(1)
	case m.screen == ScreenOverview && key.Matches(k, km.SortPrev):
		m.cycleSort(-1)
	case m.screen == ScreenOverview && key.Matches(k, km.SortInvert):
		m.sortDesc = !m.sortDesc
		m.resort()
	case key.Matches(k, km.Reset):
		m.resetStats()
	case key.Matches(k, km.Throughput):
		m.askThroughput()
	case m.screen == ScreenRoute && key.Matches(k, km.Names):
		m.hideNames = !m.hideNames
	case m.screen == ScreenRoute && key.Matches(k, km.Path):
		m.nextPath()
	case m.screen == ScreenRoute && key.Matches(k, km.Return):
		m.showRet = !m.showRet
		m.scroll, m.hop = 0, -1
	case m.screen == ScreenRoute && key.Matches(k, km.Carrier):
		// The return path toward the next user carrier (and to it from the
		// forward path).
		if c := m.current(); c != nil && len(c.Carriers) > 0 {
			if m.showRet {
				m.carrier = (m.carrier + 1) % len(c.Carriers)
			}
			m.showRet, m.scroll, m.hop = true, 0, -1
		}
	default:
		return false
	}
	return true
}

// costKey handles the keys that change how the costs are priced (the cost
// screen's, and the used hours on the overview too) and returns the
// command that re-prices; nil for any other key.
func (m *Model) costKey(k tea.KeyPressMsg) tea.Cmd {
	km := keys
	o := &m.costOpts
	if m.screen == ScreenCost {
		if d := keyStep(k, km.Method, km.MethodPrev); d != 0 {
			o.Method = cycle(Methods, o.Method, d)
			return m.costCmd()
		}
		if d := keyStep(k, km.Direction, km.DirectionPrev); d != 0 {
			o.Direction = cycle(Directions, o.Direction, d)
			return m.costCmd()
		}
		if d := keyStep(k, km.ScaleUp, km.ScaleDown); d != 0 {
			o.Scale = stepScale(o.Scale, d)
			return m.costCmd()
		}
		if key.Matches(k, km.ScaleReset) {
			o.Scale = 1
			return m.costCmd()
		}
	}
	h := periodHours(m.snap.Traffic)
	d := keyStep(k, km.Usage, km.UsagePrev)
	if (m.screen != ScreenCost && m.screen != ScreenOverview) || d == 0 || h <= 0 {
		return nil
	}
	// From the figure in force: the one set, else the offers file's
	// (as the selected candidate was priced), else every hour.
	cur := h
	if o.UsageSet {
		cur = o.UsageHours
	} else if c := m.current(); c != nil && c.Cost.UsedHours != nil {
		cur = *c.Cost.UsedHours
	}
	o.UsageHours, o.UsageSet = stepUsage(cur, h, d), true
	return m.costCmd()
}

// keyStep is 1 for a key of next, -1 for one of prev, else 0.
func keyStep(k tea.KeyPressMsg, next, prev key.Binding) int {
	switch {
	case key.Matches(k, next):
		return 1
	case key.Matches(k, prev):
		return -1
	}
	return 0
}

func cycle[T comparable](list []T, cur T, d int) T {
	for i, x := range list {
		if x == cur {
			return list[(i+d+len(list))%len(list)]
		}
	}
	return list[0]
}

func stepScale(cur float64, d int) float64 {
	if d > 0 {
		for _, s := range Scales {
			if s > cur+1e-9 {
				return s
			}
		}
		return Scales[len(Scales)-1]
	}
	for i := len(Scales) - 1; i >= 0; i-- {
		if Scales[i] < cur-1e-9 {
			return Scales[i]
		}
	}
	return Scales[0]
}

func (m *Model) cycleSort(d int) {
	keysList := []string{""}
	// The columns on screen: THRU too when a candidate has a throughput test.
	for _, c := range m.overviewColumnsShown() {
		if c.less != nil {
			keysList = append(keysList, c.key)
		}
	}
	m.sortCol = cycle(keysList, m.sortCol, d)
	m.sortDesc = false
	m.resort()
}

// resort recomputes the display order. Without a sort column the rows
// are in compare's ranking order (compare.RankLess: passing first, measured
// before unmeasured, then by monthly cost, ties by name), reference rows
// last; a sort column orders stably from there.
func (m *Model) resort() {
	if len(m.order) != len(m.cands) {
		m.order = make([]int, len(m.cands))
	}
	for i := range m.order {
		m.order[i] = i
	}
	keys := make([]compare.RankKey, len(m.cands))
	for i, c := range m.cands {
		// A candidate's key changes only with the candidate (its rev).
		if !c.rankKeyed || c.rankRev != c.rev {
			c.rank, c.rankRev, c.rankKeyed = rankKey(c), c.rev, true
		}
		keys[i] = c.rank
	}
	sort.SliceStable(m.order, func(i, j int) bool {
		a, b := m.cands[m.order[i]], m.cands[m.order[j]]
		if a.Reference != b.Reference {
			return b.Reference
		}
		return compare.RankLess(keys[m.order[i]], keys[m.order[j]])
	})
	if col := columnByKey(m.sortCol); col != nil && col.less != nil {
		sort.SliceStable(m.order, func(i, j int) bool {
			a, b := m.cands[m.order[i]], m.cands[m.order[j]]
			if m.sortDesc {
				return col.less(b, a)
			}
			return col.less(a, b)
		})
	}
	// Until the user moves it, the cursor is on the top row (the best
	// ranked), wherever the ranking puts it as figures arrive.
	if !m.moved && len(m.order) > 0 {
		m.selected = m.cands[m.order[0]].Name
	}
}

// rankKey is a row's ranking key, from its current verdict and cost.
func rankKey(c *Candidate) compare.RankKey {
	k := compare.RankKey{Name: c.Name, Pass: c.slaKnown() && c.SLA.Pass && len(c.DeliveryFailed) == 0, HasData: c.view().HaveStats, Carries: c.Cost.canCarry()}
	amt := c.Cost.TotalBase
	if !amt.Valid() {
		amt = c.Cost.Total
	}
	if h := c.Cost.Horizon; h != nil && h.Base.Valid() {
		amt = h.Base // ranked over the horizon, as compare ranks
	}
	if amt.Valid() && c.Cost.Err == "" {
		k.Cost, k.Priced = amt.Amount, true
	}
	return k
}

// Screen reports the screen shown (tests).
func (m Model) Screen() Screen { return m.screen }

// Selected reports the selected candidate's name (tests).
func (m Model) Selected() string { return m.selected }

// CostOptions reports the current billing options (tests).
func (m Model) CostOptions() CostOptions { return m.costOpts }

// Paused reports whether updates are paused.
func (m Model) Paused() bool { return m.paused }

// Order reports the candidate names in display order (tests).
func (m Model) Order() []string {
	out := make([]string, len(m.order))
	for i, ci := range m.order {
		out[i] = m.cands[ci].Name
	}
	return out
}

// Candidate returns the named candidate's current state (tests).
func (m Model) Candidate(name string) *Candidate { return m.find(name) }

// lessFloat orders NaN (unknown) last.
func lessFloat(a, b float64) bool {
	switch {
	case math.IsNaN(a):
		return false
	case math.IsNaN(b):
		return true
	}
	return a < b
}

func lessString(a, b string) bool { return strings.ToLower(a) < strings.ToLower(b) }
