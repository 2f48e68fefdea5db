package exporter

import (
	"math"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe/bw"
)

// goldenState fills e with every kind of series /metrics can show: counters
// past a million (printed in exponent form), RTTs on and between the bucket
// bounds and above the last, hop and line-class gauges, SLA gauges, the
// throughput metrics, and label values that need escaping.
func goldenState(e *Exporter) {
	odd := Target{Candidate: "q\"uo\\te\nline", Addr: "127.0.0.9", Protocol: "icmp", Carrier: "ct", City: "Zürich"}
	v6 := Target{Candidate: "v6", Addr: "::1", Protocol: "tcp", Port: 8443}
	e.SetTargets([]Target{lo, loT, far, odd, v6}, time.Unix(1700000000, 123456789))
	p95, loss := 20.0, 0.05
	e.SetSLA(candidates.SLA{RTTP95ms: &p95, Loss: &loss, LineClasses: []string{route.LineCN2GIA}}, map[string]float64{"local": 0.01})
	e.ObservePing(lo, PingOutcome{Sent: 1234567, Recv: 1234560, Late: 3, Dup: 2,
		RTTms: []float64{0.05, 0.1, 0.2, 0.30000000000000004, 1, 2.5, 10, 20, 49.9, 100, 250, 999.999, 1000, 1500, math.Inf(1)}})
	e.ObservePing(loT, PingOutcome{Sent: 3, Recv: 0, Err: errFixed})
	e.ObservePing(odd, PingOutcome{Sent: 10, Recv: 9, RTTms: []float64{0.123456789, 7.77, 33.3333}})
	e.ObservePing(v6, PingOutcome{Sent: 1, Recv: 1, RTTms: []float64{0.07}})
	e.ObserveTrace(lo, &route.Trace{LineClass: route.LineCN2GIA, Reached: true, Hops: []route.Hop{{TTL: 1}, {TTL: 2, Loss: 1.0 / 3}, {TTL: 3, Loss: 0.1}}}, nil)
	e.ObserveTrace(odd, &route.Trace{Hops: []route.Hop{{TTL: 1, Loss: 0.5}}}, nil)
	e.ObserveTrace(far, nil, errFixed)
	e.CycleDone()
	e.CycleDone()
	m := NewBWMetrics(e.Registry())
	mean := 94.125e6
	m.Observe(BWTarget{Candidate: "local", Addr: "127.0.0.1", Port: 5201}, bw.Download, &bw.Result{Throughput: bw.Throughput{Mean: &mean}}, nil)
	m.Observe(BWTarget{Candidate: "local", Addr: "127.0.0.1", Port: 5201}, bw.Upload, nil, errFixed)
}

type fixedErr struct{}

func (fixedErr) Error() string { return "fixed test error" }

var errFixed error = fixedErr{}
