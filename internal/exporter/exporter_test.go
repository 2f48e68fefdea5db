package exporter

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/linecheck/linecheck/internal/route"
)

// gather reads what reg exposes back with the Prometheus text parser (the
// independent judge of our text format), sorted by name.
func gather(t *testing.T, reg *Registry) []*dto.MetricFamily {
	t.Helper()
	var b bytes.Buffer
	if _, err := reg.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	byName, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("the text parser rejects /metrics: %v\n%s", err, b.String())
	}
	var out []*dto.MetricFamily
	for _, mf := range byName {
		out = append(out, mf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// metric finds one sample of name whose labels include want; nil if none.
func metric(t *testing.T, e *Exporter, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mfs := gather(t, e.Registry())
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

func count(t *testing.T, e *Exporter, name string) int {
	t.Helper()
	for _, mf := range gather(t, e.Registry()) {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

var (
	lo  = Target{Candidate: "local", Addr: "127.0.0.1", Protocol: "icmp"}
	loT = Target{Candidate: "local", Addr: "127.0.0.1", Protocol: "tcp", Port: 443}
	far = Target{Candidate: "far", Addr: "127.0.0.2", Protocol: "icmp"}
)

func TestObservePingCountsAndBucketsRTTsInSeconds(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo, loT}, time.Unix(100, 0))
	// RTTs in ms: 0.05 → ≤0.1 ms bucket; 0.3 → ≤0.5 ms; 1 → ≤1 ms (le is inclusive); 250 → ≤0.5 s.
	e.ObservePing(lo, PingOutcome{Sent: 5, Recv: 4, Late: 1, Dup: 2, RTTms: []float64{0.05, 0.3, 1, 250}})
	l := map[string]string{"candidate": "local", "target": "127.0.0.1", "protocol": "icmp"}
	for name, want := range map[string]float64{
		"linecheck_probes_sent_total": 5, "linecheck_probes_received_total": 4,
		"linecheck_probes_late_total": 1, "linecheck_probes_duplicate_total": 2, "linecheck_probe_errors_total": 0,
	} {
		if m := metric(t, e, name, l); m == nil || m.GetCounter().GetValue() != want {
			t.Errorf("%s = %v, want %v", name, m, want)
		}
	}
	h := metric(t, e, "linecheck_rtt_seconds", l).GetHistogram()
	if h.GetSampleCount() != 4 {
		t.Fatalf("histogram count %d, want 4", h.GetSampleCount())
	}
	if s := h.GetSampleSum(); s < 0.25135-1e-12 || s > 0.25135+1e-12 {
		t.Errorf("sum %v, want 0.25135", s)
	}
	cum := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for le, want := range map[float64]uint64{0.0001: 1, 0.0002: 1, 0.0005: 2, 0.001: 3, 0.2: 3, 0.5: 4, 1: 4} {
		if cum[le] != want {
			t.Errorf("bucket le=%v: %d, want %d", le, cum[le], want)
		}
	}
	// The tcp target is labelled with its port and exists from the start with zero counters.
	if m := metric(t, e, "linecheck_probes_sent_total", map[string]string{"target": "127.0.0.1:443", "protocol": "tcp"}); m == nil || m.GetCounter().GetValue() != 0 {
		t.Errorf("tcp target counter %v", m)
	}
}

func TestObserveTraceReplacesStaleHopsAndLineClass(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo}, time.Unix(0, 0))
	tr := func(class string, losses ...float64) *route.Trace {
		x := &route.Trace{LineClass: class, Reached: true}
		for i, l := range losses {
			x.Hops = append(x.Hops, route.Hop{TTL: i + 1, Sent: 10, Loss: l})
		}
		return x
	}
	e.ObserveTrace(lo, tr("cn2-gia", 0, 0.3, 0), nil)
	if n := count(t, e, "linecheck_hop_loss_ratio"); n != 3 {
		t.Fatalf("%d hop series, want 3", n)
	}
	if m := metric(t, e, "linecheck_hop_loss_ratio", map[string]string{"ttl": "2"}); m.GetGauge().GetValue() != 0.3 {
		t.Errorf("ttl 2 loss %v", m)
	}
	e.ObserveTrace(lo, tr("", 0, 0), nil)
	if n := count(t, e, "linecheck_hop_loss_ratio"); n != 2 {
		t.Errorf("after a 2-hop trace: %d hop series, want 2", n)
	}
	if m := metric(t, e, "linecheck_hops", nil); m.GetGauge().GetValue() != 2 {
		t.Errorf("hops %v", m)
	}
	if n := count(t, e, "linecheck_line_class_info"); n != 1 || metric(t, e, "linecheck_line_class_info", map[string]string{"line_class": "unknown"}) == nil {
		t.Errorf("line class series: %d, want one with unknown", n)
	}
	e.ObserveTrace(lo, nil, errors.New("no route"))
	if m := metric(t, e, "linecheck_probe_errors_total", nil); m.GetCounter().GetValue() != 1 {
		t.Errorf("errors %v", m)
	}
}

func TestReloadDeletesSeriesOfTargetsThatLeft(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo, far}, time.Unix(0, 0))
	e.ObservePing(far, PingOutcome{Sent: 1, Recv: 1, RTTms: []float64{1}})
	e.ObserveTrace(far, &route.Trace{Hops: []route.Hop{{TTL: 1}}}, nil)
	e.SetTargets([]Target{lo}, time.Unix(1, 0))
	for _, name := range []string{"linecheck_probes_sent_total", "linecheck_rtt_seconds", "linecheck_hop_loss_ratio", "linecheck_hops", "linecheck_line_class_info"} {
		if m := metric(t, e, name, map[string]string{"candidate": "far"}); m != nil {
			t.Errorf("%s of a removed target still exported: %v", name, m)
		}
	}
	// A late outcome of the removed target does not bring it back.
	e.ObservePing(far, PingOutcome{Sent: 1})
	if m := metric(t, e, "linecheck_probes_sent_total", map[string]string{"candidate": "far"}); m != nil {
		t.Error("late outcome re-created the series")
	}
	if m := metric(t, e, "linecheck_config_last_reload_success_timestamp_seconds", nil); m.GetGauge().GetValue() != 1 {
		t.Errorf("reload time %v", m)
	}
}

// promtool is the judge of the metric names, types and units.
func TestMetricsPassPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatal("promtool missing (Debian package prometheus); CI installs it")
		}
		t.Skip("promtool not installed and not root")
	}
	e := New(nil)
	e.SetTargets([]Target{lo, loT, {Candidate: "v6", Addr: "::1", Protocol: "tcp", Port: 8443}}, time.Unix(0, 0))
	e.ObservePing(lo, PingOutcome{Sent: 2, Recv: 2, RTTms: []float64{0.1, 0.2}})
	e.ObserveTrace(lo, &route.Trace{LineClass: "transit", Hops: []route.Hop{{TTL: 1}, {TTL: 2, Loss: 0.5}}}, nil)
	e.CycleDone()
	srv := httptest.NewServer(e.Mux())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"linecheck_rtt_seconds_bucket{", "linecheck_hop_loss_ratio{", "linecheck_line_class_info{", `target="[::1]:8443"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s\n--- input:\n%s", err, out, body)
	}
	resp, err = srv.Client().Get(srv.URL + "/-/healthy")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/-/healthy: %v %v", err, resp)
	}
}
