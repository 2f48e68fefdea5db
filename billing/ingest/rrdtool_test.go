package ingest

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/billing"
)

func TestRRDXMLRowsWithoutTimeAreStartPlusIStepAndMarkTheEnd(t *testing.T) {
	// Real xport (no --showtime): start 1767225900, step 300, legend "in bps",
	// "out bps" (bits): the first row covers [1767225600, 1767225900).
	s := mustReadFile(t, testdata("rrdtool_xport_default.xml"), ReadOptions{})[0]
	if s.Step != 300 || s.Format != "rrdtool-xml" {
		t.Errorf("step %d format %s", s.Step, s.Format)
	}
	in := []float64{5.5100301413e+07, 5.2480715707e+07, 5.8412738853e+07, 6.3752565653e+07, 5.6226460507e+07, 5.5588258453e+07}
	out := []float64{2.8465367520e+07, 2.9035746053e+07, 3.0900723467e+07, 2.8931972720e+07, 2.8914094160e+07, 3.0360736933e+07}
	var want []billing.Slot
	for i := range in {
		want = append(want, slot(1767225600+300*int64(i), in[i]/8*300, out[i]/8*300))
	}
	wantSlots(t, s, want)
	if s.Slots[0].In != 2066261302.9875002 { // hand: 5.5100301413e7 / 8 · 300
		t.Errorf("first in = %v", s.Slots[0].In)
	}
	if !hasWarning(s, `legend "in bps" says bits`) {
		t.Errorf("no unit note: %q", s.Warnings)
	}
	// --units bytes overrides the legend.
	b := mustReadFile(t, testdata("rrdtool_xport_default.xml"), ReadOptions{Units: "bytes"})[0]
	if !near(b.Slots[0].In, 5.5100301413e+07*300) {
		t.Errorf("units bytes: first in = %v", b.Slots[0].In)
	}
}

func TestRRDShowtimeNaNAndNullAreGaps(t *testing.T) {
	// The same gap exported as XML (20 rows, 13 NaN) and JSON (8 rows, 6 null).
	x := mustReadFile(t, testdata("rrdtool_xport_showtime_gap.xml"), ReadOptions{})[0]
	wantSlots(t, x, []billing.Slot{
		slot(1768725000, 1.0897185610e+07*300, 0),
		slot(1768725300, 8.2538812173e+07*300, 0),
		slot(1768729500, 1.0257987687e+07*300, 0),
		slot(1768729800, 9.7734474767e+06*300, 0),
		slot(1768730100, 8.8773343567e+06*300, 0),
		slot(1768730400, 9.4930555700e+06*300, 0),
		slot(1768730700, 9.0028058233e+06*300, 0),
	})
	if !hasWarning(x, "only one column") {
		t.Errorf("no one-column warning: %q", x.Warnings)
	}
	j := mustReadFile(t, testdata("rrdtool_xport_showtime_gap.json"), ReadOptions{})[0]
	wantSlots(t, j, x.Slots[:2])
}

func TestRRDColumnsByLegendName(t *testing.T) {
	doc := func(legend ...string) string {
		var b strings.Builder
		b.WriteString("<xport><meta><start>600</start><step>300</step><legend>")
		for _, l := range legend {
			b.WriteString("<entry>" + l + "</entry>")
		}
		b.WriteString("</legend></meta><data><row><v>1</v><v>2</v><v>3</v></row></data></xport>")
		return b.String()
	}
	for _, tc := range []struct {
		legend  []string
		columns []string
		in, out float64
	}{
		{[]string{"total", "out", "in"}, nil, 3, 2},                     // by name
		{[]string{"a", "b", "c"}, nil, 1, 2},                            // first = in, second = out
		{[]string{"a", "b", "c"}, []string{"c", "a"}, 3, 1},             // --columns
		{[]string{"rx Bps", "x", "tx Bps"}, nil, 1, 3},                  // rx/tx words
		{[]string{"in", "out", "c"}, []string{"IN", "c"}, 1, 3},         // case-insensitive
		{[]string{"in (bps)", "out (bps)", "c"}, nil, 1.0 / 8, 2.0 / 8}, // bits
	} {
		s := mustRead(t, "x.xml", doc(tc.legend...), ReadOptions{Columns: tc.columns})[0]
		if got := s.Slots[0]; got.Start != 300 || got.In != tc.in*300 || got.Out != tc.out*300 {
			t.Errorf("legend %v columns %v: slot %+v, want in %v out %v per s", tc.legend, tc.columns, got, tc.in, tc.out)
		}
	}
	_, err := readStr("x.xml", doc("a", "b", "c"), ReadOptions{Columns: []string{"in", "out"}})
	wantReadErr(t, err, `x.xml:1: legend: no column named "in" (legend: a, b, c)`)
}

func TestRRDBadInput(t *testing.T) {
	x := "<xport>\n<meta><start>600</start><step>300</step>\n<legend><entry>in</entry><entry>out</entry></legend></meta>\n<data>\n"
	for _, tc := range []struct{ in, want string }{
		{x + "<row><v>1</v><v>-2</v></row>\n</data></xport>", "x.xml:5: v[1]: \"-2\" is negative"},
		{x + "<row><v>1</v><v>abc</v></row>\n</data></xport>", "x.xml:5: v[1]: \"abc\" is not a number"},
		{x + "<row><v>1</v></row>\n</data></xport>", "x.xml:5: v: 1 values, the legend has 2 columns"},
		{x + "<row><t>900</t><v>1</v><v>1</v></row>\n<row><t>900</t><v>1</v><v>1</v></row>\n</data></xport>", "x.xml:6: t: duplicate timestamp 1970-01-01T00:15:00Z (line 5 has the same)"},
		{x + "<row><t>900</t><v>1</v><v>1</v></row>\n<row><t>1000</t><v>1</v><v>1</v></row>\n</data></xport>", "x.xml:6: t: mixed steps: 100 s after line 5, not a multiple of the 300 s step"},
		{x + "<row><v>1</v><v>1</v></row>\n</data>", "x.xml:6: invalid XML: unexpected EOF"},
		{"<foo/>", "x.xml:1: foo: root element is <foo>, want <xport>"},
	} {
		_, err := readStr("x.xml", tc.in, ReadOptions{Format: "rrdtool-xml"})
		wantReadErr(t, err, tc.want)
	}
	j := "{\"meta\": {\"start\": 600, \"step\": 300,\n \"legend\": [\"in\", \"out\"]},\n\"data\": [\n"
	for _, tc := range []struct{ in, want string }{
		{j + "[1, 2],\n[1, -2]\n]}", "x.json:5: data[1][1]: \"-2\" is negative"},
		{j + "[1, 2],\n[1, \"x\"]\n]}", "x.json:5: data[1][1]: \"x\" is not a number"},
		{j + "[\"900\", 1, 2],\n[\"600\", 1, 2]\n]}", "x.json:5: t: timestamp 1970-01-01T00:10:00Z is out of order: line 4 has the later 1970-01-01T00:15:00Z"},
		{j + "[1, 2],\n[1, 2\n]}", "x.json:6: data: invalid JSON: invalid character '}' after array element"},
		{j + "[1, 2],\n", "x.json:5: data[1]: unexpected end of JSON"},
	} {
		_, err := readStr("x.json", tc.in, ReadOptions{Format: "rrdtool-json"})
		wantReadErr(t, err, tc.want)
	}
}
