package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

const vantageFiles = "../../internal/route/testdata/vantage/"

// A Globalping measurement of two probes replays as two traces, each under
// its vantage's header (AS4134 in Shanghai, then AS4837 in Beijing, as the
// file's results[].probe say); JSON is the list, each with its vantage.
func TestTraceReplayOfAMultiVantageFile(t *testing.T) {
	out, code := prRun(t, "trace", "--replay", vantageFiles+"globalping-mtr-two.json", "--no-asn")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	first := strings.Index(out, "vantage: globalping result 1 AS4134")
	second := strings.Index(out, "vantage: globalping result 2 AS4837")
	if first < 0 || second < first || !strings.Contains(out[first:], "(Shanghai, CN)") || !strings.Contains(out[second:], "(Beijing, CN)") {
		t.Errorf("headers missing or out of order:\n%s", out)
	}
	if strings.Contains(out[first:second], "219.158.3.1") || !strings.Contains(out[second:], "219.158.3.1") {
		t.Errorf("the Beijing hop is not under the Beijing vantage:\n%s", out)
	}

	out, code = prRun(t, "trace", "--replay", vantageFiles+"globalping-mtr-two.json", "--format", "json")
	var ts []route.Trace
	if err := json.Unmarshal([]byte(out), &ts); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if len(ts) != 2 || ts[0].Vantage == nil || ts[0].Vantage.ASN != 4134 || ts[0].Vantage.UserCarrier != "telecom" ||
		ts[1].Vantage.City != "Beijing" || ts[1].Vantage.UserCarrier != "unicom" {
		t.Errorf("vantages %+v", ts)
	}
}

// --vantage picks one (by id, AS, carrier or city): the output is then one
// trace document, as for any recording; a selection that matches nothing
// is exit 2 naming the vantages there are.
func TestTraceReplayVantageSelects(t *testing.T) {
	for _, sel := range []string{"2", "AS4837", "unicom", "beijing"} {
		out, code := prRun(t, "trace", "--replay", vantageFiles+"globalping-mtr-two.json", "--vantage", sel, "--format", "json")
		var tr route.Trace
		if err := json.Unmarshal([]byte(out), &tr); code != 0 || err != nil {
			t.Fatalf("--vantage %s: exit %d, %v\n%s", sel, code, err, out)
		}
		if tr.Vantage == nil || tr.Vantage.City != "Beijing" || tr.Hops[1].Responders[0].Addr != "219.158.3.1" {
			t.Errorf("--vantage %s: %+v", sel, tr.Vantage)
		}
	}
	_, code := prRun(t, "trace", "--replay", vantageFiles+"atlas-three-probes.json", "--vantage", "mobile")
	if code != 2 {
		t.Errorf("--vantage matching none: exit %d, want 2", code)
	}
	_, code = prRun(t, "trace", "--vantage", "1", "127.0.0.1")
	if code != 2 {
		t.Errorf("--vantage without --replay: exit %d, want 2", code)
	}
	// One result: one trace, with its vantage in the JSON and the header.
	out, code := prRun(t, "trace", "--replay", vantageFiles+"atlas-one-v6.json")
	if code != 0 || !strings.Contains(out, "vantage: ripe-atlas probe 2001 240e:1:2::10") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// In CSV the vantages share one table of each kind, each row led by its
// vantage's id: the route table has one row per vantage with its class.
func TestTraceReplayMultiVantageCSV(t *testing.T) {
	out, code := prRun(t, "trace", "--replay", vantageFiles+"globalping-mtr-two.json", "--format", "csv", "--table", "route")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "vantage,target,") ||
		!strings.HasPrefix(rows[1], "1,") || !strings.Contains(rows[1], ",chinanet-163,") ||
		!strings.HasPrefix(rows[2], "2,") || !strings.Contains(rows[2], ",cu-4837,") {
		t.Errorf("route CSV:\n%s", out)
	}
}
