package route

import (
	"os"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/stats"
)

func TestBundledTargetsAreCompleteAndUnique(t *testing.T) {
	ts := BundledTargets()
	seen := map[string]bool{}
	per := map[string]map[string]bool{}
	for _, x := range ts {
		if seen[x.Addr] {
			t.Errorf("address %s twice", x.Addr)
		}
		seen[x.Addr] = true
		if per[x.Carrier] == nil {
			per[x.Carrier] = map[string]bool{}
		}
		per[x.Carrier][x.City] = true
		if _, ok := geo.City(x.City); !ok {
			t.Errorf("%s: city %q not in the city table", x.Name, x.City)
		}
	}
	for _, c := range []string{CarrierTelecom, CarrierUnicom, CarrierMobile} {
		for _, city := range []string{"Beijing", "Shanghai", "Guangzhou"} {
			if !per[c][city] {
				t.Errorf("no %s target in %s", c, city)
			}
		}
	}
}

func TestParseTargetsErrorsNameLineAndField(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"targets:\n  - {name: a, carrier: telecom, city: X, addr: 1.2.3.4}\n  - {name: a, carrier: telecom, city: X, addr: 1.2.3.5}\n", "t.yaml:3: target \"a\": name used twice (first at line 2)"},
		{"targets:\n  - {name: a, carrier: cmcc, city: X, addr: 1.2.3.4}\n", "t.yaml:2: target \"a\": carrier \"cmcc\""},
		{"targets:\n  - {name: a, carrier: mobile, addr: 1.2.3.4}\n", "no city"},
		{"targets:\n  - {carrier: mobile, city: X, addr: 1.2.3.4}\n", "t.yaml:2: target without a name"},
		{"targets:\n  - {name: a, carrier: mobile, city: X, addr: 1.2.3.4/24}\n", "not an IP address"},
		{"targets: []\n", "no targets"},
		{"targets:\n  - {name: a, carrier: mobile, city: X, addr: 1.2.3.4}\n  - {name: b, carrier: mobile, city: X, addr: 1.2.3.4}\n", `t.yaml:3: target "b": addr 1.2.3.4 already used by target "a"`},
		{"target: []\n", "t.yaml"},
	} {
		_, err := ParseTargets("t.yaml", []byte(c.text), false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.text, err, c.want)
		}
	}
	ts, err := ParseTargets("t.yaml", []byte("targets:\n  - {name: v6, carrier: other, city: Tokyo, addr: '2001:DB8::1'}\n"), false)
	if err != nil || ts[0].Addr != "2001:db8::1" {
		t.Errorf("%+v %v", ts, err)
	}
}

func TestBacktraceResultFromTrace(t *testing.T) {
	tr := mkTrace("101.85.1.1", true, "10.0.0.1", "59.43.246.1", "59.43.187.9", "59.43.130.22", "61.152.24.1", "101.85.1.1")
	tr.Hops[5].Loss = 0.25
	tr.Hops[5].Responders[0].RTT = stats.RTTStats{Min: 130, Avg: 131, P50: 131, P95: 135, Max: 136}
	Annotate(tr, testDB)
	r := NewBacktraceResult(BacktraceTarget{Name: "sh", Carrier: CarrierTelecom, City: "Shanghai", Addr: "101.85.1.1"}, tr, "")
	if r.LineClass != LineCN2GIA || !r.Reached || r.Loss == nil || *r.Loss != 0.25 || *r.RTT.P95 != 135 {
		t.Fatalf("%+v", r)
	}
	if got := r.EvidencePhrase(); got != "CN2 ×3, lands on ChinaNet" {
		t.Errorf("phrase %q", got)
	}
	noDB := mkTrace("101.85.1.1", true, "10.0.0.1", "59.43.246.1", "59.43.187.9", "61.152.24.1", "101.85.1.1")
	Annotate(noDB, nil)
	r = NewBacktraceResult(BacktraceTarget{Name: "sh", Carrier: CarrierTelecom, City: "Shanghai", Addr: "101.85.1.1"}, noDB, "")
	if got := r.EvidencePhrase(); got != "CN2 ×2, ends at the telecom target in Shanghai (its network not mapped)" {
		t.Errorf("phrase without an ASN file %q", got)
	}
	un := mkTrace("101.85.1.1", false, "10.0.0.1", "59.43.246.1", "*", "*")
	Annotate(un, nil)
	r = NewBacktraceResult(BacktraceTarget{Name: "x", Carrier: CarrierTelecom, City: "Shanghai", Addr: "101.85.1.1"}, un, "")
	if r.Reached || r.Loss != nil || r.RTT.P50 != nil {
		t.Errorf("unreached target has figures: %+v", r)
	}
	r = NewBacktraceResult(BacktraceTarget{Name: "y", Carrier: CarrierMobile, City: "Beijing", Addr: "1.2.3.4"}, nil, "no route")
	if r.Trace != nil || r.LineClass != LineUnknown || !strings.Contains(r.Rule, "no route") {
		t.Errorf("%+v", r)
	}
}

