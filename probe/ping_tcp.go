package probe

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpDriver measures TCP connect time: the SYN → SYN-ACK round trip, no
// privilege needed. Each probe is a dial of its own; a refused connection
// (RST) is lost and counted Refused. The dials' outcomes queue until the
// sweep's loop takes them.
type tcpDriver struct {
	r     *sweep
	port  string
	ctx   context.Context // the sweep's: cancelling it cuts the dials
	timer *time.Timer
	wg    sync.WaitGroup

	mu     sync.Mutex
	queue  []tcpOutcome
	signal chan struct{} // a non-blocking send after each outcome queued
}

// tcpOutcome is one dial's result.
type tcpOutcome struct {
	i   int
	t0  time.Time     // when the dial started (the probe's send time)
	el  time.Duration // until it ended
	err error
}

// tcpSpec is TCP: connect time for ping, SYN probes for trace (port
// DefaultTCPPort unless given).
var tcpSpec = protocolSpec{name: TCP, ping: &pingProtocol{open: openTCPDriver, port: true}, trace: tcpTrace{},
	port: true, tracePort: DefaultTCPPort}

// openTCPDriver needs no socket until the first probe.
func openTCPDriver(ctx context.Context, r *sweep) (pingDriver, error) {
	return &tcpDriver{r: r, port: strconv.Itoa(r.cfg.TCPPort), ctx: ctx, signal: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}, nil
}

func (d *tcpDriver) send(idx []int) (sendErr, fatal error) {
	T := len(d.r.targets)
	for _, i := range idx {
		t := d.r.targets[i%T]
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			dl := net.Dialer{Timeout: d.r.cfg.Timeout}
			if ttl := d.r.cfg.TTL; ttl > 0 {
				dl.Control = func(_, _ string, c syscall.RawConn) error { return setConnTTL(c, t.Addr.Is6(), ttl) }
			}
			network := "tcp4"
			if t.Addr.Is6() {
				network = "tcp6"
			}
			t0 := d.r.clock.Now()
			c, err := dl.DialContext(d.ctx, network, net.JoinHostPort(t.Addr.String(), d.port))
			el := d.r.clock.Now().Sub(t0)
			if err == nil {
				c.Close()
			}
			d.mu.Lock()
			d.queue = append(d.queue, tcpOutcome{i: i, t0: t0, el: el, err: err})
			d.mu.Unlock()
			select {
			case d.signal <- struct{}{}:
			default:
			}
		}()
	}
	return nil, nil
}

func (d *tcpDriver) readQueued() error {
	d.mu.Lock()
	q := d.queue
	d.queue = nil
	d.mu.Unlock()
	if len(q) == 0 {
		return nil
	}
	r := d.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range q {
		p := &r.probes[o.i]
		if p.state == stPending {
			p.sent = o.t0
		}
		switch {
		case o.err == nil:
			// A dial that ended after the timeout (its timer fired late on
			// a busy machine) is late: answer judges by the elapsed time.
			r.answer(o.i, o.t0.Add(o.el))
		case d.ctx.Err() != nil:
			// Cut by the end of the sweep: in flight, not lost.
		default:
			res := &r.results[o.i%len(r.targets)]
			if errors.Is(o.err, syscall.ECONNREFUSED) {
				res.Refused++
			}
			if isFirewall(o.err) && res.Blocked == nil {
				res.Blocked = firewallError("connecting", r.targets[o.i%len(r.targets)].Addr, o.err)
			}
			r.failLocked(o.i, o.t0)
		}
	}
	return nil
}

func (d *tcpDriver) wait(ctx context.Context, t time.Time) error {
	var fire <-chan time.Time
	if !t.IsZero() {
		w := t.Sub(d.r.clock.Now())
		if w <= 0 {
			return ctx.Err()
		}
		d.timer.Reset(w)
		fire = d.timer.C
		defer d.timer.Stop()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-d.signal:
	case <-fire:
	}
	return d.readQueued()
}

// close waits for the dials in flight (a cancelled sweep cuts them) and
// takes their outcomes.
func (d *tcpDriver) close() {
	d.wg.Wait()
	_ = d.readQueued()
	d.timer.Stop()
}

// setConnTTL sets the unicast TTL (hop limit) of a socket before it
// connects (ping -t with --tcp).
func setConnTTL(c syscall.RawConn, v6 bool, ttl int) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if v6 {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, ttl)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TTL, ttl)
		}
	})
	if err != nil {
		return err
	}
	return serr
}
