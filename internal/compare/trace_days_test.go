package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// publishedRoute reads one route's hops (TTL, first address; "*" none) from
// the repo's published routes (internal/route/testdata/public-routes.txt),
// with the class that file gives it.
func publishedRoute(t *testing.T, name string) (hops [][2]string, class string) {
	t.Helper()
	f, err := os.Open("../route/testdata/public-routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "route: "+name:
			in = true
		case !in:
		case line == "end":
			return hops, class
		case strings.HasPrefix(line, "class: "):
			class = strings.TrimPrefix(line, "class: ")
		case line != "" && line[0] >= '0' && line[0] <= '9':
			ttl, addr, _ := strings.Cut(line, " ")
			addr, _, _ = strings.Cut(addr, "|")
			hops = append(hops, [2]string{ttl, addr})
		}
	}
	t.Fatalf("no route %s in public-routes.txt", name)
	return nil, ""
}

// traceJSON writes a linecheck.trace/v1 document of hops to 127.0.0.1,
// started at start ("" leaves the start out).
func traceJSON(hops [][2]string, start string) string {
	var hs []string
	for _, h := range hops {
		if h[1] == "*" {
			hs = append(hs, fmt.Sprintf(`{"ttl":%s,"sent":3,"loss":1,"flags":[],"late":0,"duplicates":0,"responders":[]}`, h[0]))
			continue
		}
		hs = append(hs, fmt.Sprintf(`{"ttl":%s,"sent":3,"loss":0,"flags":[],"late":0,"duplicates":0,"responders":[{"addr":"%s","recv":3,"rtt_ms":{"min":20,"avg":20,"p50":20,"p95":20,"p99":20,"max":20,"stdev":0},"jitter_ms":{"rfc3550":0,"mean_abs":0,"pdv_p95":0}}]}`, h[0], h[1]))
	}
	st := ""
	if start != "" {
		st = `"start":"` + start + `",`
	}
	return `{"schema":"linecheck.trace/v1","target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","reached":false,` + st + `"foreign":0,"hops":[` + strings.Join(hs, ",") + `]}`
}

// The days of a trial: 72 hourly forward traces over 2–4 Nov (Shanghai),
// the published CN2 GIA route from Shanghai Telecom at HH:05 every hour but
// 21:05 on 2 Nov (13:05 UTC), when the published ChinaNet 163 route from
// Shanghai Telecom was taken.
type trialDays struct {
	dir        string
	cheapAtUTC time.Time
}

