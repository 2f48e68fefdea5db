package exporter

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/linecheck/linecheck/internal/route"
)

type goldenCase struct {
	Accept, AcceptEncoding, Path       string
	Status                             int
	ContentType, ContentEncoding, Vary string
	Body                               string
}

var goldenRequests = []goldenCase{
	{Path: "/metrics"},
	{Path: "/metrics", AcceptEncoding: "gzip"},
	{Path: "/metrics", AcceptEncoding: "gzip;q=0"},
	{Path: "/metrics", AcceptEncoding: "*"},
	{Path: "/metrics", AcceptEncoding: "identity, gzip"},
	{Path: "/metrics", AcceptEncoding: "br"},
	{Path: "/metrics", AcceptEncoding: "zstd, gzip;q=0.5"},
	{Path: "/metrics", Accept: "text/plain;version=0.0.4"},
	{Path: "/metrics", Accept: "text/plain;version=1.0.0;escaping=allow-utf-8"},
	{Path: "/metrics", Accept: "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2", AcceptEncoding: "gzip"},
	{Path: "/metrics", Accept: "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1"},
	{Path: "/metrics", Accept: "application/json"},
	{Path: "/metrics", Accept: "text/plain;escaping=dots"},
	{Path: "/metrics", Accept: "text/plain;escaping=bogus"},
	{Path: "/metrics?name[]=linecheck_hops&name[]=linecheck_cycles_total"},
	{Path: "/metrics?name[]=nope"},
	// Protobuf, which the client library offers first: compared as the
	// text it decodes to (the JSON recording cannot hold its bytes).
	{Path: "/metrics", Accept: "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.8,text/plain;version=0.0.4;q=0.5"},
}

