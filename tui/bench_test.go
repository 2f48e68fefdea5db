package tui

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NimbleMarkets/ntcharts/v2/sparkline"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/probe"
)

// benchModel is 50 candidates, each with a 30-hop forward route and a full
// RTT history, priced like the fixture.
func benchModel(b testing.TB, w, h int) Model {
	return benchModelOf(b, w, h, probe.Record{Addr: "203.0.113.1", Protocol: "icmp"}, nil)
}

// benchModelOf is benchModel with the RTT history recorded for the target of
// like (address, protocol, port) and the feed that feedFor builds for the
// candidates' names (nil: none).
func benchModelOf(b testing.TB, w, h int, like probe.Record, feedFor func(names []string) *Feed) Model {
	b.Helper()
	snap := FixtureSnapshot()
	base := snap.Candidates
	snap.Candidates = nil
	for i := 0; i < 50; i++ {
		c := base[i%len(base)]
		c.Name = fmt.Sprintf("cand-%02d-%s", i, c.Name)
		c.Target = "" // the first record's target becomes the primary one
		snap.Candidates = append(snap.Candidates, c)
	}
	m := NewLoaded(context.Background(), nil, snap, Options{Width: w, Height: h})
	if feedFor != nil {
		var names []string
		for _, c := range snap.Candidates {
			names = append(names, c.Name)
		}
		// A nil *Feed in the interface would not be a nil source.
		m = NewLoaded(context.Background(), feedFor(names), snap, Options{Width: w, Height: h})
	}
	var msgs UpdatesMsg
	for i, c := range snap.Candidates {
		tr := route.Trace{Schema: route.TraceSchema, Target: "203.0.113.1", Protocol: "icmp", Reached: true, LineClass: "transit"}
		for ttl := 1; ttl <= 30; ttl++ {
			v := float64(ttl) * 4.5
			var flags []string
			if ttl == 7 {
				flags = []string{"icmp-rate-limited"}
			}
			tr.Hops = append(tr.Hops, hop(ttl, fmt.Sprintf("198.51.100.%d", ttl), 64500+ttl, "Example", 0.01*float64(ttl%3), flags,
				v, v-1, v, v, v+2, v+3, 0.8))
		}
		msgs = append(msgs, TraceMsg{Candidate: c.Name, Direction: "forward", Trace: tr})
		for k := 0; k < HistorySize; k++ {
			rtt := 20 + float64(i) + 3*math.Sin(float64(k)/7)
			rec := probe.Record{Time: FixtureStart().Add(time.Duration(k) * time.Second), Addr: like.Addr,
				Protocol: like.Protocol, Port: like.Port, Seq: k, Status: probe.StatusOK, RTTms: &rtt}
			if k%50 == 0 {
				rec.Status, rec.RTTms = probe.StatusLost, nil
			}
			msgs = append(msgs, ProbeMsg{Candidate: c.Name, Record: rec})
		}
	}
	nm, _ := m.Update(msgs)
	m = nm.(Model)
	m.inflight = false
	return m
}

// benchTracer is the network of the live trace loops in
// BenchmarkRenderFrameLive: each cycle of engine.TraceLoop gets a 30-hop
// path (one hop icmp-rate-limited) whose hops' figures move from cycle to
// cycle, as mtr's do. Loopback has one hop, and the benchmark must not
// trace anything else; the loop, its pace and everything after the cycle
// (annotation, the feed, Update) are the product's.
type benchTracer struct {
	engine.Sender
	seed uint64
}

