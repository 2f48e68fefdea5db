package ingest

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/billing"
)

func TestPrometheusBitsPerSecondAtIntervalEnd(t *testing.T) {
	// Real query_range of rate(ifHCOutOctets[5m])*8, step 300: the value at t
	// is the bit rate over [t−300, t).
	s := mustReadFile(t, testdata("prometheus_query_range_rate_ifHCOutOctets.json"), ReadOptions{})[0]
	if s.Name != "Gi0/0/1" || s.Step != 300 || s.Format != "prometheus" {
		t.Errorf("name %q step %d format %s", s.Name, s.Step, s.Format)
	}
	wantSlots(t, s, []billing.Slot{
		slot(1767225600, 42301138.74666667/8*300, 0),
		slot(1767225900, 45677431.120000005/8*300, 0),
		slot(1767226200, 44152566.080000006/8*300, 0),
		slot(1767226500, 45939757.25333334/8*300, 0),
	})
	if s.Slots[0].In != 1586292703 { // hand: 42301138.74666667 / 8 · 300
		t.Errorf("first slot %v bytes", s.Slots[0].In)
	}
	if !hasWarning(s, "no direction label") {
		t.Errorf("no direction warning: %q", s.Warnings)
	}
}

func TestPrometheusDirectionLabelPairsInAndOut(t *testing.T) {
	doc := `{"status":"success","data":{"resultType":"matrix","result":[
{"metric":{"ifName":"xe-0","direction":"out"},"values":[[900,"800"],[1200,"1600"]]},
{"metric":{"ifName":"xe-0","direction":"in"},"values":[[900,"80"],[1500,"NaN"]]},
{"metric":{"instance":"a","job":"snmp"},"values":[[900.4,"8"]]}]}}`
	ss := mustRead(t, "p.json", doc, ReadOptions{})
	if len(ss) != 2 {
		t.Fatalf("%d series", len(ss))
	}
	// 1200 has only out, 1500 is NaN: both gaps.
	wantSlots(t, ss[0], []billing.Slot{slot(600, 80.0/8*300, 800.0/8*300)})
	if ss[0].Name != "xe-0" || ss[1].Name != `{instance="a", job="snmp"}` {
		t.Errorf("names %q %q", ss[0].Name, ss[1].Name)
	}
	wantSlots(t, ss[1], []billing.Slot{slot(600, 8.0/8*300, 0)})
}

func TestPrometheusBadInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"status":"error","errorType":"bad_data","error":"parse error"}`, "p.json:1: status: the query failed: error parse error"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[\n{\"metric\":{},\"value\":[1,\"2\"]}]}}", "p.json:2: result[0].value: an instant query result (vector): save a query_range response (a matrix)"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[\n[300,\"1\"],\n[600,\"-1\"]]}]}}", "p.json:3: result[0].values[1]: value \"-1\" is negative"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[\n[300,\"1\"],\n[600,\"+Inf\"]]}]}}", "p.json:3: result[0].values[1]: value \"+Inf\" is not a finite number"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[\n[600,\"1\"],\n[300,\"1\"]]}]}}", "p.json:3: values: timestamp 1970-01-01T00:05:00Z is out of order: line 2 has the later 1970-01-01T00:10:00Z"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[\n[300,\"1\"],\n[600]]}]}}", "p.json:3: result[0].values[1]: want [time, \"value\"], got 1 elements"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", "p.json:1: result: no series in the response"},
	} {
		_, err := readStr("p.json", tc.in, ReadOptions{Format: "prometheus"})
		wantReadErr(t, err, tc.want)
	}
}

func TestPrometheusColumnsNameTheDirectionOfUnlabelledResults(t *testing.T) {
	s := mustReadFile(t, testdata("prometheus_query_range_rate_ifHCOutOctets.json"), ReadOptions{Columns: []string{"out"}})[0]
	if sl := s.Slots[0]; sl.In != 0 || sl.Out != 1586292703 || len(s.Warnings) != 0 {
		t.Errorf("slot %+v, warnings %q", sl, s.Warnings)
	}
	if _, err := ReadFile(testdata("prometheus_query_range_rate_ifHCOutOctets.json"), ReadOptions{Columns: []string{"sideways"}}); err == nil {
		t.Error("--columns sideways accepted")
	}
}

func TestPrometheusStepIsTheQueryStep(t *testing.T) {
	// The second result has a gap between its only two points: still 300 s data.
	doc := `{"status":"success","data":{"resultType":"matrix","result":[
{"metric":{"ifName":"a"},"values":[[900,"8"],[1200,"8"],[1500,"8"]]},
{"metric":{"ifName":"b"},"values":[[900,"8"],[1500,"8"]]}]}}`
	ss := mustRead(t, "p.json", doc, ReadOptions{})
	if ss[1].Step != 300 {
		t.Fatalf("step %d", ss[1].Step)
	}
	wantSlots(t, ss[1], []billing.Slot{slot(600, 300, 0), slot(1200, 300, 0)})
	_, err := readStr("p.json", strings.Replace(doc, "[1500,\"8\"]]}]", "[1550,\"8\"]]}]", 1), ReadOptions{})
	wantReadErr(t, err, "p.json:3: values: mixed steps: 650 s after line 3, not a multiple of the 300 s step")
}
