package tui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// ProbeMsg carries one probe record of a candidate.
type ProbeMsg struct {
	Candidate string
	Record    engine.Record
}

// TraceMsg carries a trace snapshot of a candidate (forward or return).
type TraceMsg struct {
	Candidate string
	Direction string // forward or return
	Trace     route.Trace
}

// ThroughputStartMsg says a live throughput test of a candidate begins.
type ThroughputStartMsg struct {
	Candidate string
	Start     engine.BWStart
}

// ThroughputMsg carries the outcome of a live throughput test (Error set
// when it gave no figures), related to the port the offer sells.
type ThroughputMsg struct {
	Candidate  string
	Throughput *verdict.Throughput
}

// CostMsg carries the costs recomputed under Opts, by candidate name.
type CostMsg struct {
	Opts  CostOptions
	Costs map[string]Cost
	Err   error
}

// UpdatesMsg is a batch of ProbeMsg and TraceMsg delivered at once (records
// that fall into the same frame of a replay, or a burst of live records).
type UpdatesMsg []tea.Msg

// FeedErrMsg reports an error of the feed for one candidate (shown in the
// status line; the feed goes on).
type FeedErrMsg struct {
	Candidate string
	// Direction is the route whose trace failed ("forward"), "" for an
	// error of probes: the route screen shows a trace's error in place of
	// "tracing…".
	Direction string
	Err       error
}

// FeedDoneMsg says the source has nothing more to send.
type FeedDoneMsg struct{}

// SnapshotMsg carries the loaded snapshot (or the error loading it).
type SnapshotMsg struct {
	Snapshot Snapshot
	Err      error
}

// Source feeds the model. Its methods do I/O and block: the model only calls
// them inside tea.Cmds, one Next at a time.
type Source interface {
	// Load returns the initial state.
	Load(ctx context.Context) (Snapshot, error)
	// Next blocks until there is an update and returns it (UpdatesMsg,
	// FeedErrMsg or FeedDoneMsg).
	Next(ctx context.Context) tea.Msg
	// Cost recomputes every candidate's cost under opts.
	Cost(ctx context.Context, opts CostOptions) (map[string]Cost, error)
}

// Feeder produces live updates until ctx ends, calling emit for each message
// (ProbeMsg, TraceMsg or FeedErrMsg). emit never blocks: when the UI is
// paused and the buffer is full, messages are dropped and counted.
type Feeder func(ctx context.Context, emit func(tea.Msg)) error

// Feed is the Source of `linecheck tui` and `linecheck demo`: it replays
// recorded probe streams over time (at Speed times the recorded pace, looping
// at the end so the screen stays alive) and merges the messages of live
// Feeders. Either part may be empty.
type Feed struct {
	Snapshot Snapshot
	// Streams are the recorded probe records per candidate name.
	Streams map[string][]engine.Record
	// Traces are sent once, at the start of the replay.
	Traces []TraceMsg
	// Speed is the replay speed factor (1 = as recorded); <= 0 means 1.
	Speed float64
	// Loop restarts the replay at the end, shifted in time.
	Loop bool
	// MaxGap caps the wall-clock wait between two replayed records, so a
	// gap in a recording does not freeze the screen; 0 means 2 s.
	MaxGap time.Duration
	// Live feeders run in their own goroutines from the first Next on.
	Live []Feeder
	// BWNow asks the live throughput loop for a round of tests (the b
	// key); nil when no candidate has a live test.
	BWNow chan struct{}
	// CostFunc recomputes the costs (billing is pure: this is fast). Nil
	// means the costs stay as loaded.
	CostFunc func(opts CostOptions) (map[string]Cost, error)

	once    sync.Once
	ch      chan tea.Msg
	Dropped atomic.Int64 // live messages dropped because the UI did not keep up

	merged   []ProbeMsg
	i        int
	loops    int
	span     time.Duration
	lastRec  time.Time
	lastWall time.Time
	started  bool
}

// Load returns the snapshot.
func (f *Feed) Load(ctx context.Context) (Snapshot, error) { return f.Snapshot, ctx.Err() }

// Cost calls CostFunc.
func (f *Feed) Cost(ctx context.Context, opts CostOptions) (map[string]Cost, error) {
	if f.CostFunc == nil {
		return nil, errors.New("costs cannot be recomputed: no billing input")
	}
	return f.CostFunc(opts)
}

