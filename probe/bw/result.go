package bw

import (
	"math"
	"sort"
	"time"
)

// Schema names the JSON document of one test.
const Schema = "linecheck.bw/v1"

// Directions of a test, from the client's side.
const (
	Upload   = "upload"   // client → server
	Download = "download" // server → client (--reverse)
	Bidir    = "bidir"    // both at once (--bidir)
)

// Result is one test (schema linecheck.bw/v1). Figures with no data are nil
// (null in JSON): a percentile without intervals, retransmits a side could
// not read, out-of-order counts the other side never reports.
type Result struct {
	Schema    string `json:"schema"`
	Server    string `json:"server"`
	Port      int    `json:"port"`
	Protocol  string `json:"protocol"`  // tcp, udp
	Direction string `json:"direction"` // upload, download, bidir
	// DurationS is the measured time after --omit, in seconds (the
	// receiver's, for the direction measured).
	DurationS  float64    `json:"duration_s"`
	Streams    int        `json:"streams"`
	Throughput Throughput `json:"throughput_bps"`
	// Bytes reached the receiver during DurationS.
	Bytes       int64      `json:"bytes"`
	Retransmits *int64     `json:"retransmits"`
	Intervals   []Interval `json:"intervals"`
	UDP         *UDPStats  `json:"udp"`

	// Start is when the data started (after the control exchange).
	Start time.Time `json:"start"`
	// OmitS is the warm-up left out of every figure.
	OmitS float64 `json:"omit_s"`
	// BitrateBps is the requested rate per stream (UDP, or TCP pacing); nil = unlimited.
	BitrateBps *float64 `json:"bitrate_bps"`
	// Client is the peer's address when the result is a --listen server's.
	Client string `json:"client,omitempty"`
	// ByDirection splits a bidir test; nil otherwise.
	ByDirection *ByDirection `json:"by_direction,omitempty"`
	// CutShort is set when the test did not finish; the figures cover what ran.
	CutShort bool `json:"cut_short,omitempty"`
	// Partial is set when Ctrl-C cut the client's test (CutShort too): the
	// marker every command's JSON uses for an interrupted run (ping,
	// trace, backtrace).
	Partial bool `json:"partial,omitempty"`
}

// Throughput is in bits per second. Mean is bytes received over the
// measured time (iperf3's receiver sum); the rest are over the intervals.
type Throughput struct {
	Mean *float64 `json:"mean"`
	P5   *float64 `json:"p5"`
	P50  *float64 `json:"p50"`
	P95  *float64 `json:"p95"`
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
}

// Interval is one reporting interval (--interval); times since the end of
// the warm-up. RTTms is the smoothed RTT of the TCP streams (mean over
// streams) at the interval's end.
type Interval struct {
	StartS      float64  `json:"start_s"`
	EndS        float64  `json:"end_s"`
	Bps         float64  `json:"bps"`
	Retransmits *int64   `json:"retransmits"`
	RTTms       *float64 `json:"rtt_ms"`
}

// UDPStats are the receiver's figures of a UDP test, as iperf3 computes
// them: Packets the sender sent, Lost the gaps in the sequence numbers less
// late arrivals, Loss = Lost/Packets, jitter RFC 1889 in ms.
type UDPStats struct {
	Packets    int64    `json:"packets"`
	Lost       *int64   `json:"lost"`
	Loss       *float64 `json:"loss"`
	JitterMs   *float64 `json:"jitter_ms"`
	OutOfOrder *int64   `json:"out_of_order"`
}

// ByDirection holds both halves of a bidir test.
type ByDirection struct {
	Upload   DirStats `json:"upload"`
	Download DirStats `json:"download"`
}

