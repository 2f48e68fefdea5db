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

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
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
	Names HopNames
}

// HopNames names hop addresses (reverse DNS) for the route screen, as
// internal/rdns's Cache does. Cached never starts a lookup (a view calls
// it); Wait, which the model calls in a command, starts those of addrs and
// returns when they have ended or ctx is done.
type HopNames interface {
	// Cached is addr's name ("" when the lookup failed) once a lookup of
	// it has ended, and whether one has.
	Cached(addr string) (name string, done bool)
	// Wait looks addrs up and returns the names known when they have
	// ended or ctx is done.
	Wait(ctx context.Context, addrs []string) map[string]string
}

// Model is the Bubble Tea model of the UI. It owns what every screen
// shares (the feed and what it brought, the cost options, the styles), the
// window size, the keys of every screen (quit, help, back, pause, the keys
// that switch screens, reset and the throughput tests) and which screen is
// shown; any other key goes to the screen shown, whose own Update and View
// work over the shared state. The screens are embedded so that each one's
// memo is reached by its own name (m.rows, m.chart, m.help).
type Model struct {
	state

	width, height int
	screen        Screen
	back          Screen // where Esc returns from help

	overviewScreen
	routeScreen
	costScreen
	helpScreen
}

// state is what every screen reads and the feed writes: the snapshot, the
// candidates in display order with the cursor, the cost options, the feed's
// progress and errors, the styles. A screen gets it as an argument of its
// Update and View and never keeps it: Model is a value.
type state struct {
	ctx  context.Context
	src  Source
	opts Options

	snap     Snapshot
	cands    []*Candidate
	order    []int // indices into cands, in display order
	selected string
	moved    bool // the user moved the cursor; until then it stays on the top row
	sortCol  string
	sortDesc bool
	// pendingNames are live hops' addresses to look up (namesCmd).
	pendingNames []string
	hopHist      map[string]*Ring // each hop's RTT per trace snapshot, by hopKey

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

	st *Styles
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
		state: state{
			ctx: ctx, src: src, opts: opts,
			sortCol:  opts.Sort,
			costOpts: DefaultCostOptions(),
			noColor:  opts.NoColor,
			st:       newStylesPtr(!opts.NoColor),
		},
		width: opts.Width, height: opts.Height,
		overviewScreen: newOverviewScreen(),
		routeScreen:    newRouteScreen(),
		costScreen:     newCostScreen(),
		helpScreen:     helpScreen{help: &helpMemo{}},
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

func (s *state) nextCmd() tea.Cmd {
	if s.src == nil || s.paused || s.inflight || s.done {
		return nil
	}
	s.inflight = true
	src, ctx := s.src, s.ctx
	return func() tea.Msg { return src.Next(ctx) }
}

// NamesMsg says that reverse lookups of live hops ended (Options.Names
// holds their names now).
type NamesMsg struct{}

// namesCmd looks up the names of the live hops that arrived since the last
// call, in a command (I/O never runs in Update or View); nil when there are
// none or names are off.
func (s *state) namesCmd() tea.Cmd {
	addrs := s.pendingNames
	s.pendingNames = nil
	if len(addrs) == 0 || s.opts.Names == nil {
		return nil
	}
	names, ctx := s.opts.Names, s.ctx
	return func() tea.Msg {
		names.Wait(ctx, addrs)
		return NamesMsg{}
	}
}

func (s *state) costCmd() tea.Cmd {
	if s.src == nil {
		return nil
	}
	s.costPending = true
	src, ctx, opts := s.src, s.ctx, s.costOpts
	return func() tea.Msg {
		c, err := src.Cost(ctx, opts)
		return CostMsg{Opts: opts, Costs: c, Err: err}
	}
}

func (m *Model) applySnapshot(snap Snapshot) {
	m.state.load(snap)
	m.rows = map[*Candidate]*rowMemo{} // the candidates are new
}

// load takes the snapshot's candidates and cost options.
func (s *state) load(snap Snapshot) {
	s.snap = snap
	s.cands = make([]*Candidate, len(snap.Candidates))
	for i := range snap.Candidates {
		c := snap.Candidates[i]
		c.evaluate(snap.SLA)
		s.cands[i] = &c
	}
	if snap.Cost.Method != "" || snap.Cost.UsageSet {
		s.costOpts = snap.Cost
	}
	s.loaded = true
	s.resort()
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

func (s *state) fail(err error) {
	s.errCount++
	s.lastErr = err.Error()
}

func (s *state) find(name string) *Candidate {
	for _, c := range s.cands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// dataClock is the time of the newest probe record received.
func (s *state) dataClock() time.Time {
	var last time.Time
	for _, c := range s.cands {
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
func (s *state) recordHops(cand, dir string, r *Route, t route.Trace) {
	at := s.dataClock()
	if at.IsZero() {
		if s, err := time.Parse(time.RFC3339, t.Start); err == nil {
			at = s
		} else {
			return
		}
	}
	if s.hopHist == nil {
		s.hopHist = map[string]*Ring{}
	}
	for _, rh := range r.Hops {
		h := showHop(rh)
		k := hopKey(cand, dir, h.TTL)
		ring := s.hopHist[k]
		if ring == nil {
			ring = NewRing(HistorySize)
			s.hopHist[k] = ring
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
// does: counters, percentiles, the RTT history and each hop's (the model
// drops the screens' charts of them). Routes keep the figures of their
// trace, which the feeder sends whole.
func (s *state) resetStats() {
	for _, c := range s.cands {
		c.Stats = LiveStats{}
		c.Others = nil
		s.touched(c)
	}
	s.hopHist = nil
	s.settle()
}

// apply folds one feed message into the state.
func (s *state) apply(msg tea.Msg) {
	switch u := msg.(type) {
	case ProbeMsg:
		c := s.find(u.Candidate)
		if c == nil {
			return
		}
		c.applyRecord(u.Record)
		s.touched(c)
	case TraceMsg:
		c := s.find(u.Candidate)
		if c == nil {
			return
		}
		s.traces++
		r := routeFromTrace(u.Direction, u.Trace)
		if r.Live && s.opts.Names != nil {
			for _, rh := range r.Hops {
				a := showHop(rh).addr()
				if a == route.Hidden {
					continue // --hide-hops: nothing to name, nothing to ask
				}
				if _, done := s.opts.Names.Cached(a); !done && !slices.Contains(s.pendingNames, a) {
					s.pendingNames = append(s.pendingNames, a)
				}
			}
		}
		tr := u.Trace
		// The family of the traced address is the key a dual-stack row
		// keeps each family's route under.
		if fam := verdict.Family(tr.Addr); u.Direction != "return" && fam != "" && c.family != "" && fam != c.family {
			// Another family's route (a dual-stack candidate): kept
			// beside the main one, and the row's class is the weaker.
			if c.FamilyRoutes == nil {
				c.FamilyRoutes = map[string]*Route{}
			}
			c.FamilyRoutes[fam] = r
			if c.famTraces == nil {
				c.famTraces = map[string]*route.Trace{}
			}
			c.famTraces[fam] = &tr
			c.LineClass = weakerFamilyClass(c)
			s.touched(c)
			return
		}
		s.recordHops(c.Name, u.Direction, r, tr)
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
			c.LineClass = weakerFamilyClass(c)
		}
		s.touched(c)
	case FeedErrMsg:
		if c := s.find(u.Candidate); c != nil && u.Direction == "forward" && c.Forward == nil {
			c.fwdErr = u.Err.Error()
			s.touched(c)
		}
		if u.Candidate != "" {
			s.fail(fmt.Errorf("%s: %w", u.Candidate, u.Err))
		} else {
			s.fail(u.Err)
		}
	case ThroughputStartMsg:
		s.applyThroughputStart(u)
	case ThroughputMsg:
		s.applyThroughput(u)
	case UpdatesMsg:
		for _, x := range u {
			s.apply(x)
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
func (s *state) touched(c *Candidate) {
	c.rev++ // what the views memoised of c is stale
	if s.dirty == nil {
		s.dirty = map[*Candidate]bool{}
	}
	s.dirty[c] = true
}

// settle recomputes percentiles and SLA verdicts of the candidates a batch
// touched, then the order: once per batch, not once per record.
func (s *state) settle() {
	for c := range s.dirty {
		c.settle()
		c.evaluate(s.snap.SLA)
		delete(s.dirty, c)
	}
	s.resort()
}

func (s *state) current() *Candidate {
	if c := s.find(s.selected); c != nil {
		return c
	}
	if len(s.order) > 0 {
		return s.cands[s.order[0]]
	}
	return nil
}

func (s *state) cursorIndex() int {
	for i, ci := range s.order {
		if s.cands[ci].Name == s.selected {
			return i
		}
	}
	return 0
}

// move moves the cursor d rows; false when there are none.
func (s *state) move(d int) bool {
	if len(s.order) == 0 {
		return false
	}
	i := s.cursorIndex() + d
	i = max(0, min(i, len(s.order)-1))
	s.selected = s.cands[s.order[i]].Name
	s.moved = true
	return true
}

// key routes a key: first the keys of every screen, then those of every
// screen but help, then the screen shown.
func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	m.bwHint = ""
	if cmd, done := m.globalKey(k); done {
		return m, cmd
	}
	if m.screen != ScreenHelp && m.switchKey(k) {
		return m, nil
	}
	next, cmd := m.active().Update(&m.state, k)
	m.keep(next)
	return m, cmd
}

// active is the screen shown.
func (m *Model) active() screen {
	switch m.screen {
	case ScreenRoute:
		return m.routeScreen
	case ScreenCost:
		return m.costScreen
	case ScreenHelp:
		return m.helpScreen
	}
	return m.overviewScreen
}

// keep stores a screen as its Update returned it.
func (m *Model) keep(s screen) {
	switch s := s.(type) {
	case overviewScreen:
		m.overviewScreen = s
	case routeScreen:
		m.routeScreen = s
	case costScreen:
		m.costScreen = s
	case helpScreen:
		m.helpScreen = s
	}
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

// switchKey handles the keys of every screen but help that are no one
// screen's: those that switch to the route and cost screens, the
// statistics' reset and the throughput tests; false for any other key.
func (m *Model) switchKey(k tea.KeyPressMsg) bool {
	km := keys
	switch {
	case key.Matches(k, km.Route):
		if m.screen == ScreenOverview {
			m.screen = ScreenRoute
			m.routeScreen.top()
		}
	case key.Matches(k, km.Cost):
		if m.screen == ScreenCost {
			m.screen = ScreenOverview
		} else {
			m.screen = ScreenCost
		}
	case key.Matches(k, km.Reset):
		m.resetStats()
		// The charts of the statistics reset are drawn afresh.
		m.sparks = map[string]sparkMemo{}
		m.rttChart = &chartCache{}
	case key.Matches(k, km.Throughput):
		m.askThroughput()
	default:
		return false
	}
	return true
}

// usageKey is u / U (the cost screen's and the overview's): the used hours
// of the GPU machine a step up or down, and the command that re-prices;
// nil for any other key, or without a traffic period.
func (s *state) usageKey(k tea.KeyPressMsg) tea.Cmd {
	km := keys
	o := &s.costOpts
	h := periodHours(s.snap.Traffic)
	d := keyStep(k, km.Usage, km.UsagePrev)
	if d == 0 || h <= 0 {
		return nil
	}
	// From the figure in force: the one set, else the offers file's
	// (as the selected candidate was priced), else every hour.
	cur := h
	if o.UsageSet {
		cur = o.UsageHours
	} else if c := s.current(); c != nil && c.Cost.UsedHours != nil {
		cur = *c.Cost.UsedHours
	}
	o.UsageHours, o.UsageSet = stepUsage(cur, h, d), true
	return s.costCmd()
}

// moveKey is the keys that move the cursor over the candidates on the
// overview and the cost screen: ↑↓ k j [ ]; false for any other key.
func (s *state) moveKey(k tea.KeyPressMsg) bool {
	km := keys
	switch {
	case key.Matches(k, km.Up), key.Matches(k, km.PrevCand):
		s.move(-1)
	case key.Matches(k, km.Down), key.Matches(k, km.NextCand):
		s.move(1)
	default:
		return false
	}
	return true
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

// resort recomputes the display order. Without a sort column the rows
// are in compare's ranking order (compare.RankLess: passing first, measured
// before unmeasured, then by monthly cost, ties by name), reference rows
// last; a sort column orders stably from there.
func (s *state) resort() {
	if len(s.order) != len(s.cands) {
		s.order = make([]int, len(s.cands))
	}
	for i := range s.order {
		s.order[i] = i
	}
	keys := make([]verdict.RankKey, len(s.cands))
	for i, c := range s.cands {
		// A candidate's key changes only with the candidate (its rev).
		if !c.rankKeyed || c.rankRev != c.rev {
			c.rank, c.rankRev, c.rankKeyed = rankKey(c), c.rev, true
		}
		keys[i] = c.rank
	}
	sort.SliceStable(s.order, func(i, j int) bool {
		a, b := s.cands[s.order[i]], s.cands[s.order[j]]
		if a.Reference != b.Reference {
			return b.Reference
		}
		return verdict.RankLess(keys[s.order[i]], keys[s.order[j]])
	})
	if col := columnByKey(s.sortCol); col != nil && col.less != nil {
		sort.SliceStable(s.order, func(i, j int) bool {
			a, b := s.cands[s.order[i]], s.cands[s.order[j]]
			if s.sortDesc {
				return col.less(b, a)
			}
			return col.less(a, b)
		})
	}
	// Until the user moves it, the cursor is on the top row (the best
	// ranked), wherever the ranking puts it as figures arrive.
	if !s.moved && len(s.order) > 0 {
		s.selected = s.cands[s.order[0]].Name
	}
}

// rankKey is a row's ranking key, from its current verdict and cost.
func rankKey(c *Candidate) verdict.RankKey {
	k := verdict.RankKey{Name: c.Name, Pass: c.slaKnown() && c.SLA.Pass && len(c.DeliveryFailed) == 0, HasData: c.view().HaveStats, Carries: c.Cost.canCarry()}
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
