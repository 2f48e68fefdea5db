package promclient

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestToBillingConvertsBitRatesToSlotBytesEndingAtT(t *testing.T) {
	// 8 Mbit/s over 300 s = 300 MB; the value at 1200 covers (900, 1200].
	in := []Series{{Labels: map[string]string{"ifName": "xe-0/0/1"}, Samples: []Sample{{1200, 8e6}, {1500, 0}, {1800, 16}}}}
	out := []Series{{Labels: map[string]string{"ifName": "xe-0/0/1"}, Samples: []Sample{{1200, 4e6}, {1500, 800}}}}
	got, err := ToBilling(in, out, "http://p")
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

func TestToBillingPairsByLabelsAndNamesByWhatDiffers(t *testing.T) {
	mk := func(name string, l ...string) Series {
		m := map[string]string{"__name__": name}
		for i := 0; i < len(l); i += 2 {
			m[l[i]] = l[i+1]
		}
		return Series{Labels: m, Samples: []Sample{{600, 8}}}
	}
	for _, tc := range []struct {
		name    string
		in, out []Series
		want    []string
		wantErr string
	}{
		{"ifName unique", []Series{mk("ifHCInOctets", "ifName", "b", "instance", "r1"), mk("ifHCInOctets", "ifName", "a", "instance", "r1")},
			[]Series{mk("ifHCOutOctets", "ifName", "a", "instance", "r1"), mk("ifHCOutOctets", "ifName", "b", "instance", "r1")},
			[]string{"a", "b"}, ""},
		{"ifName repeated across routers", []Series{mk("", "ifName", "a", "instance", "r1", "job", "snmp"), mk("", "ifName", "a", "instance", "r2", "job", "snmp")},
			[]Series{mk("", "ifName", "a", "instance", "r2", "job", "snmp"), mk("", "ifName", "a", "instance", "r1", "job", "snmp")},
			[]string{`instance="r1"`, `instance="r2"`}, ""},
		{"one each pairs whatever the labels", []Series{mk("", "direction", "rx")}, []Series{mk("", "direction", "tx")},
			[]string{`{direction="rx"}`}, ""},
		{"unmatched out", []Series{mk("", "ifName", "a"), mk("", "ifName", "b")}, []Series{mk("", "ifName", "a"), mk("", "ifName", "c")},
			nil, `series {ifName="c"} has no --query-in series`},
		{"nothing at all", nil, nil, nil, "both queries returned no series"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ToBilling(tc.in, tc.out, "u")
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

func TestFetchBillingQueriesTheSlotEnds(t *testing.T) {
	f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{
		"IN":  {{map[string]string{"ifName": "x"}, func(t int64) string { return "8" }}},
		"OUT": {{map[string]string{"ifName": "x"}, func(t int64) string { return "16" }}},
	}}
	_, cfg := newFake(t, f)
	c, _ := New(cfg)
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	got, err := c.FetchBilling(context.Background(), "IN", "OUT", from, to)
	if err != nil {
		t.Fatal(err)
	}
	s := got[0].Slots
	if len(s) != 288 || s[0].Start != from.Unix() || s[287].Start != to.Unix()-300 || s[0].In != 300 || s[0].Out != 600 {
		t.Fatalf("%d slots, first %+v last %+v", len(s), s[0], s[len(s)-1])
	}
	if f.requests[0].start != from.Unix()+300 || f.requests[0].end != to.Unix() || f.requests[0].step != 300 {
		t.Errorf("request %+v", f.requests[0])
	}
	if _, err := c.FetchBilling(context.Background(), "IN", "OUT", from.Add(time.Minute), to); err == nil {
		t.Error("a period off the 5-minute grid was accepted")
	}
}

func TestSourceLeavesCredentialsOut(t *testing.T) {
	c, err := New(Config{URL: "https://bill:secret@prom.example.net:9090/prefix"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Source(); got != "https://prom.example.net:9090/prefix" {
		t.Errorf("source %q", got)
	}
}
