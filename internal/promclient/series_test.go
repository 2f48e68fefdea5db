package promclient

import (
	"context"
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
