package route

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// testdata/mtr-loopback*.json are real `mtr --json -n` outputs (mtr 0.95) against
// 127.0.0.1 and ::1; the expectations are the numbers read off those files.
func TestReadTraceMTRLoopback(t *testing.T) {
	tr, err := ReadTraceFile("testdata/mtr-loopback.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Schema != TraceSchema || tr.Source != "mtr-json" || tr.Target != "127.0.0.1" || tr.Addr != "127.0.0.1" || !tr.Reached {
		t.Fatalf("header %+v", tr)
	}
	if len(tr.Hops) != 1 {
		t.Fatalf("%d hops, want 1", len(tr.Hops))
	}
	h := tr.Hops[0]
	if h.TTL != 1 || h.Sent != 3 || h.Loss != 0 || !slices.Equal(h.Flags, []string{FlagDestination}) {
		t.Errorf("hop %+v", h)
	}
	r := h.Responders[0]
	if r.Addr != "127.0.0.1" || r.Recv != 3 || r.RTT.Min != 0.06 || r.RTT.Avg != 0.062 || r.RTT.Max != 0.064 {
		t.Errorf("responder %+v", r)
	}
}

func TestReadTraceMTRJitterConversion(t *testing.T) {
	tr, err := ReadTraceFile("testdata/mtr-loopback6-wide.json")
	if err != nil {
		t.Fatal(err)
	}
	r := tr.Hops[0].Responders[0]
	// File: Rcv 4, Javg 0.004, Jint 0.015 → mean_abs 0.004·4/3, rfc3550 0.015/16.
	if r.Recv != 4 || !nearMTR(r.Jitter.MeanAbs, 0.004*4/3) || !nearMTR(r.Jitter.RFC3550, 0.015/16) {
		t.Errorf("responder %+v", r)
	}
	if tr.Addr != "::1" || !tr.Reached {
		t.Errorf("addr %q reached %v", tr.Addr, tr.Reached)
	}
}

func TestReadTraceMTRSilentAndRateLimitedHops(t *testing.T) {
	// An older mtr quotes count; hub 2 never answered; hub 3 answers 40 % of 50
	// probes while the destination answers all: 0.6 − 0 > 2·sqrt(0.24/50) ≈ 0.139.
	in := `{"report":{"mtr":{"src":"x","dst":"10.77.3.2","tests":"50"},"hubs":[
	 {"count":"1","host":"10.77.0.2","Loss%":0.0,"Snt":50,"Best":0.1,"Avg":0.2,"Wrst":0.3,"StDev":0.05},
	 {"count":"2","host":"???","Loss%":100.0,"Snt":50},
	 {"count":"3","host":"10.77.2.2","ASN":"AS4134","Loss%":60.0,"Snt":50},
	 {"count":"4","host":"10.77.3.2","Loss%":0.0,"Snt":50}]}}`
	tr, err := ReadTrace(strings.NewReader(in), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{}, {FlagNoReply}, {FlagRateLimited}, {FlagDestination}}
	for i, h := range tr.Hops {
		if !slices.Equal(h.Flags, want[i]) {
			t.Errorf("ttl %d flags %v, want %v", h.TTL, h.Flags, want[i])
		}
	}
	if len(tr.Hops[1].Responders) != 0 || tr.Hops[1].Loss != 1 {
		t.Errorf("silent hop %+v", tr.Hops[1])
	}
	if r := tr.Hops[2].Responders[0]; r.Recv != 20 || r.ASN != 4134 {
		t.Errorf("hop 3 responder %+v, want recv 20 (50·0.4), asn 4134", r)
	}
}

func TestReadTraceOwnRoundTrip(t *testing.T) {
	hops, reached := BuildHops(cycles(20, always("10.77.0.2"), everyOther("10.77.1.2"), always("10.77.2.2")))
	orig := Trace{Schema: TraceSchema, Target: "lab", Addr: "10.77.2.2", Protocol: "udp", Port: 33434,
		Reached: reached, Source: "live", Hops: hops}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(orig); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTrace(&buf, "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "replay" || len(got.Hops) != 3 || got.Hops[1].Loss != 0.5 ||
		!slices.Equal(got.Hops[1].Flags, []string{FlagRateLimited}) || got.Port != 33434 {
		t.Errorf("round trip: %+v", got)
	}
}

func TestReadTraceErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json names the line", "{\n\"schema\": x}", "f.json: not a JSON trace: line 2"},
		{"wrong schema", `{"schema":"linecheck.ping/v1"}`, `f.json: schema "linecheck.ping/v1"`},
		{"no format claims it", `{"a":1}`, "none of a linecheck.trace/v1 document"},
		{"ttl not ascending", `{"schema":"linecheck.trace/v1","hops":[{"ttl":2},{"ttl":2}]}`, "hops[1].ttl"},
		{"loss above 1", `{"schema":"linecheck.trace/v1","hops":[{"ttl":1,"loss":1.5}]}`, "hops[0].loss"},
		{"mtr loss over 100", `{"report":{"mtr":{"dst":"a"},"hubs":[{"count":1,"host":"a","Loss%":101}]}}`, "hubs[0].Loss%"},
		{"mtr count not a number", `{"report":{"mtr":{"dst":"a"},"hubs":[{"count":"x"}]}}`, "not a number"},
		{"mtr without dst", `{"report":{"mtr":{},"hubs":[]}}`, "dst is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in), "f.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzReadTrace(f *testing.F) {
	for _, p := range []string{"testdata/mtr-loopback.json", "testdata/mtr-loopback6-wide.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema":"linecheck.trace/v1","hops":[{"ttl":1,"responders":[{"addr":"a","recv":1}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ReadTrace(bytes.NewReader(b), "fuzz.json")
		if err == nil && tr == nil {
			t.Fatal("nil trace without an error")
		}
	})
}

func nearMTR(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// mtr's JSON has no samples: percentiles and pdv_p95 are never known, and
// jitter only when mtr wrote its jitter columns (the -wide file has Javg and
// Jint, the plain one has not). Other sources keep every figure.
func TestKnownFiguresOfMTRJSON(t *testing.T) {
	plain, err := ReadTraceFile("testdata/mtr-loopback.json")
	if err != nil {
		t.Fatal(err)
	}
	wide, err := ReadTraceFile("testdata/mtr-loopback6-wide.json")
	if err != nil {
		t.Fatal(err)
	}
	own := &Trace{Source: "replay"}
	live := &Trace{Source: "live"}
	all := Known{Percentiles: true, RFC3550: true, MeanAbs: true, PDVP95: true}
	tests := []struct {
		name string
		tr   *Trace
		r    Responder
		want Known
	}{
		{"mtr without jitter columns: nothing beyond min/avg/max/stdev", plain, plain.Hops[0].Responders[0], Known{}},
		{"mtr with Javg and Jint: rfc3550 and mean_abs", wide, wide.Hops[0].Responders[0], Known{RFC3550: true, MeanAbs: true}},
		{"linecheck replay: all, even a zero jitter", own, Responder{Recv: 3}, all},
		{"live: all", live, Responder{Recv: 1}, all},
		{"mtr-json responder with samples (edited file): all", plain, Responder{Recv: 2, Samples: []float64{1, 2}}, all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KnownFigures(tc.tr, tc.r); got != tc.want {
				t.Errorf("KnownFigures = %+v, want %+v", got, tc.want)
			}
		})
	}
}