// DirStats is one direction's figures.
type DirStats struct {
	Throughput  Throughput `json:"throughput_bps"`
	Bytes       int64      `json:"bytes"`
	DurationS   float64    `json:"duration_s"`
	Retransmits *int64     `json:"retransmits"`
	UDP         *UDPStats  `json:"udp"`
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// Percentile is the p-th percentile (0 < p <= 100) of ascending values, by
// the rule of the caller's statistics layer (linecheck's is
// percentile.NearestRank): probe measures and computes no percentile of its own,
// so that one rule serves every figure. Config.Percentile and
// ServerConfig.Percentile take it; without one p5, p50 and p95 stay null.
type Percentile func(sorted []float64, p float64) float64

// intervalStats fills the percentiles of t from interval rates, by pct (nil:
// left null), and the min and max. Intervals shorter than half the interval
// length (the last one, cut by the end of the test) are left out: a
// fraction of an interval is not a sample of the same size.
func intervalStats(t *Throughput, bps []float64, lens []float64, interval float64, pct Percentile) {
	var v []float64
	for i, b := range bps {
		if lens[i] >= interval/2 {
			v = append(v, b)
		}
	}
	if len(v) == 0 {
		return
	}
	sort.Float64s(v)
	if pct != nil {
		t.P5, t.P50, t.P95 = f64(pct(v, 5)), f64(pct(v, 50)), f64(pct(v, 95))
	}
	t.Min, t.Max = f64(v[0]), f64(v[len(v)-1])
}

// build turns this side's measurement and the peer's results (nil when they
// never came) into the client's-view Result. upstream[i] tells whether
// stream i carries client→server data.
func build(r *Result, streams []*stream, upstream []bool, m measurement, peer *peerResults, interval time.Duration, pct Percentile) {
	r.Schema = Schema
	r.Start = m.start.UTC()
	r.OmitS = m.omitEnd.Sub(m.start).Seconds()
	b := resultBuilder{streams: streams, upstream: upstream, m: m, byID: map[int]streamResult{}, interval: interval, pct: pct}
	if peer != nil {
		for _, s := range peer.Streams {
			b.byID[s.ID] = s
		}
		b.peerRetrans = peer.SenderHasRetransmits == 1
	}
	up, hasUp := b.dir(true)
	down, hasDown := b.dir(false)
	var main DirStats
	switch {
	case hasUp && hasDown:
		r.Direction = Bidir
		r.ByDirection = &ByDirection{Upload: up, Download: down}
		main = bidirTotal(up, down)
	case hasUp:
		r.Direction, main = Upload, up
	default:
		r.Direction, main = Download, down
	}
	r.DurationS, r.Bytes, r.Retransmits, r.UDP = main.DurationS, main.Bytes, main.Retransmits, main.UDP
	r.Throughput = main.Throughput
	bps, lens := rates(m.samples, func(sm sample) int64 {
		switch r.Direction {
		case Upload:
			return sm.up
		case Download:
			return sm.down
		}
		return sm.up + sm.down
	})
	r.Intervals = make([]Interval, 0, len(m.samples))
	for i, sm := range m.samples {
		iv := Interval{StartS: round6(sm.start.Seconds()), EndS: round6(sm.end.Seconds()), Bps: bps[i]}
		if sm.hasRetrans {
			iv.Retransmits = i64(sm.retrans)
		}
		if sm.hasRTT {
			iv.RTTms = f64(float64(sm.rtt) / float64(time.Millisecond))
		}
		r.Intervals = append(r.Intervals, iv)
	}
	if r.Direction == Bidir {
		intervalStats(&r.Throughput, bps, lens, interval.Seconds(), pct)
	}
}

// rates are the samples' rates in bits per second, of the bytes that
// pick counts in each, and the samples' lengths in seconds.
func rates(samples []sample, pick func(sample) int64) (bps, lens []float64) {
	bps, lens = make([]float64, len(samples)), make([]float64, len(samples))
	for i, sm := range samples {
		lens[i] = (sm.end - sm.start).Seconds()
		bps[i] = float64(pick(sm)) * 8 / lens[i]
	}
	return bps, lens
}

// bidirTotal is both directions of a bidir test together: bytes and
// counts summed, the longer duration, the UDP jitter averaged; a figure
// either side lacks is absent.
func bidirTotal(up, down DirStats) DirStats {
	t := DirStats{Bytes: up.Bytes + down.Bytes, DurationS: max(up.DurationS, down.DurationS)}
	if up.Throughput.Mean != nil && down.Throughput.Mean != nil {
		t.Throughput.Mean = f64(*up.Throughput.Mean + *down.Throughput.Mean)
	}
	if up.Retransmits != nil && down.Retransmits != nil {
		t.Retransmits = i64(*up.Retransmits + *down.Retransmits)
	}
	if up.UDP != nil && down.UDP != nil {
		u := UDPStats{Packets: up.UDP.Packets + down.UDP.Packets}
		if up.UDP.Lost != nil && down.UDP.Lost != nil {
			u.Lost = i64(*up.UDP.Lost + *down.UDP.Lost)
			if u.Packets > 0 {
				u.Loss = f64(float64(*u.Lost) / float64(u.Packets))
			}
		}
		if up.UDP.JitterMs != nil && down.UDP.JitterMs != nil {
			u.JitterMs = f64((*up.UDP.JitterMs + *down.UDP.JitterMs) / 2)
		}
		t.UDP = &u
	}
	return t
}

// resultBuilder holds what build reads: this side's streams and
// measurement, and the peer's per-stream results by stream id.
type resultBuilder struct {
	streams     []*stream
	upstream    []bool
	m           measurement
	byID        map[int]streamResult
	peerRetrans bool // the peer's senders could read their retransmits
	interval    time.Duration
	pct         Percentile
}

// dirTally adds up one direction's streams.
type dirTally struct {
	d                   DirStats
	retrans             int64
	retransKnown        bool
	udp                 UDPStats
	lostKnown, oooKnown bool
	jitterSum           float64
	jitterN             int
}

// dir is the figures of the streams that carry data client→server (up) or
// server→client; false when there are none.
func (b *resultBuilder) dir(up bool) (DirStats, bool) {
	t := dirTally{retransKnown: true, lostKnown: true, oooKnown: true}
	any := false
	for i, s := range b.streams {
		if b.upstream[i] != up {
			continue
		}
		any = true
		f := b.m.final[i]
		ps, havePeer := b.byID[s.id]
		t.addBytes(s, f, ps, havePeer, b.m.measured)
		switch {
		case !s.udp:
			t.addTCP(s, f, ps, havePeer, b.peerRetrans)
		case s.sender:
			t.addUDPSender(f, ps, havePeer)
		default:
			t.addUDPReceiver(s, f, ps, havePeer)
		}
	}
	if !any {
		return DirStats{}, false
	}
	d := t.stats(b.streams[0].udp)
	bps, lens := rates(b.m.samples, func(sm sample) int64 {
		if up {
			return sm.up
		}
		return sm.down
	})
	intervalStats(&d.Throughput, bps, lens, b.interval.Seconds(), b.pct)
	return d, true
}

// addBytes counts what one stream carried to its receiver, and for how long.
func (t *dirTally) addBytes(s *stream, f snap, ps streamResult, havePeer bool, measured time.Duration) {
	d := &t.d
	switch {
	case !s.sender:
		d.Bytes += f.bytes
		d.DurationS = max(d.DurationS, measured.Seconds())
	case havePeer:
		if b, ok := validCount(ps.Bytes); ok {
			d.Bytes += b
		}
		d.DurationS = max(d.DurationS, ps.EndTime)
	default:
		// No word from the receiver: what it acknowledged is the
		// best this side knows (TCP); a UDP sender knows nothing.
		if f.ti.ok {
			d.Bytes += f.ti.acked
		}
		d.DurationS = max(d.DurationS, measured.Seconds())
	}
}

// addTCP counts a TCP stream's retransmits, as its sender read them.
func (t *dirTally) addTCP(s *stream, f snap, ps streamResult, havePeer, peerRetrans bool) {
	switch {
	case s.sender && f.ti.ok:
		t.retrans += f.ti.retrans
	case !s.sender && havePeer && peerRetrans:
		if v, ok := validCount(ps.Retransmits); ok {
			t.retrans += v
		} else {
			t.retransKnown = false
		}
	default:
		t.retransKnown = false
	}
}

// addUDPSender counts a UDP stream this side sent: loss and jitter are the
// receiver's word.
func (t *dirTally) addUDPSender(f snap, ps streamResult, havePeer bool) {
	t.udp.Packets += f.pkts
	if havePeer {
		// Servers before 3.13 do not say what they counted
		// during --omit; their count is taken whole.
		lost, _ := validCount(ps.Errors)
		if ps.OmittedErrors != nil {
			olost, _ := validCount(*ps.OmittedErrors)
			lost -= olost
		}
		t.udp.Lost = addp(t.udp.Lost, lost)
		t.jitterSum += ps.Jitter
		t.jitterN++
	} else {
		t.lostKnown = false
	}
	t.oooKnown = false
}

// addUDPReceiver counts a UDP stream this side received.
func (t *dirTally) addUDPReceiver(s *stream, f snap, ps streamResult, havePeer bool) {
	if havePeer {
		// The sender's count runs from the start; what it
		// sent during --omit is what this side had seen by
		// then, unless it says (3.13 and later).
		pk, _ := validCount(ps.Packets)
		opk := s.omitRx.highest
		if ps.OmittedPackets != nil {
			opk, _ = validCount(*ps.OmittedPackets)
		}
		t.udp.Packets += pk - opk
	} else {
		t.udp.Packets += f.rx.highest
	}
	t.udp.Lost = addp(t.udp.Lost, f.rx.lost)
	t.udp.OutOfOrder = addp(t.udp.OutOfOrder, f.rx.outOfOrder)
	t.jitterSum += f.rx.jitter
	t.jitterN++
}

// stats is the tally's figures: the mean rate, and the UDP figures or the
// TCP retransmits where every stream's are known.
func (t *dirTally) stats(udp bool) DirStats {
	d := t.d
	if d.DurationS > 0 {
		d.Throughput.Mean = f64(float64(d.Bytes) * 8 / d.DurationS)
	}
	if udp {
		u := t.udp
		if !t.lostKnown {
			u.Lost = nil
		}
		if !t.oooKnown {
			u.OutOfOrder = nil
		}
		if u.Lost != nil && u.Packets > 0 {
			u.Loss = f64(float64(*u.Lost) / float64(u.Packets))
		}
		if t.jitterN > 0 {
			u.JitterMs = f64(t.jitterSum / float64(t.jitterN) * 1000)
		}
		d.UDP = &u
	} else if t.retransKnown {
		d.Retransmits = i64(t.retrans)
	}
	return d
}

func addp(p *int64, v int64) *int64 {
	if p == nil {
		return &v
	}
	*p += v
	return p
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
