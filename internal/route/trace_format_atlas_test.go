package route

import (
	"slices"
	"strings"
	"testing"
)

// The Atlas files read as the oracle reads them; the figures below are
// counted by hand from testdata/vantage/atlas-three-probes.json.
func TestReadAtlas(t *testing.T) {
	ts := checkAgainstOracle(t, "testdata/vantage/atlas-three-probes.json")
	a := ts[0]
	if a.Source != "ripe-atlas" || a.Target != "130.94.10.1" || a.Protocol != "icmp" || !a.Reached || a.Foreign != 1 {
		t.Errorf("probe 1001: %+v", a)
	}
	v := a.Vantage
	if v.Platform != "ripe-atlas" || v.ID != "1001" || v.Measurement != "90000001" || v.Addr != "101.80.12.34" || v.PublicAddr != "" || v.Time != "2025-12-06T05:46:40Z" {
		t.Errorf("probe 1001 vantage %+v", v)
	}
	// hop 2: x, a reply, a duplicate, a reply: 3 sent, 2 received.
	if h := a.Hops[1]; h.Sent != 3 || h.Duplicates != 1 || math3(h.Loss) != 0.333 {
		t.Errorf("hop 2 %+v", h)
	}
	// hop 4: two stars and a reply quoting 130.94.200.200: foreign, lost.
	if h := a.Hops[3]; h.Sent != 3 || h.Loss != 1 || len(h.Responders) != 0 {
		t.Errorf("hop 4 %+v", h)
	}
	// hop 5: a late reply (not a probe), a star, a reply, a star.
	if h := a.Hops[4]; h.Sent != 3 || h.Late != 1 || math3(h.Loss) != 0.667 || h.Responders[0].Recv != 1 {
		t.Errorf("hop 5 %+v", h)
	}
	if h := a.Hops[5]; !slices.Contains(h.Flags, FlagDestination) {
		t.Errorf("hop 6 flags %v", h.Flags)
	}
	b := ts[1]
	if b.Protocol != "udp" || !b.Reached || b.Hops[len(b.Hops)-1].TTL != 255 {
		t.Errorf("probe 1002: reached %v, last ttl %d", b.Reached, b.Hops[len(b.Hops)-1].TTL)
	}
	// An "err": "N" reply still answers its probe.
	if h := b.Hops[1]; h.Responders[0].Recv != 1 || h.Responders[0].RTT.Min != 5.125 {
		t.Errorf("probe 1002 hop 2 %+v", h)
	}
	if c := ts[2]; len(c.Hops) != 0 || c.Reached || !strings.HasPrefix(c.Vantage.Error, "name resolution failed") || c.Target != "target.invalid" {
		t.Errorf("probe 1003: %+v %+v", c, c.Vantage)
	}
	one := checkAgainstOracle(t, "testdata/vantage/atlas-one-v6.json")
	if len(one) != 1 || !one[0].Reached || one[0].Vantage.Addr != "240e:1:2::10" {
		t.Errorf("one IPv6 result: %+v", one[0])
	}
}

// The API's format=txt (one result per line) reads as the list does, and
// an error names the file's own line.
func TestReadAtlasJSONLines(t *testing.T) {
	lines := checkAgainstOracle(t, "testdata/vantage/atlas-three-probes.jsonl")
	list, err := ReadTracesFile("testdata/vantage/atlas-three-probes.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range list {
		if lines[i].Vantage.ID != list[i].Vantage.ID || len(lines[i].Hops) != len(list[i].Hops) || lines[i].Reached != list[i].Reached {
			t.Errorf("result %d: lines %+v, list %+v", i, lines[i].Vantage, list[i].Vantage)
		}
	}
	in := `{"type":"traceroute","prb_id":1,"result":[]}` + "\n" + `{"type":"traceroute","prb_id":2,"result":[{"hop":1,"result":[{"from":"101.80.1.2","rtt":"x"}]}]}` + "\n"
	_, err = ReadTraces(strings.NewReader(in), "f.jsonl")
	if err == nil || !strings.Contains(err.Error(), "f.jsonl: RIPE Atlas results: line 2: item 2:") {
		t.Errorf("error %v, want line 2, item 2", err)
	}
	if _, err := ReadTraces(strings.NewReader("{\"a\":1}\n{\"b\":\n"), "f.jsonl"); err == nil || !strings.Contains(err.Error(), "not a JSON trace") {
		t.Errorf("broken lines: %v", err)
	}
}

func math3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

// A malformed Atlas file is refused naming the file, the record (its index
// and probe) and the field.
func TestReadAtlasErrors(t *testing.T) {
	const ok = `"type":"traceroute","prb_id":7,"msm_id":1,"dst_addr":"130.94.10.1","src_addr":"101.80.1.1","proto":"ICMP"`
	tests := []struct{ name, in, want string }{
		{"rtt not a number", `[{` + ok + `,"result":[{"hop":1,"result":[{"from":"101.80.1.2","rtt":"fast"}]}]}]`, `f.json: RIPE Atlas results: line 1: item 1: result item 1: result item 1: field "rtt": want a number`},
		{"hop not above", `[{` + ok + `,"result":[{"hop":2,"result":[{"x":"*"}]},{"hop":2,"result":[{"x":"*"}]}]}]`, `f.json: RIPE Atlas result 0 (probe 7): result[1].hop: 2 is not a hop number above 2`},
		{"hop missing", `[{` + ok + `,"result":[{"result":[{"x":"*"}]}]}]`, `result 0 (probe 7): result[0].hop: missing`},
		{"bad from", `[{` + ok + `,"result":[{"hop":1,"result":[{"from":"router","rtt":1}]}]}]`, `result 0 (probe 7): result[0].result[0].from: "router" is not an IP address`},
		{"negative rtt", `[{` + ok + `,"result":[{"hop":1,"result":[{"from":"101.80.1.2","rtt":-1}]}]}]`, `result[0].result[0].rtt: -1 is not a time in ms`},
		{"empty reply", `[{` + ok + `,"result":[{"hop":1,"result":[{}]}]}]`, `result[0].result[0]: neither "x" nor "from"`},
		{"ping result", `[{"type":"ping","prb_id":9,"result":[]}]`, `RIPE Atlas result 0 (probe 9): type: "ping" is not a traceroute: give ping results as a candidate's recorded.probes`},
		{"second record", `[{` + ok + `,"result":[]},{"type":"traceroute","prb_id":8,"proto":"ICMP"}]`, `RIPE Atlas result 1 (probe 8): result: missing`},
		{"bad src", `{"type":"traceroute","prb_id":3,"src_addr":"x","result":[]}`, `result 0 (probe 3): src_addr: "x" is not an IP address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTraces(strings.NewReader(tc.in), "f.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
