package main

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// slotListener serves at most max connections at once, as
// netutil.LimitListener does, but a newcomer that finds every slot taken
// reclaims one instead of waiting behind connections that do nothing: the
// longest-idle keep-alive connection first, else the oldest that has sent no
// complete request for newGrace. Only when every slot is busy with a request
// does the newcomer wait. Held keep-alive connections (200 idle scrapers
// starved every new scrape for a minute) then cost a new scraper nothing.
type slotListener struct {
	net.Listener
	max      int
	newGrace time.Duration

	mu    sync.Mutex
	freed *sync.Cond
	conns map[*slotConn]struct{}
}

// slotConn is a served connection and what the HTTP server last said of it.
type slotConn struct {
	net.Conn
	l     *slotListener
	state http.ConnState
	since time.Time // when it entered state
	once  sync.Once
}

func newSlotListener(ln net.Listener, max int, newGrace time.Duration) *slotListener {
	l := &slotListener{Listener: ln, max: max, newGrace: newGrace, conns: map[*slotConn]struct{}{}}
	l.freed = sync.NewCond(&l.mu)
	return l
}

// Accept takes the next connection, reclaiming or waiting for a slot.
func (l *slotListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	for len(l.conns) >= l.max {
		if v := l.victim(time.Now()); v != nil {
			delete(l.conns, v)
			l.mu.Unlock()
			_ = v.Conn.Close()
			l.mu.Lock()
			continue
		}
		// Every slot is serving a request or was opened only just: wait
		// until one closes or goes idle (http.Server reports both through
		// ConnState), or until the newest may be reclaimed.
		t := time.AfterFunc(l.newGrace, l.freed.Broadcast)
		l.freed.Wait()
		t.Stop()
	}
	sc := &slotConn{Conn: c, l: l, state: http.StateNew, since: time.Now()}
	l.conns[sc] = struct{}{}
	l.mu.Unlock()
	return sc, nil
}

// victim is the connection to reclaim, nil when none may be; l.mu is held.
func (l *slotListener) victim(now time.Time) *slotConn {
	var idle, fresh *slotConn
	for c := range l.conns {
		switch c.state {
		case http.StateIdle:
			if idle == nil || c.since.Before(idle.since) {
				idle = c
			}
		case http.StateNew:
			if now.Sub(c.since) >= l.newGrace && (fresh == nil || c.since.Before(fresh.since)) {
				fresh = c
			}
		}
	}
	if idle != nil {
		return idle
	}
	return fresh
}

// connState is the http.Server's ConnState hook.
func (l *slotListener) connState(c net.Conn, st http.ConnState) {
	sc, ok := c.(*slotConn)
	if !ok {
		return
	}
	if st == http.StateClosed || st == http.StateHijacked {
		sc.release()
		return
	}
	l.mu.Lock()
	sc.state, sc.since = st, time.Now()
	l.mu.Unlock()
	if st == http.StateIdle {
		// A waiting newcomer may reclaim it now.
		l.freed.Broadcast()
	}
}

// release gives the connection's slot back (once).
func (c *slotConn) release() {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.freed.Broadcast()
	})
}

// Close closes the connection and frees its slot.
func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
