package exporter

import (
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeAs asks h for /metrics with accept and decodes the answer with
// expfmt (the text parser, or the protobuf decoder by the answer's
// Content-Type): the samples by family name.
func scrapeAs(t *testing.T, h interface {
	ServeHTTP(w *httptest.ResponseRecorder, accept string)
}, accept string) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, accept)
	if rec.Code != 200 {
		t.Fatalf("Accept %q: status %d: %s", accept, rec.Code, rec.Body)
	}
	ct := rec.Header().Get("Content-Type")
	out := map[string]*dto.MetricFamily{}
	if strings.HasPrefix(ct, "application/vnd.google.protobuf") {
		dec := expfmt.NewDecoder(rec.Body, expfmt.Format(ct))
		for {
			mf := &dto.MetricFamily{}
			if err := dec.Decode(mf); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("Accept %q: %v", accept, err)
			}
			out[mf.GetName()] = mf
		}
		return ct, out
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("Accept %q (%s): %v", accept, ct, err)
	}
	return ct, mfs
}

type muxScraper struct{ e *Exporter }

func (m muxScraper) ServeHTTP(w *httptest.ResponseRecorder, accept string) {
	req := httptest.NewRequest("GET", "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	m.e.Mux().ServeHTTP(w, req)
}

// sample is one series as "name{l1=v1,...}" (labels sorted) and its value;
// histograms as their _bucket, _sum and _count series.
func samples(mfs map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, lp := range m.GetLabel() {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			sort.Strings(ls)
			key := func(suffix string, more ...string) string {
				return name + suffix + "{" + strings.Join(append(append([]string(nil), ls...), more...), ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key("")] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key("")] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					if !math.IsInf(b.GetUpperBound(), 1) { // the text parser keeps +Inf, protobuf has none
						out[key("_bucket", "le="+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))] = float64(b.GetCumulativeCount())
					}
				}
				out[key("_sum")] = h.GetSampleSum()
				out[key("_count")] = float64(h.GetSampleCount())
			default:
				out[key("?")] = math.NaN()
			}
		}
	}
	return out
}

