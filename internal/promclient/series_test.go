package promclient

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing/ingest"
)

func TestFetchBillingQueriesTheSlotEnds(t *testing.T) {
	f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{
		"IN":  {{map[string]string{"ifName": "x"}, func(t int64) string { return "8" }}},
		"OUT": {{map[string]string{"ifName": "x"}, func(t int64) string { return "16" }}},
	}}
	_, cfg := newFake(t, f)
	c, _ := New(cfg)
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	got, err := c.FetchBilling(context.Background(), "IN", "OUT", from, to, ingest.ReadOptions{})
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
	if _, err := c.FetchBilling(context.Background(), "IN", "OUT", from.Add(time.Minute), to, ingest.ReadOptions{}); err == nil {
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

// A value no link carries (1e308 bit/s: its bytes per slot overflow to
// +Inf), an infinity, and a negative rate are refused as bad data, naming
// the query; before, 1e308 reached the money code and panicked there.
func TestFetchBillingRefusesImpossibleValues(t *testing.T) {
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	for _, v := range []string{"1e308", "+Inf", "-8", "2e15"} {
		f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{
			"IN":  {{map[string]string{"ifName": "x"}, func(t int64) string { return "8" }}},
			"OUT": {{map[string]string{"ifName": "x"}, func(t int64) string { return v }}},
		}}
		_, cfg := newFake(t, f)
		c, _ := New(cfg)
		_, err := c.FetchBilling(context.Background(), "IN", "OUT", from, to, ingest.ReadOptions{})
		var ae *APIError
		if !errors.As(err, &ae) || ae.ErrorType != "bad_data" || !strings.Contains(err.Error(), "--query-out") ||
			!strings.Contains(err.Error(), strconv.Quote(v)) {
			t.Errorf("value %s: err %v, want bad_data naming --query-out and the value", v, err)
		}
	}
}

// --max-samples bounds what a fetch keeps and says so when the answer is
// larger: one hour is 12 points per direction, 24 in all.
func TestFetchBillingStopsAtMaxSamples(t *testing.T) {
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	one := func(t int64) string { return "8" }
	f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{
		"IN":  {{map[string]string{"ifName": "x"}, one}},
		"OUT": {{map[string]string{"ifName": "x"}, one}},
	}}
	_, cfg := newFake(t, f)
	for _, tc := range []struct {
		max int64
		ok  bool
	}{{24, true}, {23, false}} {
		cfg.MaxSamples = tc.max
		c, _ := New(cfg)
		_, err := c.FetchBilling(context.Background(), "IN", "OUT", from, to, ingest.ReadOptions{})
		if tc.ok != (err == nil) || err != nil && (!strings.Contains(err.Error(), "--max-samples 23") || !errors.Is(err, ingest.ErrTooLarge)) {
			t.Errorf("max %d: err %v", tc.max, err)
		}
	}
}

// ifInOctets is a 32-bit counter: rate() takes its wraps for resets. At
// 100 Mbit/s a day is 1.08e12 bytes: 251 wraps of 2^32 (hand: 1.08e12 /
// 4294967296 = 251.5).
func TestFetchBillingWarnsAbout32BitCounters(t *testing.T) {
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	v := func(t int64) string { return "100000000" }
	f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{
		"rate(ifInOctets[5m])*8":    {{map[string]string{"ifName": "x"}, v}},
		"rate(ifHCOutOctets[5m])*8": {{map[string]string{"ifName": "x"}, v}},
	}}
	_, cfg := newFake(t, f)
	c, _ := New(cfg)
	got, err := c.FetchBilling(context.Background(), "rate(ifInOctets[5m])*8", "rate(ifHCOutOctets[5m])*8", from, to, ingest.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(got[0].Warnings, "\n")
	if !strings.Contains(w, "--query-in reads ifInOctets, a 32-bit counter that wrapped about 251 times") || strings.Contains(w, "--query-out") {
		t.Errorf("warnings %q", got[0].Warnings)
	}
}