// Trace emits cfg.Cycles snapshots, one every cfg.Interval, of a 30-hop
// path whose figures are cumulative over the cycles so far.
func (bt benchTracer) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error {
	rng := rand.New(rand.NewPCG(bt.seed, 14))
	start := time.Now().UTC()
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		tr := &route.Trace{Schema: route.TraceSchema, Target: addr, Addr: addr, Protocol: "icmp", Reached: true,
			Source: "live", Start: start.Format(time.RFC3339)}
		for ttl := 1; ttl <= 30; ttl++ {
			v := float64(ttl)*4.5 + rng.Float64()*3
			var flags []string
			if ttl == 7 {
				flags = []string{"icmp-rate-limited"}
			}
			h := hop(ttl, fmt.Sprintf("198.51.100.%d", ttl), 64500+ttl, "Example", 0.01*float64(ttl%3), flags,
				v, v-1, v, v, v+2, v+3, 0.8)
			h.Sent, h.Responders[0].Recv = cycle, cycle
			tr.Hops = append(tr.Hops, h)
		}
		onCycle(tr)
	}
	return nil
}

// BenchmarkRenderFrameLive times the frames of 50 candidates × 30 hops
// while the live feeders run, as the program draws them: every candidate
// has the core's ping loop (engine.PingLoop, a TCP connect to a listener
// on 127.0.0.1 ten times a second, 500 probes/s in all) and its trace loop
// (engine.TraceLoop at its default pace, one 30-hop snapshot a second),
// all through LoopFeeder and Feed. Like Bubble Tea's event loop, each
// frame waits for the feed's next batch, folds it in (Update) and draws
// the screen (View): the time of a frame is the two together, not the
// wait. Goal (issue 14): every frame under 2 ms, the first one of a
// screen apart (it draws every row and chart afresh): mean-ms, p99-ms and
// max-ms (the slowest frame after the first) are the figures.
func BenchmarkRenderFrameLive(b *testing.B) {
	defer TuneGC()() // the collector's target Run sets
	port := testbin.TCPListener(b)
	type scenario struct {
		name string
		keys []string
		w, h int
	}
	var scs []scenario
	for _, sz := range [][2]int{{100, 30}, {200, 60}, {300, 80}} {
		for _, v := range []struct {
			name string
			keys []string
		}{
			{"overview", nil},
			{"route", []string{"enter"}},                     // the destination's RTT chart, redrawn at each probe
			{"route-hop", []string{"enter", "down", "down"}}, // hop 2's RTT chart, redrawn at each trace
			{"cost", []string{"c"}},
			{"help", []string{"?"}},
		} {
			scs = append(scs, scenario{fmt.Sprintf("%s-%dx%d", v.name, sz[0], sz[1]), v.keys, sz[0], sz[1]})
		}
	}
	for _, sc := range scs {
		b.Run(sc.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var feed *Feed
			m := benchModelOf(b, sc.w, sc.h, probe.Record{Addr: "127.0.0.1", Protocol: "tcp", Port: port}, func(names []string) *Feed {
				feed = &Feed{}
				for i, n := range names {
					t := candidates.Target{Addr: "127.0.0.1", Protocol: "tcp", Port: port}
					feed.Live = append(feed.Live,
						LoopFeeder(engine.PingLoop(n, t, engine.Options{Interval: 100 * time.Millisecond})),
						LoopFeeder(engine.TraceLoop(n, t, engine.Options{Prober: benchTracer{seed: uint64(i)}})))
				}
				return feed
			})
			m = press(b, m, "down", "down")
			m = press(b, m, sc.keys...)
			// One frame as the program makes it: the feed's next batch
			// (Feed.Next, which the program runs in a command once the
			// last batch is folded in: what arrives meanwhile waits in the
			// feed and comes as one batch), then Update and View.
			// A frame's CPU time is its thread's (its own work and the
			// runtime's on its behalf, GC assists), when it ran on one
			// thread throughout (cpu < 0 when it did not: not counted).
			var cpu time.Duration
			frame := func() (upd, view time.Duration, n int) {
				msg := feed.Next(ctx)
				tid0, c0 := threadCPU()
				t0 := time.Now()
				if u, ok := msg.(UpdatesMsg); ok {
					n = len(u)
				}
				nm, _ := m.Update(msg)
				m = nm.(Model)
				m.inflight = false
				t1 := time.Now()
				_ = m.View()
				t2 := time.Now()
				tid1, c1 := threadCPU()
				cpu = c1 - c0
				if tid0 != tid1 || tid0 < 0 {
					cpu = -1
				}
				return t1.Sub(t0), t2.Sub(t1), n
			}
			// Warm up for two seconds (every loop sending, each trace loop
			// two snapshots so that hops have a chart); the first frame
			// draws the screen afresh.
			u, v, _ := frame()
			first := u + v
			for t := time.Now(); time.Since(t) < 2100*time.Millisecond; {
				frame()
			}
			var frames, updates, views, cpus []time.Duration
			folded := 0
			b.ReportAllocs()
			for b.Loop() {
				u, v, n := frame()
				frames, updates, views = append(frames, u+v), append(updates, u), append(views, v)
				if cpu >= 0 {
					cpus = append(cpus, cpu)
				}
				folded += n
			}
			if folded == 0 || len(frames) < 2 {
				b.Fatal("the live feeders delivered nothing: the benchmark measured frames without them")
			}
			var sum time.Duration
			for _, f := range frames {
				sum += f
			}
			rest := slices.Clone(frames)
			slices.Sort(rest)
			b.ReportMetric(float64(sum.Nanoseconds())/float64(len(rest))/1e6, "mean-ms")
			b.ReportMetric(float64(rest[len(rest)*99/100].Nanoseconds())/1e6, "p99-ms")
			b.ReportMetric(float64(rest[len(rest)-1].Nanoseconds())/1e6, "max-ms")
			b.ReportMetric(float64(first.Nanoseconds())/1e6, "first-ms")
			b.ReportMetric(float64(folded)/float64(len(frames)), "updates/frame")
			// The two parts' own 99th percentiles: which one the tail is.
			for _, part := range []struct {
				unit string
				d    []time.Duration
			}{{"update-p99-ms", updates}, {"view-p99-ms", views}} {
				slices.Sort(part.d)
				b.ReportMetric(float64(part.d[len(part.d)*99/100].Nanoseconds())/1e6, part.unit)
			}
			// The frames' CPU time: what of the tail is their work and
			// what waiting for a CPU (wall minus CPU).
			if len(cpus) > len(frames)/2 {
				slices.Sort(cpus)
				b.ReportMetric(float64(cpus[len(cpus)*99/100].Nanoseconds())/1e6, "cpu-p99-ms")
				b.ReportMetric(float64(cpus[len(cpus)-1].Nanoseconds())/1e6, "cpu-max-ms")
			}
		})
	}
}