// A fixed state scraped as Prometheus would (text, its OpenMetrics-first
// Accept header, protobuf): every answer decodes to the same samples, and
// those of one target's cycle are the figures computed here by hand.
func TestScrapeSamplesFromAFixedState(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo}, time.Unix(1_700_000_000, 500_000_000))
	// One cycle: 4 probes, 3 answered (0.15 ms, 1.5 ms, 700 ms), 1 late, 2 duplicates.
	e.ObservePing(lo, PingOutcome{Sent: 4, Recv: 3, Late: 1, Dup: 2, RTTms: []float64{0.15, 1.5, 700}})
	e.CycleDone()

	ct, text := scrapeAs(t, muxScraper{e}, "")
	if ct != "text/plain; version=0.0.4; charset=utf-8; escaping=underscores" {
		t.Errorf("plain scrape: Content-Type %q", ct)
	}
	got := samples(text)
	l := "{candidate=local,protocol=icmp,target=127.0.0.1"
	want := map[string]float64{
		"linecheck_probes_sent_total" + l + "}":                                                 4,
		"linecheck_probes_received_total" + l + "}":                                             3,
		"linecheck_probes_late_total" + l + "}":                                                 1,
		"linecheck_probes_duplicate_total" + l + "}":                                            2,
		"linecheck_probe_errors_total" + l + "}":                                                0,
		"linecheck_path_changes_total" + l + "}":                                                0,
		"linecheck_target_up" + l + "}":                                                         1,
		"linecheck_window_loss_ratio" + l + "}":                                                 0.25, // 1 − 3/4
		"linecheck_cycles_total{}":                                                              1,
		"linecheck_config_last_reload_success_timestamp_seconds{}":                              1_700_000_000.5,
		"linecheck_rtt_seconds_count" + l + "}":                                                 3,
		"linecheck_rtt_seconds_sum" + l + "}":                                                   0.00015 + 0.0015 + 0.7,
		"promhttp_metric_handler_errors_total{cause=encoding}":                                  0,
		"promhttp_metric_handler_errors_total{cause=gathering}":                                 0,
		"linecheck_window_rtt_seconds{candidate=local,protocol=icmp,stat=min,target=127.0.0.1}": 0.00015,
		"linecheck_window_rtt_seconds{candidate=local,protocol=icmp,stat=max,target=127.0.0.1}": 0.7,
		"linecheck_window_rtt_seconds{candidate=local,protocol=icmp,stat=p50,target=127.0.0.1}": 0.0015, // nearest rank 2 of 3
		"linecheck_window_rtt_seconds{candidate=local,protocol=icmp,stat=p99,target=127.0.0.1}": 0.7,
		"linecheck_jitter_seconds" + l + "}":                                                    (1.35 + 698.5) / 2 / 1000,
		"linecheck_window_rtt_seconds{candidate=local,protocol=icmp,stat=p95,target=127.0.0.1}": 0.7,
	}
	// Cumulative buckets of 0.15 ms, 1.5 ms and 700 ms over RTTBuckets.
	for le, n := range map[string]float64{"0.0001": 0, "0.0002": 1, "0.0005": 1, "0.001": 1, "0.002": 2, "0.005": 2,
		"0.01": 2, "0.02": 2, "0.05": 2, "0.1": 2, "0.2": 2, "0.5": 2, "1": 3} {
		want["linecheck_rtt_seconds_bucket"+l+",le="+le+"}"] = n
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s absent, want %v", k, w)
		} else if math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)) {
			t.Errorf("%s = %v, want %v", k, g, w)
		}
	}
	// Types and label names as the package documents them.
	for name, typ := range map[string]dto.MetricType{
		"linecheck_rtt_seconds": dto.MetricType_HISTOGRAM, "linecheck_probes_sent_total": dto.MetricType_COUNTER,
		"linecheck_target_up": dto.MetricType_GAUGE, "linecheck_cycles_total": dto.MetricType_COUNTER,
		"linecheck_window_rtt_seconds": dto.MetricType_GAUGE,
	} {
		if mf := text[name]; mf == nil || mf.GetType() != typ || mf.GetHelp() == "" {
			t.Errorf("%s: %v, want type %v with HELP", name, mf, typ)
		}
	}

	// Prometheus's own Accept header (OpenMetrics first): served the text
	// format (client_golang's default, which the recording test pins),
	// the same samples.
	ct, om := scrapeAs(t, muxScraper{e}, "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	if !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("OpenMetrics Accept: Content-Type %q", ct)
	}
	// Protobuf, which Prometheus asks for first when native histograms
	// are on: the same samples again.
	ct, pb := scrapeAs(t, muxScraper{e}, "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3")
	if !strings.HasPrefix(ct, "application/vnd.google.protobuf") {
		t.Errorf("protobuf Accept: Content-Type %q", ct)
	}
	for what, other := range map[string]map[string]*dto.MetricFamily{"OpenMetrics Accept": om, "protobuf": pb} {
		o := samples(other)
		for k, v := range got {
			// go_*/process_* are not in this registry; every sample is ours.
			if w, ok := o[k]; !ok || (w != v && !(math.IsNaN(w) && math.IsNaN(v))) {
				t.Errorf("%s: %s = %v (present %v), text %v", what, k, w, ok, v)
			}
		}
		if len(o) != len(got) {
			t.Errorf("%s: %d samples, text %d", what, len(o), len(got))
		}
		for name, mf := range text {
			if x := other[name]; x == nil || x.GetHelp() != mf.GetHelp() || x.GetType() != mf.GetType() {
				t.Errorf("%s: family %s differs: %v", what, name, x)
			}
		}
	}
}

// Scrapes at once, in text and protobuf, while the loop records: they share
// each series' label pairs, which only the scrapes read (go test -race).
func TestConcurrentScrapesShareLabelPairs(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo, far}, time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			e.ObservePing(lo, PingOutcome{Sent: 2, Recv: 2, RTTms: []float64{float64(i % 5), 1}})
		}
	}()
	errs := make(chan error, 4)
	for _, accept := range []string{"", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "", ""} {
		go func() {
			for range 20 {
				rec := httptest.NewRecorder()
				muxScraper{e}.ServeHTTP(rec, accept)
				if rec.Code != 200 || rec.Body.Len() == 0 {
					errs <- fmt.Errorf("Accept %q: status %d, %d bytes", accept, rec.Code, rec.Body.Len())
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-done
	if got := samples(func() map[string]*dto.MetricFamily { _, m := scrapeAs(t, muxScraper{e}, ""); return m }())["linecheck_probes_sent_total{candidate=local,protocol=icmp,target=127.0.0.1}"]; got != 600 {
		t.Errorf("sent %v after 300 cycles of 2, want 600", got)
	}
}
