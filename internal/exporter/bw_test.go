package exporter

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
	"github.com/linecheck/linecheck/probe/bw"
)

func TestBWMetricsFromARealTest(t *testing.T) {
	port := bwtest.Server(t)

	reg := NewRegistry()
	m := NewBWMetrics(reg)
	target := BWTarget{Candidate: "lo", Addr: "127.0.0.1", Port: port}
	var runs atomic.Int32
	// The last download test's mean, as the test itself measured it: the
	// gauge must show that figure. The pace (30 Mbit/s) is an upper bound
	// only: on a loaded machine the sender falls behind it (23.7 Mbit/s
	// beside six builds on 2 cores), which the test does not control.
	var lastDown atomic.Pointer[float64]
	run := func(ctx context.Context, tg BWTarget, dir string) (*bw.Result, error) {
		if runs.Add(1) == 3 {
			return nil, errors.New("server busy")
		}
		r, err := bw.Run(ctx, tg.Addr, bw.Config{Port: tg.Port, Duration: 500 * time.Millisecond, Reverse: dir == bw.Download, Bitrate: 30e6})
		if err == nil && r != nil && dir == bw.Download && r.Throughput.Mean != nil {
			lastDown.Store(r.Throughput.Mean)
		}
		return r, err
	}
	rctx, rcancel := context.WithCancel(context.Background())
	go func() {
		for runs.Load() < 4 {
			time.Sleep(20 * time.Millisecond)
		}
		rcancel()
	}()
	engine.RunBW(rctx, 10*time.Millisecond, func() []BWTarget { return []BWTarget{target} }, []string{bw.Download, bw.Upload}, run, BWObserver(m, nil), nil)
	server := fmt.Sprintf("%s:%d", target.Addr, port)
	value := func(name string, labels ...string) float64 { return sampleValue(t, reg, name, labels...) }
	got := value("linecheck_throughput_bits_per_second", "candidate", "lo", "server", server, "direction", bw.Download)
	want := lastDown.Load()
	if want == nil {
		t.Fatal("no download test gave a mean")
	}
	if got != *want {
		t.Errorf("download gauge %v, want the last download test's mean %v", got, *want)
	}
	if got <= 0 || got > 32e6 {
		t.Errorf("download gauge %v, want a figure at or under the paced 30 Mbit/s", got)
	}
	if ok := value("linecheck_bw_tests_total", "candidate", "lo", "server", server, "direction", bw.Download, "result", "ok"); ok < 1 {
		t.Errorf("ok tests %v", ok)
	}
	if e := value("linecheck_bw_tests_total", "candidate", "lo", "server", server, "direction", bw.Download, "result", "error"); e != 1 {
		t.Errorf("error tests %v, want the one injected", e)
	}
}

// sampleValue is the value of the series of name with exactly the labels
// given as name, value pairs, read back from the text format; -1 if none.
func sampleValue(t *testing.T, reg *Registry, name string, labels ...string) float64 {
	t.Helper()
	for _, mf := range gather(t, reg) {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels)/2 {
				continue
			}
			for _, lp := range m.GetLabel() {
				found := false
				for i := 0; i < len(labels); i += 2 {
					if labels[i] == lp.GetName() && labels[i+1] == lp.GetValue() {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if m.Gauge != nil {
				return m.Gauge.GetValue()
			}
			return m.Counter.GetValue()
		}
	}
	return -1
}
