package exporter

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/linecheck/linecheck/probe/bw"
)

func TestBWMetricsFromARealTest(t *testing.T) {
	srv, err := bw.Listen(bw.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	reg := prometheus.NewRegistry()
	m := NewBWMetrics(reg)
	target := BWTarget{Candidate: "lo", Addr: "127.0.0.1", Port: srv.Addr().Port}
	var runs atomic.Int32
	run := func(ctx context.Context, tg BWTarget, dir string) (*bw.Result, error) {
		if runs.Add(1) == 3 {
			return nil, errors.New("server busy")
		}
		return bw.Run(ctx, tg.Addr, bw.Config{Port: tg.Port, Duration: 500 * time.Millisecond, Reverse: dir == bw.Download, Bitrate: 30e6})
	}
	rctx, rcancel := context.WithCancel(context.Background())
	go func() {
		for runs.Load() < 4 {
			time.Sleep(20 * time.Millisecond)
		}
		rcancel()
	}()
	RunBW(rctx, 10*time.Millisecond, func() []BWTarget { return []BWTarget{target} }, []string{bw.Download, bw.Upload}, run, m, nil)
	server := target.Addr + ":" + strings.TrimPrefix(srv.Addr().String(), "127.0.0.1:")
	got := value(m.throughput.WithLabelValues("lo", server, bw.Download))
	if got < 27e6 || got > 32e6 {
		t.Errorf("download gauge %v, want the paced 30 Mbit/s", got)
	}
	if ok := value(m.tests.WithLabelValues("lo", server, bw.Download, "ok")); ok < 1 {
		t.Errorf("ok tests %v", ok)
	}
	if e := value(m.tests.WithLabelValues("lo", server, bw.Download, "error")); e != 1 {
		t.Errorf("error tests %v, want the one injected", e)
	}
}

func value(c prometheus.Collector) float64 {
	var m dto.Metric
	if err := c.(prometheus.Metric).Write(&m); err != nil {
		return -1
	}
	if m.Gauge != nil {
		return m.Gauge.GetValue()
	}
	return m.Counter.GetValue()
}
