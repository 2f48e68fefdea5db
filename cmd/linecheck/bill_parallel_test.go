package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// TestBillAllKeepsInputOrderAndFirstError bills more series than workers:
// each report must stay at its series' index (its 95th is the index's own
// rate), and of two failing series the first in input order is reported.
func TestBillAllKeepsInputOrderAndFirstError(t *testing.T) {
	p := billing.MonthPeriod(2026, 10, time.UTC)
	mk := func(i int, inPeriod bool) *billing.Series {
		s := &billing.Series{Name: fmt.Sprintf("if%02d", i), Step: billing.SlotSeconds}
		start := p.Start.Unix()
		if !inPeriod {
			start = p.End.Unix() + 86400*40
		}
		for k := int64(0); k < 20; k++ {
			// A constant (i+1) MB per slot: every 95th of series i is (i+1)·8e6/300 bit/s.
			s.Slots = append(s.Slots, billing.Slot{Start: start + k*billing.SlotSeconds, In: float64(i+1) * 1e6, Out: float64(i+1) * 1e6})
		}
		return s
	}
	n := 4*runtime.GOMAXPROCS(0) + 3
	var series []*billing.Series
	for i := range n {
		series = append(series, mk(i, true))
	}
	reports, err := billAll(series, p, nil, billing.Options{Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		want := float64(i+1) * 8e6 / 300
		if r == nil || r.P95 == nil {
			t.Fatalf("report %d: no 95th", i)
		}
		if got := r.P95.GreaterBps; got < want*0.999999 || got > want*1.000001 {
			t.Errorf("report %d: 95th %.1f bit/s, want %.1f (series %s)", i, got, want, series[i].Name)
		}
	}
	series[n-2], series[3] = mk(n-2, false), mk(3, false)
	if _, err := billAll(series, p, nil, billing.Options{Scale: 1}); err == nil || !strings.Contains(err.Error(), "if03") {
		t.Errorf("error %v, want the first failing series (if03) named", err)
	}
}
