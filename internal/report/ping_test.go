package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// A target with nothing sent (a sweep interrupted before its first probe
// ended) has no loss: null in JSON, "-" in the table, not 0 %. One whose
// probes all went unanswered has a real 100 %.
func TestPingLossWithoutProbesIsAbsent(t *testing.T) {
	results := []probe.PingResult{{Target: "127.0.0.1", Addr: "127.0.0.1"}, {Target: "127.0.0.2", Addr: "127.0.0.2", Sent: 3}}
	doc := NewPingDoc(PingSweep{Results: results, Spans: []PingSpan{{Prefix: "127.0.0.0/31", First: 0, Last: 0}},
		Protocol: "icmp", Count: 3, Interval: time.Second, Timeout: time.Second})
	if doc.Results[0].Loss != nil || doc.Prefixes[0].Loss != nil {
		t.Fatalf("no probes sent: loss %v, prefix %v", doc.Results[0].Loss, doc.Prefixes[0].Loss)
	}
	if l := doc.Results[1].Loss; l == nil || *l != 1 {
		t.Fatalf("all lost: %v", l)
	}
	b, _ := json.Marshal(doc.Results[0])
	if !strings.Contains(string(b), `"loss":null`) {
		t.Errorf("json %s", b)
	}
	var out bytes.Buffer
	if err := Render(&out, PingReport{Doc: doc}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	loss := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.HasPrefix(f[0], "127.0.0.") {
			loss[f[0]] = f[3]
		}
	}
	if loss["127.0.0.1"] != "-" || loss["127.0.0.2"] != "100.0%" {
		t.Errorf("loss column %v, want - and 100.0%%:\n%s", loss, out.String())
	}
}
