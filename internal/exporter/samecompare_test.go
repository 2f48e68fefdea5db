package exporter

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

const samplesFile = "../../samples/candidates.yaml"

// serveOnRecordings feeds an exporter what the bundled samples recorded,
// the way serve's loop feeds it what it measures: each target's probe
// stream in cycles of 10 probes (in time order), the candidate's recorded
// forward trace as its first target's last trace; the file's
// recorded.return and its offers and traffic come through ConfigOf, as
// serve loads them.
func serveOnRecordings(t *testing.T, f *candidates.File, db route.ASNDB) *Exporter {
	t.Helper()
	conf, err := ConfigOf(f, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil)
	// A clock outside any evening (08:00 in Shanghai): serve judges its
	// whole window here, the SLA windows are windows_test.go's and the
	// surfaces test's (tui), whatever the hour the test runs at.
	e.SetWindow(0, 10000, func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) })
	e.SetHopNames(db)
	e.SetConfig(conf, time.Unix(0, 0))
	for _, c := range f.Candidates {
		fh, err := os.Open(c.Recorded.Probes)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := probe.ReadStream(fh, c.Recorded.Probes)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range c.Targets {
			tg := Target{Candidate: c.Name, Addr: ct.Addr, Protocol: ct.Protocol, Port: ct.Port}
			var mine []probe.Record
			for _, r := range recs {
				if r.Addr == ct.Addr && r.Protocol == ct.Protocol && (r.Protocol == probe.ICMP || r.Port == ct.Port) {
					mine = append(mine, r)
				}
			}
			sort.SliceStable(mine, func(i, j int) bool { return mine[i].Time.Before(mine[j].Time) })
			if len(mine) == 0 {
				t.Fatalf("%s %s: no recorded probes", c.Name, tg.Label())
			}
			for len(mine) > 0 {
				n := min(10, len(mine))
				e.ObservePing(tg, cycleOf(mine[:n]))
				mine = mine[n:]
			}
		}
		tr, err := route.ReadTraceFile(c.Recorded.Forward)
		if err != nil {
			t.Fatal(err)
		}
		first := c.Targets[0]
		e.ObserveTrace(Target{Candidate: c.Name, Addr: first.Addr, Protocol: first.Protocol, Port: first.Port}, tr, nil)
	}
	return e
}

// cycleOf is one cycle's outcome from its probe records.
func cycleOf(rs []probe.Record) PingOutcome {
	var o PingOutcome
	for _, r := range rs {
		switch r.Status {
		case probe.StatusDup:
			o.Dup++
			continue
		case probe.StatusOK:
			o.Recv++
			o.RTTms = append(o.RTTms, *r.RTTms)
		case probe.StatusLate:
			o.Late++
		}
		o.Sent++
	}
	return o
}

