package bw

import (
	"sync"
	"syscall"
	"time"
)

// Progress is what a running test reports once per interval (and once when
// the warm-up ends), for a live progress line.
type Progress struct {
	Elapsed  time.Duration // since the data started, including --omit
	Total    time.Duration // omit + duration
	Omitting bool          // still inside --omit
	Bps      float64       // throughput of the interval just ended, both directions summed
}

// sample is one interval as measured on this side, per direction.
type sample struct {
	start, end time.Duration // since the end of the warm-up
	up, down   int64         // bytes that reached the receiver (client→server, server→client)
	retrans    int64
	hasRetrans bool
	rtt        time.Duration
	hasRTT     bool
}

// snap is a stream's counters at one instant.
type snap struct {
	bytes, pkts int64
	rx          udpRx
	ti          tcpInfo
}

func (s *stream) snapshot() snap {
	return snap{bytes: s.bytes.Load(), pkts: s.pkts.Load(), rx: s.rxSnapshot(), ti: s.info()}
}

// delivered is the stream's count of bytes that reached the receiver, as
// well as this side can tell: a TCP sender counts what was acknowledged
// (bytes still in the socket buffer have not been carried yet), everyone
// else what they wrote or read.
func (sn snap) delivered(sender bool) int64 {
	if sender && sn.ti.ok {
		return sn.ti.acked
	}
	return sn.bytes
}

// measurement is the outcome of measure.
type measurement struct {
	start    time.Time     // data start (TEST_RUNNING)
	omitEnd  time.Time     // end of the warm-up (== start without --omit)
	end      time.Time     // when counting stopped
	measured time.Duration // end − omitEnd
	final    []snap        // per stream, at end, less the warm-up
	samples  []sample
	cpu      [3]float64 // total, user, system, in per cent of one core over the test
	idle     bool       // ended because no data moved for the idle timeout
}

// measure runs streams from start until until (the planned end; zero for
// none) or until stop is closed, whichever comes first, sampling every
// interval. upstream[i] tells whether stream i carries data client→server.
// With idle > 0 it also ends when no stream sent or received a byte for
// idle (checked at each interval).
func measure(streams []*stream, upstream []bool, start time.Time, omit, interval time.Duration, until time.Time,
	stop <-chan struct{}, progress func(Progress), idle time.Duration) measurement {
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	var wg sync.WaitGroup
	for _, s := range streams {
		wg.Add(1)
		go func() { defer wg.Done(); s.run(start) }()
	}
	mt := meter{streams: streams, upstream: upstream, start: start, interval: interval, progress: progress,
		m: measurement{start: start, omitEnd: start}, prev: make([]snap, len(streams)),
		omitting: omit > 0, nextOmit: start.Add(omit), lastTick: start, lastMoved: start}
	if !until.IsZero() {
		mt.total = until.Sub(start)
	}
	tickAt := start.Add(interval)
	if mt.omitting && mt.nextOmit.Before(tickAt) {
		tickAt = mt.nextOmit
	}
	for {
		next := tickAt
		if !until.IsZero() && until.Before(next) {
			next = until
		}
		timer := time.NewTimer(time.Until(next))
		stopped := false
		select {
		case <-stop:
			stopped = true
		case <-timer.C:
		}
		timer.Stop()
		now := time.Now()
		cur, failed := mt.snapshot()
		switch {
		case mt.omitting && (!now.Before(mt.nextOmit) || stopped || failed):
			mt.endOmit(now, cur)
		case !mt.omitting:
			mt.addSample(now, cur)
		case progress != nil:
			progress(Progress{Elapsed: now.Sub(start), Total: mt.total, Omitting: true})
		}
		mt.watchIdle(now, cur, idle)
		if stopped || failed || mt.m.idle || !until.IsZero() && !now.Before(until) {
			mt.m.end = now
			break
		}
		for !tickAt.After(now) {
			tickAt = tickAt.Add(interval)
		}
		if mt.omitting && mt.nextOmit.Before(tickAt) {
			tickAt = mt.nextOmit
		}
	}
	m := mt.finish()
	wg.Wait()
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if wall := m.end.Sub(start).Seconds(); wall > 0 {
		user := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano()).Seconds()
		sys := time.Duration(ru1.Stime.Nano() - ru0.Stime.Nano()).Seconds()
		m.cpu = [3]float64{100 * (user + sys) / wall, 100 * user / wall, 100 * sys / wall}
	}
	return m
}

// meter is measure's state between ticks.
type meter struct {
	streams  []*stream
	upstream []bool
	start    time.Time
	interval time.Duration
	total    time.Duration // omit + duration; 0 without a planned end
	progress func(Progress)

	m         measurement
	prev      []snap // the counters at the last tick
	omitting  bool   // still inside --omit, which ends at nextOmit
	nextOmit  time.Time
	lastTick  time.Time
	lastMoved time.Time // when the byte count last changed, to moved
	moved     int64
}

// snapshot reads every stream's counters; failed says a stream ended on
// an error.
func (mt *meter) snapshot() (cur []snap, failed bool) {
	cur = make([]snap, len(mt.streams))
	for i, s := range mt.streams {
		cur[i] = s.snapshot()
		if s.err.Load() != nil {
			failed = true
		}
	}
	return cur, failed
}

