package compare

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// timedProber answers a sweep with one record a probe, sent every 10 s
// from start; from change on every other probe is lost. Nothing is sent.
type timedProber struct {
	fakeProber
	start, change time.Time
}

func (p *timedProber) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, on func(probe.Record)) ([]probe.SweepResult, error) {
	out := make([]probe.SweepResult, len(ts))
	for i := range cfg.Count {
		at := p.start.Add(time.Duration(i) * 10 * time.Second)
		for k, t := range ts {
			rtt := 2.0
			rec := probe.Record{Time: at, Target: t.Name, Addr: t.Addr.String(), Protocol: probe.ICMP, Seq: i, Status: probe.StatusOK, RTTms: &rtt}
			out[k].Sent++
			if !at.Before(p.change) && i%2 == 1 {
				rec.Status, rec.RTTms = probe.StatusLost, nil
			} else {
				out[k].Recv++
				out[k].RTTs = append(out[k].RTTs, rtt)
			}
			on(rec)
		}
	}
	return out, ctx.Err()
}

// TestLiveRunJudgesItsSLAWindows: a live compare keeps each probe's send
// time, so its SLA windows are judged as a recording's are (issue 30):
// 120 probes 10 s apart from 11:50 UTC, every other one lost from 12:00
// on, give the window pre (11:50–12:00) 60 probes and no loss (pass) and
// post (12:00–12:10) 60 probes, 30 lost (loss 0.5, fail), each with its
// loss check. Before, a live run judged its whole run only.
func TestLiveRunJudgesItsSLAWindows(t *testing.T) {
	yaml := `vantage: {city: Shanghai}
candidates:
  - name: lo
    region: {city: Shanghai}
    targets: [{addr: 127.0.0.1, protocol: icmp}]
    offer: near-offer
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla:
  loss: 0.05
  windows:
    pre: {from: "11:50", to: "12:00", tz: UTC}
    post: {from: "12:00", to: "12:10", tz: UTC}
`
	dir := writeFiles(t, map[string]string{"c.yaml": yaml, "offers.yaml": labOffers})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 2, 11, 50, 0, 0, time.UTC)
	p := &timedProber{start: start, change: start.Add(10 * time.Minute)}
	r, err := Run(t.Context(), f, Options{Prober: p, Count: 120, TraceCycles: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := r.Candidates[0]
	want := map[string]struct {
		sent int
		loss float64
		pass bool
	}{"pre": {60, 0, true}, "post": {60, 0.5, false}}
	if len(e.Windows) != 2 {
		t.Fatalf("windows %+v, want pre and post", e.Windows)
	}
	for _, w := range e.Windows {
		x := want[w.Name]
		if w.Sent != x.sent || w.Loss != x.loss || w.Pass != x.pass {
			t.Errorf("window %s: sent %d loss %v pass %v, want %d, %v, %v", w.Name, w.Sent, w.Loss, w.Pass, x.sent, x.loss, x.pass)
		}
	}
	found := map[string]bool{}
	for _, c := range e.SLA.Checks {
		if c.Name != verdict.CheckLoss {
			continue
		}
		found[c.Window] = true
		if wantPass := c.Window != "post" && c.Window != verdict.WindowAll; c.Pass != wantPass {
			t.Errorf("loss in %s: pass %v, want %v (%+v)", c.Window, c.Pass, wantPass, c)
		}
	}
	if !found["pre"] || !found["post"] || !found[verdict.WindowAll] {
		t.Errorf("loss checks in %v, want all, pre and post", found)
	}
	if e.SLA.Pass {
		t.Error("the SLA passes although post loses half its probes")
	}
}
