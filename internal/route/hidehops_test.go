package route

import (
	"reflect"
	"testing"
)

func TestHopMaskTextReplacesWholeWordsOnly(t *testing.T) {
	tr := &Trace{Target: "192.0.2.9", Addr: "192.0.2.9", Hops: []Hop{
		{TTL: 1, Responders: []Responder{{Addr: "10.0.0.1", ASN: 64500, ASName: "HOME-NET", Carrier: "Home Net"}}},
		{TTL: 2, Responders: []Responder{{Addr: "10.0.0.2", ASN: 4134, Carrier: "ChinaNet"}}},
		{TTL: 3, Responders: []Responder{{Addr: "202.97.1.1", ASN: 4134, Carrier: "ChinaNet"}}},
	}}
	m := NewHopMask(2, tr)
	for in, want := range map[string]string{
		// AS4134 and ChinaNet are also hop 3's: no secret.
		"TTL 1-2 Home Net (AS64500) then ChinaNet (AS4134)": "TTL 1-2 hidden (hidden) then ChinaNet (AS4134)",
		"10.0.0.1, 10.0.0.2; 110.0.0.1 10.0.0.10 AS645001":  "hidden, hidden; 110.0.0.1 10.0.0.10 AS645001",
		"HOME-NETWORK HOME-NET.":                            "HOME-NETWORK HOME-NET.",
		"HOME-NET, Home Networks":                           "hidden, Home Networks",
	} {
		if got := m.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHopMaskTraceKeepsFiguresAndTheOriginal(t *testing.T) {
	tr := &Trace{LineClass: "chinanet-163", ASPath: []ASHop{{TTL: 1, ASN: 64500}, {TTL: 2, ASN: 4134}},
		LineEvidence: &LineEvidence{Rule: "r", Hops: []EvidenceHop{{TTL: 2, Addr: "10.0.0.2"}, {TTL: 3, Addr: "202.97.1.1"}}},
		MTU:          &PathMTU{Drops: []MTUDrop{{TTL: 2, MTU: 1400, ReportedBy: "10.0.0.2"}}},
		Hops: []Hop{
			{TTL: 1, Sent: 5, Loss: 0.2, Responders: []Responder{{Addr: "10.0.0.1", Recv: 4, ASN: 64500, Country: "ZZ"}}},
			{TTL: 2, Sent: 5, Responders: []Responder{{Addr: "10.0.0.2", Recv: 5, ASN: 4134, Carrier: "ChinaNet"}}},
			{TTL: 3, Sent: 5, Responders: []Responder{{Addr: "202.97.1.1", Recv: 5, ASN: 4134, Carrier: "ChinaNet"}}},
		}}
	m := NewHopMask(2, tr)
	got := m.Trace(tr)
	if got.HiddenHops != 2 || got.LineClass != "chinanet-163" || tr.HiddenHops != 0 || tr.Hops[0].Responders[0].Addr != "10.0.0.1" {
		t.Fatalf("masked %+v; the original must stay as it was: %+v", got, tr)
	}
	if r := got.Hops[0].Responders[0]; !reflect.DeepEqual(r, Responder{Addr: Hidden, Recv: 4}) || got.Hops[0].Loss != 0.2 {
		t.Errorf("TTL 1 masked as %+v", r)
	}
	// ChinaNet begins at TTL 2 (hidden): in the masked path it begins at 3.
	if want := []ASHop{{TTL: 3, ASN: 4134, Name: "ChinaNet"}}; !reflect.DeepEqual(got.ASPath, want) {
		t.Errorf("AS path %+v, want %+v", got.ASPath, want)
	}
	if h := got.LineEvidence.Hops; len(h) != 1 || h[0].TTL != 3 || len(tr.LineEvidence.Hops) != 2 {
		t.Errorf("evidence hops %+v", h)
	}
	if d := got.MTU.Drops[0]; d.ReportedBy != Hidden || tr.MTU.Drops[0].ReportedBy != "10.0.0.2" {
		t.Errorf("MTU drop %+v", d)
	}
	if off := NewHopMask(0, tr); off.Trace(tr) != tr || off.Active() {
		t.Error("--hide-hops 0 must leave the trace as it is")
	}
}