func (f *Feed) start(ctx context.Context) {
	f.ch = make(chan tea.Msg, 1024)
	for _, fd := range f.Live {
		go func(fd Feeder) {
			emit := func(m tea.Msg) {
				switch m.(type) {
				case ThroughputStartMsg, ThroughputMsg:
					// Rare and stateful (a lost outcome would leave the row
					// "testing" for good): waited for, never dropped. Only
					// the throughput loop blocks, and it holds nothing the
					// UI needs.
					select {
					case f.ch <- m:
					case <-ctx.Done():
					}
					return
				}
				select {
				case f.ch <- m:
				default:
					f.Dropped.Add(1)
				}
			}
			if err := fd(ctx, emit); err != nil && ctx.Err() == nil {
				emit(FeedErrMsg{Err: err})
			}
		}(fd)
	}
	for name, recs := range f.Streams {
		for _, r := range recs {
			f.merged = append(f.merged, ProbeMsg{Candidate: name, Record: r})
		}
	}
	sort.SliceStable(f.merged, func(i, j int) bool {
		a, b := f.merged[i], f.merged[j]
		if !a.Record.Time.Equal(b.Record.Time) {
			return a.Record.Time.Before(b.Record.Time)
		}
		return a.Candidate < b.Candidate
	})
	if n := len(f.merged); n > 0 {
		f.span = f.merged[n-1].Record.Time.Sub(f.merged[0].Record.Time) + time.Second
	}
}

// Next returns the next batch of replayed records or live messages.
func (f *Feed) Next(ctx context.Context) tea.Msg {
	f.once.Do(func() { f.start(ctx) })
	if !f.started {
		f.started = true
		f.lastWall = time.Now()
		if len(f.Traces) > 0 {
			out := make(UpdatesMsg, 0, len(f.Traces))
			for _, t := range f.Traces {
				out = append(out, t)
			}
			return out
		}
	}
	var timer <-chan time.Time
	if f.i < len(f.merged) || (f.Loop && len(f.merged) > 0) {
		if f.i >= len(f.merged) {
			f.i = 0
			f.loops++
		}
		due := f.lastWall.Add(f.delay(f.recTime(f.i)))
		t := time.NewTimer(time.Until(due))
		defer t.Stop()
		timer = t.C
	} else if len(f.Live) == 0 {
		return FeedDoneMsg{}
	}
	select {
	case <-ctx.Done():
		return FeedDoneMsg{}
	case m := <-f.ch:
		out := UpdatesMsg{m}
		for len(out) < 256 {
			select {
			case m := <-f.ch:
				out = append(out, m)
			default:
				return out
			}
		}
		return out
	case <-timer:
		return f.replayBatch()
	}
}

// recTime is the replay time of merged record i in the current loop: later
// loops are shifted by the recording's span so time keeps increasing.
func (f *Feed) recTime(i int) time.Time {
	return f.merged[i].Record.Time.Add(time.Duration(f.loops) * f.span)
}

func (f *Feed) speed() float64 {
	if f.Speed <= 0 {
		return 1
	}
	return f.Speed
}

func (f *Feed) delay(next time.Time) time.Duration {
	if f.lastRec.IsZero() {
		return 0
	}
	d := time.Duration(float64(next.Sub(f.lastRec)) / f.speed())
	maxGap := f.MaxGap
	if maxGap <= 0 {
		maxGap = 2 * time.Second
	}
	if d > maxGap {
		d = maxGap
	}
	if d < 0 {
		d = 0
	}
	return d
}

// replayBatch emits every record due within one frame (1/30 s of wall
// time) from the current position, so a fast replay does not send a
// message per record.
func (f *Feed) replayBatch() tea.Msg {
	first := f.recTime(f.i)
	horizon := first.Add(time.Duration(float64(time.Second/30) * f.speed()))
	var out UpdatesMsg
	for f.i < len(f.merged) && !f.recTime(f.i).After(horizon) && len(out) < 4096 {
		pm := f.merged[f.i]
		pm.Record.Time = f.recTime(f.i)
		out = append(out, pm)
		f.lastRec = pm.Record.Time
		f.i++
	}
	f.lastWall = time.Now()
	return out
}

// TestThroughput asks for a round of live throughput tests now (the b
// key); false when the feed has none to run.
func (f *Feed) TestThroughput() bool {
	if f.BWNow == nil {
		return false
	}
	select {
	case f.BWNow <- struct{}{}:
	default: // one is asked for already
	}
	return true
}

// DroppedCount is how many live messages were dropped because the UI did
// not read them (paused with a full buffer); the status line shows it.
func (f *Feed) DroppedCount() int64 { return f.Dropped.Load() }

// ReplayFraction reports how far the replay has got (0..1) and how many
// times it looped; for the status line.
func (f *Feed) ReplayFraction() (float64, int) {
	if len(f.merged) == 0 {
		return 0, 0
	}
	return float64(f.i) / float64(len(f.merged)), f.loops
}

// String describes the feed for error messages.
func (f *Feed) String() string {
	return fmt.Sprintf("feed(%d streams, %d traces, %d live)", len(f.Streams), len(f.Traces), len(f.Live))
}

// Msg is a Bubble Tea message (so callers can write Feeders without
// importing bubbletea).
type Msg = tea.Msg
