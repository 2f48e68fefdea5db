package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// TestTraceErrorShownInsteadOfTracing: a live forward trace that cannot run
// (no ICMP socket without privilege) must put its error, with the fix it
// names, on the route screen and the overview's detail, where "tracing…"
// stayed forever (issue 35); a trace that then arrives replaces it.
func TestTraceErrorShownInsteadOfTracing(t *testing.T) {
	snap := Snapshot{Tracing: true, Candidates: []Candidate{{Name: "lo"}}}
	m := NewLoaded(context.Background(), &Feed{Snapshot: snap}, snap, Options{Width: 80, Height: 30, NoColor: true})
	if !strings.Contains(plain(press(t, m, "enter")), "tracing…") {
		t.Fatal("before any trace the route screen does not say tracing…")
	}
	err := errors.New("trace 127.0.0.1 icmp: missing privilege to open ICMP or raw sockets: raw socket: operation not permitted\n" +
		"fix: run as root, or give the binary the capability:\n  sudo setcap cap_net_raw+ep /usr/local/bin/linecheck\n" +
		"or allow unprivileged ICMP (datagram) sockets for all groups:\n  sudo sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"")
	m = step(t, m, FeedErrMsg{Candidate: "lo", Direction: "forward", Err: err})

	overview := plain(m)
	if strings.Contains(overview, "tracing…") || !strings.Contains(overview, "forward: trace failed: trace 127.0.0.1 icmp: missing privilege") {
		t.Errorf("overview does not show the trace's error:\n%s", overview)
	}
	screen := plain(press(t, m, "enter"))
	if strings.Contains(screen, "tracing…") {
		t.Errorf("route screen still says tracing…:\n%s", screen)
	}
	for _, want := range []string{"forward path: trace failed", "sudo setcap cap_net_raw+ep /usr/local/bin/linecheck",
		`sudo sysctl -w net.ipv4.ping_group_range="0 2147483647"`} {
		if !strings.Contains(screen, want) {
			t.Errorf("route screen lacks %q:\n%s", want, screen)
		}
	}
	for i, l := range strings.Split(screen, "\n") {
		if w := textWidth(l); w > 80 {
			t.Errorf("route screen line %d is %d columns wide: %q", i+1, w, l)
		}
	}

	// A trace that arrives after a failed one clears the error.
	m = step(t, m, TraceMsg{Candidate: "lo", Direction: "forward", Trace: route.Trace{Target: "127.0.0.1",
		Hops: []route.Hop{{TTL: 1, Sent: 1, Responders: []route.Responder{{Addr: "127.0.0.1", Recv: 1}}}}}})
	if screen := plain(press(t, m, "enter")); strings.Contains(screen, "trace failed") {
		t.Errorf("a trace arrived, the route screen still shows the failure:\n%s", screen)
	}
}
