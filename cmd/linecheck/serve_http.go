package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// httpLimits bound what HTTP clients can hold of serve: a scrape is one
// short request, so a client that sends slowly, reads slowly or opens
// connections without end is cut off rather than left to exhaust the
// process or the slots a scraper needs (serve_slots.go).
type httpLimits struct {
	readHeader, read, write, idle time.Duration
	maxConns                      int           // connections served at once
	perIP                         int           // of those, from one client address
	grace                         time.Duration // a connection without a request, or a stalled write, this old is reclaimable
	stall                         time.Duration // a response the client takes nothing of for this long is cut off
	sndbuf                        int           // socket send buffer per connection, bytes (the kernel doubles it)
	maxHeader                     int
}

// A keep-alive connection idle for 15 s is closed (Prometheus reconnects
// for its next scrape at no cost); with the slots taken, idle ones are
// reclaimed first in any case. A scraper sends its request header at once,
// so 3 s for it is plenty; a client that reads nothing of a response for
// 2 s is not a scraper. A send buffer of 256 KiB carries a scrape of some
// 1 MB/s over a 200 ms round trip, and bounds what a client that never
// reads costs (an autotuned one grew to 3 MB on loopback).
var defaultHTTPLimits = httpLimits{readHeader: 3 * time.Second, read: 10 * time.Second, write: 30 * time.Second,
	idle: 15 * time.Second, maxConns: 128, perIP: 16, grace: 250 * time.Millisecond, stall: 2 * time.Second,
	sndbuf: 128 << 10, maxHeader: 16 << 10}

// newHTTPServer returns the server for h and ln wrapped to hold at most
// l.maxConns connections (l.perIP per client), reclaiming idle and stalled
// ones for newcomers, and to answer as web says (TLS, basic auth; nil:
// plain HTTP, no authentication).
func newHTTPServer(h http.Handler, ln net.Listener, l httpLimits, web *webConfig) (*http.Server, net.Listener) {
	sl := newSlotListener(ln, l.maxConns, l.perIP, l.grace, l.stall, l.readHeader, l.sndbuf)
	srv := &http.Server{Handler: markHandling(web.requireAuth(h)), ReadHeaderTimeout: l.readHeader, ReadTimeout: l.read,
		WriteTimeout: l.write, IdleTimeout: l.idle, MaxHeaderBytes: l.maxHeader, ConnState: sl.connState,
		ConnContext: connContext}
	if web != nil && web.tls != nil {
		srv.TLSConfig = web.tls
		return srv, tls.NewListener(sl, web.tls)
	}
	return srv, sl
}

// exposureWarning says what a non-loopback --listen exposes ("" on
// loopback): a warning without authentication, a note of who may read
// with it.
func exposureWarning(a net.Addr, web *webConfig) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return ""
	}
	where := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		where = "every interface of this host"
	}
	if web.authenticated() {
		var who []string
		if len(web.users) > 0 {
			who = append(who, "a basic_auth_users password")
		}
		if web.tls != nil && web.tls.ClientAuth == tls.RequireAndVerifyClientCert {
			who = append(who, "a client certificate of client_ca_file")
		}
		tlsNote := "over TLS"
		if web.tls == nil {
			tlsNote = "without TLS: the password crosses the network in the clear"
		}
		return fmt.Sprintf("linecheck serve: --listen %s is not a loopback address: clients from %s on port %d need %v (--web.config.file), %s",
			a, where, tcp.Port, joinAnd(who), tlsNote)
	}
	return fmt.Sprintf("linecheck serve: warning: --listen %s is not a loopback address: anyone who can reach %s on port %d "+
		"can read, without authentication, /metrics, / and /compare — every candidate's name, its target addresses and ports, "+
		"RTTs, loss, the traced routes (hop addresses), line classes, prices and the errors of failing targets (resolver addresses). "+
		"Give --web.config.file with basic_auth_users or a TLS client certificate (docs/scaleout.md), allow only your Prometheus "+
		"to that port (firewall), or bind 127.0.0.1.", a, where, tcp.Port)
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}
