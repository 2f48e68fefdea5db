package verdict

import (
	"encoding/json"

	"github.com/linecheck/linecheck/internal/stats"
)

// A figure without data is absent: in the linecheck.compare/v1 document it
// is null, never 0 (a number or null, so the schema stays v1). Go keeps the
// figures as plain numbers with the counts that say whether they exist
// (Recv for RTT and jitter, Sent for loss, FloorMs for stretch); these
// marshallers write null where the count says there is nothing.

// num is a figure that is null when absent.
func num(x float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &x
}

type rttJSON struct {
	Min *float64 `json:"min"`
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

type jitterJSON struct {
	RFC3550 *float64 `json:"rfc3550"`
	MeanAbs *float64 `json:"mean_abs"`
	PDVP95  *float64 `json:"pdv_p95"`
}

func jitterOf(j stats.Jitter, ok bool) jitterJSON {
	return jitterJSON{num(j.RFC3550, ok), num(j.MeanAbs, ok), num(j.PDVP95, ok)}
}

// MarshalJSON writes rtt_ms and jitter_ms as null without an answered
// probe, loss as null without a probe sent, stretch and floor_ms as null
// when unknown.
func (q RouteQuality) MarshalJSON() ([]byte, error) {
	type plain RouteQuality
	have := q.Recv > 0
	return json.Marshal(struct {
		plain
		RTT     rttJSON    `json:"rtt_ms"`
		Loss    *float64   `json:"loss"`
		Jitter  jitterJSON `json:"jitter_ms"`
		Stretch *float64   `json:"stretch"`
		FloorMs *float64   `json:"floor_ms"`
	}{
		plain: plain(q),
		RTT:   rttJSON{num(q.RTT.Min, have), num(q.RTT.P50, have), num(q.RTT.P95, have), num(q.RTT.P99, have), num(q.RTT.Max, have)},
		Loss:  num(q.Loss, q.Sent > 0), Jitter: jitterOf(q.Jitter, have),
		Stretch: num(q.Stretch, have && q.Stretch > 0), FloorMs: num(q.FloorMs, q.FloorMs > 0),
	})
}

// MarshalJSON writes a target's RTT and jitter figures as null when none of
// its probes was answered, and its loss as null when none was sent.
func (t TargetResult) MarshalJSON() ([]byte, error) {
	type plain TargetResult
	have := t.Recv > 0
	r := t.RTT
	return json.Marshal(struct {
		plain
		Loss   *float64      `json:"loss"`
		RTT    targetRTTJSON `json:"rtt_ms"`
		Jitter jitterJSON    `json:"jitter_ms"`
	}{plain: plain(t), Loss: num(t.Loss, t.Sent > 0),
		RTT:    targetRTTJSON{num(r.Min, have), num(r.Avg, have), num(r.P50, have), num(r.P95, have), num(r.P99, have), num(r.Max, have), num(r.Stdev, have)},
		Jitter: jitterOf(t.Jitter, have)})
}

// targetRTTJSON is a target's RTT statistics, all of them (a route's,
// rttJSON, leave out the mean and deviation).
type targetRTTJSON struct {
	Min   *float64 `json:"min"`
	Avg   *float64 `json:"avg"`
	P50   *float64 `json:"p50"`
	P95   *float64 `json:"p95"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
	Stdev *float64 `json:"stdev"`
}