// endOmit ends the warm-up: what was counted so far is subtracted, as
// iperf3 resets its counters when --omit ends.
func (mt *meter) endOmit(now time.Time, cur []snap) {
	mt.omitting = false
	mt.m.omitEnd = now
	for i, s := range mt.streams {
		s.omitBytes, s.omitPkts, s.omitRx = cur[i].bytes, cur[i].pkts, cur[i].rx
		s.omitRetrans, s.omitAcked = cur[i].ti.retrans, cur[i].ti.acked
	}
	mt.prev = cur
	mt.lastTick = now
	if mt.progress != nil {
		mt.progress(Progress{Elapsed: now.Sub(mt.start), Total: mt.total, Omitting: false})
	}
}

// addSample records the interval that ends now.
func (mt *meter) addSample(now time.Time, cur []snap) {
	sm := sample{start: mt.lastTick.Sub(mt.m.omitEnd), end: now.Sub(mt.m.omitEnd)}
	var rttSum time.Duration
	var rttN int
	for i, s := range mt.streams {
		d := cur[i].delivered(s.sender) - mt.prev[i].delivered(s.sender)
		if mt.upstream[i] {
			sm.up += d
		} else {
			sm.down += d
		}
		if !s.udp && s.sender && cur[i].ti.ok {
			sm.retrans += cur[i].ti.retrans - mt.prev[i].ti.retrans
			sm.hasRetrans = true
		}
		if cur[i].ti.ok && cur[i].ti.rtt > 0 {
			rttSum += cur[i].ti.rtt
			rttN++
		}
	}
	if rttN > 0 {
		sm.rtt, sm.hasRTT = rttSum/time.Duration(rttN), true
	}
	// A sliver at the very end (the stop came just after a tick) is
	// no interval worth a row; its bytes still count in the mean.
	if sm.end-sm.start > mt.interval/10 {
		mt.m.samples = append(mt.m.samples, sm)
		if mt.progress != nil {
			bps := float64(sm.up+sm.down) * 8 / (sm.end - sm.start).Seconds()
			mt.progress(Progress{Elapsed: now.Sub(mt.start), Total: mt.total, Bps: bps})
		}
	}
	mt.prev = cur
	mt.lastTick = now
}

// watchIdle marks the measurement idle when no byte moved for idle (> 0).
func (mt *meter) watchIdle(now time.Time, cur []snap, idle time.Duration) {
	var sum int64
	for i := range cur {
		sum += cur[i].bytes
	}
	if sum != mt.moved {
		mt.lastMoved, mt.moved = now, sum
	} else if idle > 0 && now.Sub(mt.lastMoved) >= idle {
		mt.m.idle = true
	}
}

// finish stops the streams and keeps each one's counters at the last tick,
// less the warm-up.
func (mt *meter) finish() measurement {
	m := mt.m
	m.measured = m.end.Sub(m.omitEnd)
	m.final = make([]snap, len(mt.streams))
	for i, s := range mt.streams {
		f := mt.prev[i]
		f.bytes -= s.omitBytes
		f.pkts -= s.omitPkts
		f.rx.lost -= s.omitRx.lost
		f.rx.outOfOrder -= s.omitRx.outOfOrder
		f.rx.highest -= s.omitRx.highest
		f.ti.retrans -= s.omitRetrans
		f.ti.acked -= s.omitAcked
		m.final[i] = f
		s.stop()
	}
	return m
}

// streamErr is the first error that ended a stream early, if any.
func streamErr(streams []*stream) error {
	for _, s := range streams {
		if e, ok := s.err.Load().(error); ok && e != nil {
			return e
		}
	}
	return nil
}

// localResults is what this side tells the peer at EXCHANGE_RESULTS.
func localResults(streams []*stream, m measurement) peerResults {
	pr := peerResults{CPUTotal: m.cpu[0], CPUUser: m.cpu[1], CPUSystem: m.cpu[2], SenderHasRetransmits: -1, Streams: []streamResult{}}
	for i, s := range streams {
		f := m.final[i]
		r := streamResult{ID: s.id, Bytes: float64(f.bytes), Retransmits: -1, EndTime: m.measured.Seconds()}
		if s.sender && !s.udp {
			pr.SenderHasRetransmits = 0
			if f.ti.ok {
				r.Retransmits = float64(f.ti.retrans)
				pr.SenderHasRetransmits = 1
			}
		}
		if s.sender && s.udp {
			pr.SenderHasRetransmits = 0
		}
		if s.udp {
			// Counts run from the start, with the warm-up's share apart,
			// as iperf3 3.13 and later send them.
			if s.sender {
				r.Packets = float64(f.pkts + s.omitPkts)
				r.OmittedPackets = f64(float64(s.omitPkts))
			} else {
				r.Packets = float64(f.rx.highest + s.omitRx.highest)
				r.OmittedPackets = f64(float64(s.omitRx.highest))
				r.Errors = float64(f.rx.lost + s.omitRx.lost)
				r.OmittedErrors = f64(float64(s.omitRx.lost))
				r.Jitter = f.rx.jitter
			}
		}
		pr.Streams = append(pr.Streams, r)
	}
	return pr
}