// BenchmarkRenderFrame renders one frame of each screen with 50 candidates ×
// 30 hops. The budget is a 60 Hz frame: 16.7 ms.
func BenchmarkRenderFrame(b *testing.B) {
	// fresh: every candidate got a new sample since the last frame (all
	// sparklines and the RTT chart redrawn), or the cost chart must be
	// redrawn (after a cost key or a resize); otherwise the memoised
	// drawings are reused, as between two probe batches.
	fresh := func(m *Model) {
		for _, c := range m.cands {
			c.rev++ // as a probe record does (Model.touched): its row is drawn again
		}
		clear(m.sparks)
		m.rttChart.key = ""
		m.chart.key = ""
		m.hopChart.key = ""
	}
	for _, sc := range []struct {
		name  string
		keys  []string
		w, h  int
		fresh bool
	}{
		{"overview-100x30", nil, 100, 30, false},
		{"overview-100x30-all-new-samples", nil, 100, 30, true},
		{"overview-200x60-all-new-samples", nil, 200, 60, true},
		{"route-100x30", []string{"enter"}, 100, 30, false},
		{"route-100x30-new-sample", []string{"enter"}, 100, 30, true},
		{"route-200x60-all-30-hops-new-sample", []string{"enter"}, 200, 60, true},
		{"cost-100x30", []string{"c"}, 100, 30, false},
		{"cost-100x30-chart-redrawn", []string{"c"}, 100, 30, true},
		{"route-300x80-new-sample", []string{"enter"}, 300, 80, true},
		{"cost-300x80-chart-redrawn", []string{"c"}, 300, 80, true},
		{"help-100x30", []string{"?"}, 100, 30, false},
	} {
		b.Run(sc.name, func(b *testing.B) {
			// The third candidate, then the screen (on the route screen ↓
			// would move the hop cursor: the destination's chart is drawn).
			m := press(b, benchModel(b, sc.w, sc.h), "down", "down")
			m = press(b, m, sc.keys...)
			b.ReportAllocs()
			for b.Loop() {
				if sc.fresh {
					fresh(&m)
				}
				_ = m.Render()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/16.7e6, "frame-budget")
		})
	}
}

