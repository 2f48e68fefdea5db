package probe_test

import (
	"context"
	"fmt"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// Ten probes to the loopback address, 100 ms apart, with the statistics the
// ping command prints.
func ExamplePing() {
	cfg := probe.PingConfig{Count: 10, Interval: 100 * time.Millisecond, Timeout: time.Second}
	res, err := probe.Ping(context.Background(), []string{"127.0.0.1"}, cfg, nil)
	if err != nil {
		fmt.Println(err) // wraps probe.ErrPrivilege when sockets are not allowed
		return
	}
	for _, r := range res {
		st, jit := stats.Summarize(r.RTTs)
		fmt.Printf("%s: %d/%d received, p50 %.3f ms, jitter %.3f ms\n", r.Target, r.Recv, r.Sent, st.P50, jit.RFC3550)
	}
}

// A three-cycle UDP trace, printing each cycle's snapshot as it arrives.
func ExampleTrace() {
	cfg := probe.TraceConfig{Proto: probe.UDP, Cycles: 3, Interval: 200 * time.Millisecond}
	run, err := probe.Trace(context.Background(), "127.0.0.1", cfg, func(r *probe.TraceRun) {
		fmt.Println("hops so far:", len(route.BuildTrace(r).Hops))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range route.BuildTrace(run).Hops {
		fmt.Println(h.TTL, h.Loss, h.Flags)
	}
}