func writeTrialDays(t *testing.T, asJournal bool) trialDays {
	t.Helper()
	gia, giaClass := publishedRoute(t, "sharon-hk-forward-shanghai-telecom")
	cheap, cheapClass := publishedRoute(t, "tailscale-289-shanghai-telecom-ntt")
	if giaClass != "cn2-gia" || cheapClass != "chinanet-163" {
		t.Fatalf("published classes %s, %s: the test expects cn2-gia and chinanet-163", giaClass, cheapClass)
	}
	d := trialDays{dir: t.TempDir(), cheapAtUTC: time.Date(2026, 11, 2, 13, 5, 0, 0, time.UTC)}
	start := time.Date(2026, 11, 1, 16, 5, 0, 0, time.UTC) // 2 Nov 00:05 Shanghai
	var journal strings.Builder
	if err := os.Mkdir(filepath.Join(d.dir, "fwd"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 72 {
		at := start.Add(time.Duration(i) * time.Hour)
		hops := gia
		if at.Equal(d.cheapAtUTC) {
			hops = cheap
		}
		stamp := at.Format(time.RFC3339)
		if asJournal {
			// A trace --watch journal line: the cycle's time, the trace
			// without a start of its own.
			fmt.Fprintf(&journal, `{"schema":"linecheck.journal/v1","kind":"trace","cycle":%d,"run":1,"time":"%s","end":"%s","trace":%s}`+"\n",
				i+1, stamp, at.Add(2*time.Second).Format(time.RFC3339), traceJSON(hops, ""))
			continue
		}
		name := filepath.Join(d.dir, "fwd", at.Format("20060102T1504")+".json")
		if err := os.WriteFile(name, []byte(traceJSON(hops, stamp)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if asJournal {
		if err := os.WriteFile(filepath.Join(d.dir, "route.ndjson"), []byte(journal.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func runTrialDays(t *testing.T, dir, recorded, vantage, users, sla string) *verdict.Evaluation {
	t.Helper()
	offers, _ := filepath.Abs("../../samples/offers.yaml")
	doc := strings.NewReplacer("OFFERS", offers, "RECORDED", recorded, "VANTAGE", vantage, "USERS", users, "SLA", sla).Replace(`vantage: VANTAGE
users: USERS
candidates:
  - name: hk
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.1, protocol: icmp}]
    recorded: RECORDED
    offer: hk-cn2
offers: OFFERS
traffic: {monthly_gb: 20000, peak_mbps: 200, shape: diurnal, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla: SLA
`)
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	return evalOf(t, r, "hk")
}

func TestARouteSwitchedToTheCheapLineOnceFailsTheLineClassNamingTheTime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		journal   bool
		recorded  string
		wantCount int
	}{
		{"glob", false, `{forward: "fwd/*.json"}`, 72},
		{"list", false, `{forward: [fwd/20261102T1305.json, fwd/20261101T1605.json, fwd/20261104T1505.json]}`, 3},
		{"trace --watch journal", true, `{forward: route.ndjson}`, 72},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := writeTrialDays(t, tc.journal)
			e := runTrialDays(t, d.dir, tc.recorded, "{city: Shanghai}", "[{city: Shanghai}]", "{line_classes: [cn2-gia], windows: {}}")
			c := checkOf(e, verdict.CheckLineClass, verdict.WindowAll)
			if c == nil {
				t.Fatal("no line_class check")
			}
			if c.Pass || c.Measured != "chinanet-163" {
				t.Fatalf("line_class: pass %v measured %v, want a fail on chinanet-163; note %q", c.Pass, c.Measured, c.Note)
			}
			t.Logf("note: %s", c.Note)
			// 13:05 UTC is 21:05 in Shanghai (UTC+8, no summer time).
			if !strings.Contains(c.Note, "chinanet-163 at 21:05 on 2 Nov, cn2-gia otherwise") {
				t.Fatalf("note %q does not name the time of the cheap route", c.Note)
			}
			rs := e.Route.RoutesSeen
			if len(rs) != 2 {
				t.Fatalf("routes seen %+v, want 2 (cn2-gia, chinanet-163)", rs)
			}
			// Earliest first: the CN2 route from 00:05 on 2 Nov, the
			// 163 route at 21:05 only.
			gia, cheap := rs[0], rs[1]
			if gia.LineClass != "cn2-gia" || cheap.LineClass != "chinanet-163" {
				t.Fatalf("classes %s, %s", gia.LineClass, cheap.LineClass)
			}
			if gia.Count != tc.wantCount-1 || cheap.Count != 1 {
				t.Fatalf("counts %d, %d, want %d, 1", gia.Count, cheap.Count, tc.wantCount-1)
			}
			if got := cheap.First.Format(time.RFC3339); got != "2026-11-02T21:05:00+08:00" || !cheap.Last.Equal(*cheap.First) {
				t.Fatalf("chinanet-163 seen %s..%s, want 2026-11-02T21:05:00+08:00 once", got, cheap.Last)
			}
			if gia.First.Format(time.RFC3339) != "2026-11-02T00:05:00+08:00" || gia.Last.Format(time.RFC3339) != "2026-11-04T23:05:00+08:00" {
				t.Fatalf("cn2-gia seen %s..%s", gia.First, gia.Last)
			}
			doc, err := json.Marshal(e.Route)
			if err != nil || !strings.Contains(string(doc), `"line_class":"chinanet-163","first":"2026-11-02T21:05:00+08:00","last":"2026-11-02T21:05:00+08:00","count":1`) {
				t.Errorf("route JSON lacks routes_seen's chinanet-163 at 21:05 +08:00: %v %.300s", err, doc)
			}
			if gia.ASPath == cheap.ASPath || !strings.Contains(gia.ASPath, "AS4809") || !strings.Contains(cheap.ASPath, "AS4134") {
				t.Fatalf("AS paths %q and %q: want CN2's AS4809 and ChinaNet's AS4134", gia.ASPath, cheap.ASPath)
			}
		})
	}
}

func TestEveryTraceOfTheDaysOnAnAllowedClassPasses(t *testing.T) {
	d := writeTrialDays(t, false)
	e := runTrialDays(t, d.dir, `{forward: "fwd/*.json"}`, "{city: Shanghai}", "[{city: Shanghai}]", "{line_classes: [cn2-gia, chinanet-163], windows: {}}")
	if c := checkOf(e, verdict.CheckLineClass, verdict.WindowAll); c == nil || !c.Pass {
		t.Fatalf("line_class %+v: every trace's class is allowed", c)
	}
}

func TestLineClassByCarrierHoldsOnEveryForwardTraceOfTheVantagesCarrier(t *testing.T) {
	d := writeTrialDays(t, false)
	e := runTrialDays(t, d.dir, `{forward: "fwd/*.json"}`, "{city: Shanghai, carrier: telecom}", "[{city: Shanghai, carrier: telecom}]",
		"{line_classes_by_carrier: {telecom: [cn2-gia]}, windows: {}}")
	c := checkOf(e, verdict.CheckLineClassCarrier+"telecom", verdict.WindowAll)
	if c == nil {
		t.Fatalf("no line_class:telecom check in %+v", e.SLA.Checks)
	}
	if c.Pass || !strings.Contains(c.Note, "chinanet-163 at 21:05 on 2 Nov, cn2-gia otherwise") {
		t.Fatalf("line_class:telecom pass %v note %q: want a fail naming 21:05 on 2 Nov", c.Pass, c.Note)
	}
}

func TestABacktraceDocumentInAReturnListIsRefused(t *testing.T) {
	d := writeTrialDays(t, false)
	bt, _ := filepath.Abs("../../samples/rec/hk-cn2-gia-backtrace.json")
	f := filepath.Join(d.dir, "fwd", "20261101T1605.json")
	doc := fmt.Sprintf(`{return: [%s, %s]}`, f, bt)
	offers, _ := filepath.Abs("../../samples/offers.yaml")
	path := filepath.Join(d.dir, "c.yaml")
	os.WriteFile(path, []byte(`vantage: {city: Shanghai}
candidates:
  - {name: hk, region: {city: Hong Kong}, targets: [{addr: 127.0.0.1, protocol: icmp}], recorded: `+doc+`, offer: hk-cn2}
offers: `+offers+`
traffic: {monthly_gb: 20000, peak_mbps: 200, shape: diurnal, period: 2026-10}
fx: {base: CNY, USD: 7.10}
`), 0o644)
	cf, err := candidates.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), cf, Options{Offline: true})
	if err == nil || !strings.Contains(err.Error(), "hk-cn2-gia-backtrace.json is a backtrace document") {
		t.Fatalf("err %v: want a refusal naming the backtrace document", err)
	}
}

// recorded.return as a list: the published CN2 GIA return route toward
// Shanghai Telecom at 04:00 and 22:00 Shanghai time on 3 Nov, the published
// CN2 GT return route toward Qingdao Telecom at 21:30 on 3 Nov (13:30 UTC).
func TestAReturnListFailsOnTheTraceOfAnotherClass(t *testing.T) {
	gia, giaClass := publishedRoute(t, "sharon-hk-return-shanghai-telecom")
	gt, gtClass := publishedRoute(t, "composite-gt-return-to-qingdao-telecom")
	if giaClass != "cn2-gia" || gtClass != "cn2-gt" {
		t.Fatalf("published classes %s, %s", giaClass, gtClass)
	}
	dir := t.TempDir()
	for name, tr := range map[string]string{
		"r1.json": traceJSON(gia, "2026-11-02T20:00:00Z"),
		"r2.json": traceJSON(gt, "2026-11-03T13:30:00Z"),
		"r3.json": traceJSON(gia, "2026-11-03T14:00:00Z"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tr), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := runTrialDays(t, dir, `{return: [r1.json, r2.json, r3.json]}`, "{city: Shanghai}", "[{city: Shanghai}]", "{line_classes: [cn2-gia], windows: {}}")
	c := checkOf(e, verdict.CheckLineClass, verdict.WindowAll)
	if c == nil || c.Pass || c.Measured != "cn2-gt" {
		t.Fatalf("line_class %+v: want a fail on cn2-gt", c)
	}
	if !strings.Contains(c.Note, "return route over the days: cn2-gt at 21:30 on 3 Nov, cn2-gia otherwise (3 traces)") {
		t.Fatalf("note %q", c.Note)
	}
	if rs := e.Route.RoutesSeen; len(rs) != 2 || rs[0].LineClass != "cn2-gia" || rs[0].Count != 2 || rs[1].Count != 1 {
		t.Fatalf("routes seen %+v", rs)
	}
}