func doGolden(t *testing.T, h http.Handler, c goldenCase) goldenCase {
	t.Helper()
	req := httptest.NewRequest("GET", c.Path, nil)
	if c.Accept != "" {
		req.Header.Set("Accept", c.Accept)
	}
	if c.AcceptEncoding != "" {
		req.Header.Set("Accept-Encoding", c.AcceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	c.Status = rec.Code
	c.ContentType = rec.Header().Get("Content-Type")
	c.ContentEncoding = rec.Header().Get("Content-Encoding")
	c.Vary = rec.Header().Values("Vary")[0]
	if v := rec.Header().Values("Vary"); len(v) > 1 {
		c.Vary += ", " + v[1]
	}
	body := io.Reader(rec.Body)
	if c.ContentEncoding == "gzip" {
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	c.Body = string(b)
	return c
}

// clientGolangRecording is what promhttp (client_golang v1.25.0, common
// v0.72.0), which served /metrics before metrics.go, answered to
// goldenRequests on goldenState; recorded once with that library, before it
// was removed, so it is an independent record, not our own output.
const clientGolangRecording = "testdata/client_golang_v1.25.0.json"

func TestMetricsAsClientGolangServedThem(t *testing.T) {
	b, err := os.ReadFile(clientGolangRecording)
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenCase
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(goldenRequests) {
		t.Fatalf("%d recorded cases, %d requests", len(want), len(goldenRequests))
	}
	e := New(nil)
	goldenState(e)
	for i, c := range goldenRequests {
		got := doGolden(t, e.Mux(), c)
		if strings.Contains(c.Accept, "protobuf") {
			// Protobuf is served again, as the recording has it; its
			// body (kept as text in the JSON, so not byte-comparable) is
			// compared as the text format it decodes to.
			got.Body = protoAsText(t, got.Body)
		}
		// Families that came after the recording (linecheck_jitter_seconds,
		// the window, path and snapshot families of issue 23): the
		// recording still holds for every family it has.
		for _, name := range laterFamilies {
			got.Body = withoutFamily(got.Body, name)
		}
		// linecheck_target_up changed its meaning after the recording (up =
		// answered at least once in the window, issue 23): it is checked
		// by TestTargetUpIsAnsweredInTheWindow instead.
		got.Body = withoutFamily(got.Body, "linecheck_target_up")
		// linecheck_sla_check_pass is absent for a check without data now
		// (linecheck_sla_check_nodata says it): TestSLAGaugesFollowComparesChecks.
		got.Body = withoutFamily(got.Body, "linecheck_sla_check_pass")
		w := want[i]
		if strings.Contains(c.Accept, "protobuf") {
			w.Body = want[0].Body
		}
		w.Body = withoutFamily(w.Body, "linecheck_target_up")
		w.Body = withoutFamily(w.Body, "linecheck_sla_check_pass")
		if got.Status != w.Status || got.ContentType != w.ContentType || got.ContentEncoding != w.ContentEncoding || got.Vary != w.Vary {
			t.Errorf("%s Accept %q Accept-Encoding %q: status %d, Content-Type %q, Content-Encoding %q, Vary %q; want %d %q %q %q",
				c.Path, c.Accept, c.AcceptEncoding, got.Status, got.ContentType, got.ContentEncoding, got.Vary, w.Status, w.ContentType, w.ContentEncoding, w.Vary)
		}
		if got.Body != w.Body {
			t.Errorf("%s Accept %q Accept-Encoding %q: body differs from client_golang's:\n%s", c.Path, c.Accept, c.AcceptEncoding, lineDiff(w.Body, got.Body))
		}
	}
	// The Prometheus text parser reads every family, with its type.
	mfs := gather(t, e.Registry())
	old := 0
	for _, mf := range mfs {
		if !slices.Contains(laterFamilies, mf.GetName()) {
			old++
		}
	}
	if old != 16 {
		t.Errorf("%d families beside the later ones, want the recording's 16", old)
	}
	for _, mf := range mfs {
		if mf.GetName() == "linecheck_rtt_seconds" && mf.GetType() != dto.MetricType_HISTOGRAM {
			t.Errorf("rtt type %v", mf.GetType())
		}
	}
}

// protoAsText decodes a delimited protobuf exposition and writes it back in
// the text format with the parser library's own writer.
func protoAsText(t *testing.T, body string) string {
	t.Helper()
	dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	var b strings.Builder
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("protobuf body: %v", err)
		}
		if _, err := expfmt.MetricFamilyToText(&b, &mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// laterFamilies are the families added after the client_golang recording
// that goldenState fills.
var laterFamilies = []string{"linecheck_jitter_seconds", "linecheck_window_loss_ratio", "linecheck_window_rtt_seconds",
	"linecheck_hop_rtt_seconds", "linecheck_path_id", "linecheck_path_changes_total",
	"linecheck_candidate_loss_ratio", "linecheck_candidate_rtt_seconds", "linecheck_candidate_jitter_seconds",
	"linecheck_stretch_ratio", "linecheck_floor_rtt_seconds", "linecheck_candidate_line_class_info",
	"linecheck_sla_check_nodata", "linecheck_sla_pass", "linecheck_sla_window_check_pass", "linecheck_sla_window_check_nodata"}

// withoutFamily drops the lines of one metric family from a text or
// OpenMetrics exposition.
func withoutFamily(body, name string) string {
	var keep []string
	for _, l := range strings.SplitAfter(body, "\n") {
		if strings.HasPrefix(l, name+"{") || strings.HasPrefix(l, name+" ") ||
			strings.HasPrefix(l, "# HELP "+name+" ") || strings.HasPrefix(l, "# TYPE "+name+" ") || strings.HasPrefix(l, "# UNIT "+name+" ") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d\n  want %q\n  got  %q", i+1, x, y))
		}
		if len(out) == 10 {
			break
		}
	}
	return strings.Join(out, "\n")
}

// brokenWriter fails every write, as a connection the scraper closed does.
type brokenWriter struct{ h http.Header }

func (w *brokenWriter) Header() http.Header       { return w.h }
func (w *brokenWriter) Write([]byte) (int, error) { return 0, errors.New("connection reset") }
func (w *brokenWriter) WriteHeader(int)           {}

func TestMetricsCountAFailedWrite(t *testing.T) {
	e := New(nil)
	goldenState(e)
	h := e.Handler()
	h.ServeHTTP(&brokenWriter{h: http.Header{}}, httptest.NewRequest("GET", "/metrics", nil))
	if v := sampleValue(t, e.Registry(), "promhttp_metric_handler_errors_total", "cause", "encoding"); v != 1 {
		t.Errorf("encoding errors %v, want 1", v)
	}
	if v := sampleValue(t, e.Registry(), "promhttp_metric_handler_errors_total", "cause", "gathering"); v != 0 {
		t.Errorf("gathering errors %v, want 0", v)
	}
	// A second handler (Mux is made again on every call) shares the counter.
	if e.Handler() != h {
		t.Error("Handler made twice")
	}
}

// Scrapes while the loop records: every scrape parses, and on loopback
// received == sent in each (a cycle is never seen half applied).
func TestMetricsScrapedWhileRecording(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo, far}, time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			e.ObservePing(lo, PingOutcome{Sent: 3, Recv: 3, RTTms: []float64{float64(i % 7), 0.2, 3}})
			e.ObserveTrace(far, &route.Trace{Hops: []route.Hop{{TTL: 1 + i%4}}}, nil)
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		v := map[string]float64{}
		for _, mf := range gather(t, e.Registry()) {
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == "local" && m.Counter != nil {
					v[mf.GetName()] = m.GetCounter().GetValue()
				}
			}
		}
		if s, r := v["linecheck_probes_sent_total"], v["linecheck_probes_received_total"]; s != r {
			t.Fatalf("sent %v, received %v in one scrape", s, r)
		}
	}
}