// BenchmarkProbeBatch is the cost of folding a batch of 100 probe records
// (one candidate) into the model: ring push, counters, one percentile
// recomputation, the SLA verdict and the re-sort of 50 rows.
func BenchmarkProbeBatch(b *testing.B) {
	m := benchModel(b, 100, 30)
	rtt := 21.0
	batch := make(UpdatesMsg, 100)
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		for j := range batch {
			k++
			batch[j] = ProbeMsg{Candidate: "cand-00-hk-cn2-gia", Record: probe.Record{Time: FixtureStart().Add(time.Duration(k) * time.Millisecond),
				Addr: "203.0.113.1", Protocol: "icmp", Status: probe.StatusOK, RTTms: &rtt}}
		}
		nm, _ := m.Update(batch)
		m = nm.(Model)
	}
}

// sparklineByNtcharts is how renderSparkline drew before it wrote the runes
// itself: through ntcharts' sparkline and its canvas. It is the oracle of
// TestSparklineMatchesNtcharts.
func sparklineByNtcharts(h *Ring, w int) string {
	if h == nil || h.Len() == 0 || w <= 0 {
		return ""
	}
	vals, base, hi, ok := sparkRange(h, w)
	if !ok {
		return strings.Repeat("×", len(vals))
	}
	sl := sparkline.New(len(vals), 1, sparkline.WithMaxValue(hi-base), sparkline.WithNoAutoMaxValue())
	for _, v := range vals {
		if math.IsNaN(v) {
			sl.Push(0)
		} else {
			sl.Push(v - base)
		}
	}
	sl.Draw()
	row := []rune(strings.SplitN(canvasView(&sl.Canvas, false), "\n", 2)[0])
	for i, v := range vals {
		if i < len(row) && math.IsNaN(v) {
			row[i] = '×'
		}
	}
	return string(row)
}

// TestSparklineMatchesNtcharts checks the sparkline against ntcharts' own
// drawing over random histories: RTTs of every spread, lost probes, flat
// lines, one sample, widths below and above the history.
func TestSparklineMatchesNtcharts(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	for n := 0; n < 2000; n++ {
		h := NewRing(HistorySize)
		k := 1 + rng.IntN(2*HistorySize)
		mid, spread := rng.Float64()*300, rng.Float64()*50*rng.Float64()
		for i := 0; i < k; i++ {
			v := mid + spread*rng.NormFloat64()
			switch r := rng.IntN(20); {
			case r == 0:
				v = math.NaN()
			case r == 1 && n%3 == 0:
				v = mid // flat stretches
			}
			h.Push(FixtureStart().Add(time.Duration(i)*time.Second), math.Abs(v))
		}
		w := 1 + rng.IntN(120)
		if got, want := renderSparkline(h, w), sparklineByNtcharts(h, w); got != want {
			t.Fatalf("history of %d, width %d:\n got %q\nwant %q", k, w, got, want)
		}
	}
}