func TestMatchUserSameCarrierNearestCity(t *testing.T) {
	d := &BacktraceDoc{Results: []BacktraceResult{
		{Name: "bj-ct", Carrier: CarrierTelecom, City: "Beijing"},
		{Name: "gz-ct", Carrier: CarrierTelecom, City: "Guangzhou"},
		{Name: "sh-cu", Carrier: CarrierUnicom, City: "Shanghai"},
	}}
	for _, c := range []struct{ carrier, city, want string }{
		{CarrierTelecom, "Shenzhen", "gz-ct"}, // 105 km from Guangzhou, 1,940 from Beijing
		{CarrierTelecom, "Tianjin", "bj-ct"},
		{CarrierTelecom, "beijing", "bj-ct"},
		{CarrierUnicom, "Chengdu", "sh-cu"}, // the only Unicom result
	} {
		r, ok := d.MatchUser(c.carrier, c.city)
		if !ok || r.Name != c.want {
			t.Errorf("%s %s: got %q (%v), want %q", c.carrier, c.city, r.Name, ok, c.want)
		}
	}
	if _, ok := d.MatchUser(CarrierMobile, "Beijing"); ok {
		t.Error("matched a Mobile user without a Mobile result")
	}
}

// Every bundled row names a public source, never the team's own notes.
func TestBundledTableRowsNamePublicSources(t *testing.T) {
	for _, e := range bundledTable() {
		ref := e.carrier.Ref
		if strings.TrimSpace(ref) == "" {
			t.Errorf("%s: no source", e.prefix)
		}
		for _, bad := range []string{"LC §", "line-classes", "/work", "shared/", "issue 4"} {
			if strings.Contains(ref, bad) {
				t.Errorf("%s: source %q points at %q, not at a public source", e.prefix, ref, bad)
			}
		}
	}
}

func TestReadReturnFileTellsBacktraceFromTrace(t *testing.T) {
	dir := t.TempDir()
	bt := dir + "/bt.json"
	os.WriteFile(bt, []byte(`{"schema":"linecheck.backtrace/v1","vantage":"v","results":[{"name":"a","carrier":"telecom","city":"Shanghai","addr":"192.0.2.1","reached":false,"line_class":"unknown","confidence":"low","rule":"r","rtt_ms":{},"loss":null,"trace":null}]}`), 0o644)
	tr, doc, err := ReadReturnFile(bt)
	if err != nil || tr != nil || doc == nil || doc.Results[0].Name != "a" {
		t.Fatalf("%v %v %v", tr, doc, err)
	}
	tr, doc, err = ReadReturnFile("testdata/mtr-loopback.json")
	if err != nil || tr == nil || doc != nil {
		t.Fatalf("%v %v %v", tr, doc, err)
	}
	if _, err := ReadTraceFile(bt); err == nil || !strings.Contains(err.Error(), "recorded.return") {
		t.Errorf("a backtrace given as a trace: %v", err)
	}
}
