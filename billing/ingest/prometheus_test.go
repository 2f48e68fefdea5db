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
	if ss[0].Name != "xe-0" || ss[1].Name != `instance="a",job="snmp"` {
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
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[\n[300,\"1\"],\n[600,\"1e308\"]]}]}}", "p.json:3: result[0].values[1]: value \"1e308\" bit/s is beyond any link (over 1e+15 bit/s): check the query (is it bit/s, from rate()*8?)"},
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

// Results as the live client hands them over: the direction comes from the
// query, not from a label.
func liveResults(dir string, sets ...map[string]string) []*PromResult {
	var out []*PromResult
	for _, l := range sets {
		out = append(out, &PromResult{Labels: l, Dir: dir, Points: []PromPoint{{T: 600, V: 8}}})
	}
	return out
}

func TestPromSeriesConvertsBitRatesToSlotBytesEndingAtT(t *testing.T) {
	// 8 Mbit/s over 300 s = 300 MB; the value at 1200 covers (900, 1200].
	l := map[string]string{"ifName": "xe-0/0/1"}
	res := []*PromResult{
		{Labels: l, Dir: "in", Points: []PromPoint{{T: 1200, V: 8e6}, {T: 1500, V: 0}, {T: 1800, V: 16}}},
		{Labels: l, Dir: "out", Points: []PromPoint{{T: 1200, V: 4e6}, {T: 1500, V: 800}}},
	}
	got, err := PromSeries(res, "http://p", ReadOptions{}, PromOptions{Step: 300, Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "xe-0/0/1" || got[0].Format != "prometheus" || got[0].Step != 300 {
		t.Fatalf("%+v", got)
	}
	s := got[0].Slots
	if len(s) != 2 || s[0].Start != 900 || s[0].In != 300e6 || s[0].Out != 150e6 ||
		s[1].Start != 1200 || s[1].In != 0 || s[1].Out != 30000 {
		t.Fatalf("slots %+v", s)
	}
	// 1800 has an inbound value only: a gap, and said so.
	if len(got[0].Warnings) != 1 || !strings.Contains(got[0].Warnings[0], "1 slots had a value in one direction only") {
		t.Errorf("warnings %q", got[0].Warnings)
	}
}

func TestPromSeriesPairsByLabelsAndNamesByWhatDiffers(t *testing.T) {
	m := func(name string, l ...string) map[string]string {
		m := map[string]string{"__name__": name}
		for i := 0; i < len(l); i += 2 {
			m[l[i]] = l[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		in, out []*PromResult
		want    []string
		wantErr string
	}{
		{"ifName unique", liveResults("in", m("ifHCInOctets", "ifName", "b", "instance", "r1"), m("ifHCInOctets", "ifName", "a", "instance", "r1")),
			liveResults("out", m("ifHCOutOctets", "ifName", "a", "instance", "r1"), m("ifHCOutOctets", "ifName", "b", "instance", "r1")),
			[]string{"a", "b"}, ""},
		{"ifName repeated across routers", liveResults("in", m("", "ifName", "a", "instance", "r1", "job", "snmp"), m("", "ifName", "a", "instance", "r2", "job", "snmp")),
			liveResults("out", m("", "ifName", "a", "instance", "r2", "job", "snmp"), m("", "ifName", "a", "instance", "r1", "job", "snmp")),
			[]string{`instance="r1"`, `instance="r2"`}, ""},
		{"one each pairs whatever the labels", liveResults("in", m("", "direction", "rx")), liveResults("out", m("", "direction", "tx")),
			[]string{`{direction="rx"}`}, ""},
		{"unmatched out", liveResults("in", m("", "ifName", "a"), m("", "ifName", "b")), liveResults("out", m("", "ifName", "a"), m("", "ifName", "c")),
			nil, `series {ifName="b"} has no --query-out series`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PromSeries(append(tc.in, tc.out...), "u", ReadOptions{}, PromOptions{Step: 300, Paired: true})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range got {
				names = append(names, s.Name)
				if len(s.Slots) != 1 || s.Slots[0].In != 300 || s.Slots[0].Out != 300 {
					t.Errorf("%s slots %+v", s.Name, s.Slots)
				}
			}
			if strings.Join(names, "|") != strings.Join(tc.want, "|") {
				t.Errorf("names %q, want %q", names, tc.want)
			}
		})
	}
}

// A label value is the server's text: a huge one becomes a series name
// quoted and cut to 40 bytes, as the file readers show their values (it was
// echoed whole: 200 MB to stderr), and it still names its series.
func TestPrometheusHugeLabelValueIsQuotedAndCut(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	res := []*PromResult{
		{Labels: map[string]string{"ifName": huge}, Dir: "in", Points: []PromPoint{{T: 600, V: 8}, {T: 900, V: 8}}},
		{Labels: map[string]string{"ifName": huge}, Dir: "out", Points: []PromPoint{{T: 600, V: 8}, {T: 900, V: 8}}},
	}
	ss, err := PromSeries(res, "prom", ReadOptions{}, PromOptions{Step: 300})
	if err != nil {
		t.Fatal(err)
	}
	want := `"` + strings.Repeat("x", 40) + `"…`
	if len(ss) != 1 || ss[0].Name != want {
		t.Errorf("series name of %d bytes %.60q, want %s", len(ss[0].Name), ss[0].Name, want)
	}
	// A short, printable ifName stays as it is.
	res[0].Labels, res[1].Labels = map[string]string{"ifName": "xe-0/0/1"}, map[string]string{"ifName": "xe-0/0/1"}
	if ss, err := PromSeries(res, "prom", ReadOptions{}, PromOptions{Step: 300}); err != nil || ss[0].Name != "xe-0/0/1" {
		t.Errorf("short name %v, %v", ss, err)
	}
}