// compare and serve on the same recordings find every figure and verdict
// equal: per target and per candidate loss, RTT percentiles and jitter,
// stretch, line class per direction, every SLA check (a check compare fails
// for want of data is serve's no data), the overall verdict, and the
// monthly cost of every offer and what-if, in its currency and converted.
func TestServeAndCompareAgreeOnTheSamples(t *testing.T) {
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Run(context.Background(), f, compare.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	db, err := compare.LoadHopNames("", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	e := serveOnRecordings(t, f2, db)
	near := func(what string, got float64, ok bool, want float64) {
		t.Helper()
		if !ok || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: serve %v (present %v), compare %v", what, got, ok, want)
		}
	}
	checked := 0
	for _, ev := range res.Candidates {
		c := map[string]string{"candidate": ev.Name}
		q := ev.Route
		if q.Recv == 0 {
			t.Fatalf("%s: compare measured nothing: the samples changed?", ev.Name)
		}
		v, ok := gaugeOf(t, e, "linecheck_candidate_loss_ratio", c)
		near(ev.Name+" loss", v, ok, q.Loss)
		for stat, want := range map[string]float64{"min": q.RTT.Min, "p50": q.RTT.P50, "p95": q.RTT.P95, "p99": q.RTT.P99, "max": q.RTT.Max} {
			v, ok := gaugeOf(t, e, "linecheck_candidate_rtt_seconds", map[string]string{"candidate": ev.Name, "stat": stat})
			near(ev.Name+" RTT "+stat, v*1000, ok, want)
		}
		for kind, want := range map[string]float64{"rfc3550": q.Jitter.RFC3550, "mean_abs": q.Jitter.MeanAbs, "pdv_p95": q.Jitter.PDVP95} {
			v, ok := gaugeOf(t, e, "linecheck_candidate_jitter_seconds", map[string]string{"candidate": ev.Name, "kind": kind})
			near(ev.Name+" jitter "+kind, v*1000, ok, want)
		}
		v, ok = gaugeOf(t, e, "linecheck_stretch_ratio", c)
		near(ev.Name+" stretch", v, ok, q.Stretch)
		v, ok = gaugeOf(t, e, "linecheck_floor_rtt_seconds", c)
		near(ev.Name+" floor", v*1000, ok, q.FloorMs)
		for dir, want := range map[string]string{"forward": q.ForwardClass, "return": q.ReturnClass, "route": q.LineClass} {
			if want == "" {
				t.Fatalf("%s: compare has no %s class: the samples changed?", ev.Name, dir)
			}
			if _, ok := gaugeOf(t, e, "linecheck_candidate_line_class_info", map[string]string{"candidate": ev.Name, "direction": dir, "line_class": want}); !ok {
				t.Errorf("%s %s line class: serve has no %s series", ev.Name, dir, want)
			}
			if n := countWith(t, e, "linecheck_candidate_line_class_info", map[string]string{"candidate": ev.Name, "direction": dir}); n != 1 {
				t.Errorf("%s %s line class: %d series, want 1", ev.Name, dir, n)
			}
		}
		for _, tr := range ev.Targets {
			tl := map[string]string{"candidate": ev.Name, "target": targetLabel(tr.Target), "protocol": string(tr.Protocol)}
			v, ok := gaugeOf(t, e, "linecheck_window_loss_ratio", tl)
			near(ev.Name+" "+tl["target"]+" loss", v, ok, tr.Loss)
			for stat, want := range map[string]float64{"min": tr.RTT.Min, "p50": tr.RTT.P50, "p95": tr.RTT.P95, "p99": tr.RTT.P99, "max": tr.RTT.Max} {
				sl := map[string]string{"candidate": ev.Name, "target": tl["target"], "protocol": tl["protocol"], "stat": stat}
				v, ok := gaugeOf(t, e, "linecheck_window_rtt_seconds", sl)
				near(ev.Name+" "+tl["target"]+" RTT "+stat, v*1000, ok, want)
			}
			v, ok = gaugeOf(t, e, "linecheck_jitter_seconds", tl)
			near(ev.Name+" "+tl["target"]+" jitter", v*1000, ok, tr.Jitter.MeanAbs)
		}
		if len(ev.SLA.Checks) < 5 {
			t.Fatalf("%s: %d SLA checks: the samples changed?", ev.Name, len(ev.SLA.Checks))
		}
		for _, ch := range ev.SLA.Checks {
			if ch.Window != verdict.WindowAll {
				// The whole window here (the clock is outside the
				// evening).
				continue
			}
			l := map[string]string{"candidate": ev.Name, "check": ch.Name}
			pass, havePass := gaugeOf(t, e, "linecheck_sla_check_pass", l)
			_, haveNoData := gaugeOf(t, e, "linecheck_sla_check_nodata", l)
			switch {
			case ch.Unmeasured && (havePass || !haveNoData):
				t.Errorf("%s %s: compare has no data; serve pass %v (present %v), no data %v", ev.Name, ch.Name, pass, havePass, haveNoData)
			case !ch.Unmeasured && (!havePass || haveNoData || (pass == 1) != ch.Pass):
				t.Errorf("%s %s: compare pass %v; serve %v (present %v), no data %v", ev.Name, ch.Name, ch.Pass, pass, havePass, haveNoData)
			}
			checked++
		}
		whole := verdict.Verdict{Pass: true}
		for _, ch := range ev.SLA.Checks {
			if ch.Window == verdict.WindowAll {
				whole.Checks = append(whole.Checks, ch)
				whole.Pass = whole.Pass && ch.Pass
			}
		}
		if want, ok := overall(whole); ok {
			v, present := gaugeOf(t, e, "linecheck_sla_pass", map[string]string{"candidate": ev.Name, "window": verdict.WindowAll})
			if !present || (v == 1) != want {
				t.Errorf("%s overall over the whole window: compare %v, serve %v (present %v)", ev.Name, want, v, present)
			}
		}
		if n := count(t, e, "linecheck_sla_window_check_pass") + count(t, e, "linecheck_sla_window_check_nodata"); n == 0 {
			t.Errorf("no per-window check series")
		}
		m := ev.Monthly
		if m == nil {
			t.Fatalf("%s: compare priced nothing", ev.Name)
		}
		costs := []struct {
			offer, scheme, currency, role, total string
			conv                                 verdict.Money
		}{{m.Offer, m.Scheme, m.Currency, "offer", m.Total, m.Converted}}
		for _, w := range ev.WhatIf {
			costs = append(costs, struct {
				offer, scheme, currency, role, total string
				conv                                 verdict.Money
			}{w.Offer, w.Scheme, w.Currency, "what_if", w.Total, w.Converted})
		}
		for _, k := range costs {
			want, err := strconv.ParseFloat(k.total, 64)
			if err != nil {
				t.Fatal(err)
			}
			l := map[string]string{"candidate": ev.Name, "offer": k.offer, "scheme": k.scheme, "currency": k.currency, "role": k.role}
			v, ok := gaugeOf(t, e, "linecheck_monthly_cost", l)
			near(fmt.Sprintf("%s %s (%s) cost", ev.Name, k.offer, k.scheme), v, ok, want)
			l["currency"] = k.conv.Currency
			v, ok = gaugeOf(t, e, "linecheck_monthly_cost_converted", l)
			near(fmt.Sprintf("%s %s converted", ev.Name, k.offer), v, ok, k.conv.Amount.InexactFloat64())
			checked++
		}
	}
	// The snapshot as compare's document ranks and recommends as compare.
	rep := e.Report(res.Generated)
	if fmt.Sprint(rep.Ranking) != fmt.Sprint(res.Ranking) || rep.Recommended != res.Recommended || rep.Verdict != res.Verdict {
		t.Errorf("serve's report ranks %v, recommends %q (%s); compare %v, %q (%s)", rep.Ranking, rep.Recommended, rep.Verdict, res.Ranking, res.Recommended, res.Verdict)
	}
	if checked < 30 {
		t.Errorf("only %d checks and costs compared", checked)
	}
	// The status page writes each monthly total as compare's tables do,
	// thousands grouped (it wrote "144691.54").
	rec := httptest.NewRecorder()
	e.Mux().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	for _, ev := range res.Candidates {
		if ev.Monthly == nil {
			continue
		}
		if want := "<td>" + billing.GroupThousands(ev.Monthly.Total) + " " + ev.Monthly.Currency + " ("; !strings.Contains(rec.Body.String(), want) {
			t.Errorf("status page: no %q for %s", want, ev.Name)
		}
	}
}

func targetLabel(t candidates.Target) string {
	return Target{Addr: t.Addr, Protocol: t.Protocol, Port: t.Port}.Label()
}

// countWith counts the series of name whose labels include want.
func countWith(t *testing.T, e *Exporter, name string, want map[string]string) int {
	t.Helper()
	n := 0
	for _, mf := range gather(t, e.Registry()) {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			n++
		}
	}
	return n
}
