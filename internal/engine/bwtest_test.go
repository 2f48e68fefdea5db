package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
	"github.com/linecheck/linecheck/probe/bw"
)

// A server that is busy for a moment (here: a connection that has not yet
// sent its cookie, as a TCP probe of the same port leaves behind) is tried
// again: the test runs once the hog hangs up, and nothing is reported.
func TestLiveThroughputRetriesABusyServer(t *testing.T) {
	port := bwtest.Server(t)
	hog := bwtest.Occupy(t, port)
	// The server takes the hog as its client; a test now is refused busy.
	bt := candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}
	if _, err := bw.Run(context.Background(), bt.Addr, bw.Config{Port: bt.Port, Duration: time.Second}); !errors.Is(err, bw.ErrBusy) {
		t.Fatalf("with the hog connected: %v, want busy", err)
	}
	time.AfterFunc(400*time.Millisecond, func() { hog.Close() })
	tp := MeasureThroughput(context.Background(), bt, time.Second, bw.Download)
	if tp.Error != "" || tp.P5 == nil || *tp.P5 <= 0 {
		t.Fatalf("after the hog left: %+v", tp)
	}
	// A server that stays busy is reported as busy after the retries.
	defer bwtest.Occupy(t, port).Close()
	tp = measureThroughput(context.Background(), bt, time.Second, bw.Download, []time.Duration{10 * time.Millisecond, 10 * time.Millisecond})
	if tp.P5 != nil || !strings.Contains(tp.Error, "busy") {
		t.Fatalf("still busy: %+v", tp)
	}
}

// bw --watch's cycle tries a busy server again too: its tests follow each
// other, and the server may still be finishing the last one (a CI run saw
// the fourth test of a watch refused busy).
func TestBWCycleRetriesABusyServer(t *testing.T) {
	port := bwtest.Server(t)
	hog := bwtest.Occupy(t, port)
	time.AfterFunc(400*time.Millisecond, func() { hog.Close() })
	var waits []time.Duration
	res, err := BWCycle(context.Background(), "127.0.0.1", bw.Config{Port: port, Duration: time.Second}, func(w time.Duration) { waits = append(waits, w) })
	if err != nil || res == nil || res.Throughput.Mean == nil {
		t.Fatalf("after the hog left: %+v, %v", res, err)
	}
	// Held 0.4 s: the first try is refused, and the first wait told is
	// 0.25 s.
	if len(waits) == 0 || waits[0] != 250*time.Millisecond {
		t.Errorf("waits told %v, want 250ms first", waits)
	}
}
