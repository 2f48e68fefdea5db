package compare

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// genRecording writes the recordings of testdata/window_oracle.py (gen):
// one probe a minute from start; RTT base + ((i·37) mod 100)/10 ms; with
// degrade, in the local evening 20:00–23:00 of zone (k its minute), lost
// when k mod 22 = 21, 105 + k mod 7 ms when k mod 15 = 7. It returns the
// file's sha256, which the oracle prints for the same recording.
func genRecording(t *testing.T, path string, start time.Time, minutes int, zone string, degrade bool, base float64, addr string) string {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range minutes {
		at := start.Add(time.Duration(i) * time.Minute)
		lt := at.In(loc)
		m := lt.Hour()*60 + lt.Minute()
		rtt := base + float64((i*37)%100)/10
		lost := false
		if degrade && m >= 20*60 && m < 23*60 {
			k := m - 20*60
			switch {
			case k%22 == 21:
				lost = true
			case k%15 == 7:
				rtt = float64(105 + k%7)
			}
		}
		stamp := at.UTC().Format("2006-01-02T15:04:05Z")
		if lost {
			fmt.Fprintf(&b, `{"schema":"linecheck.probe/v1","time":"%s","target":"%s","addr":"%s","protocol":"icmp","seq":%d,"status":"lost","rtt_ms":null}`+"\n", stamp, addr, addr, i)
		} else {
			fmt.Fprintf(&b, `{"schema":"linecheck.probe/v1","time":"%s","target":"%s","addr":"%s","protocol":"icmp","seq":%d,"status":"ok","rtt_ms":%.1f}`+"\n", stamp, addr, addr, i, rtt)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// windowScenario writes the three-day recordings and a candidates file
// with the sla block given; it returns the file's path.
func windowScenario(t *testing.T, users, sla string) string {
	t.Helper()
	dir := t.TempDir()
	shanghai := time.Date(2026, 11, 1, 16, 0, 0, 0, time.UTC) // 2 Nov 00:00 Shanghai, a Monday
	for _, g := range []struct {
		name, zone, addr, sum string
		start                 time.Time
		degrade               bool
		base                  float64
	}{
		{"lossy", "Asia/Shanghai", "127.0.0.1", "d767da5c9efe1a99ba13a06fbc6f3313924391857251c069ffd8053da6abe90b", shanghai, true, 50},
		{"steady", "Asia/Shanghai", "127.0.0.2", "ce0792b6d9cfbde0f44ecae5b249ddbfe0d2cb31c85a61840cc9359d8d412a2b", shanghai, false, 55},
		{"newyork", "America/New_York", "127.0.0.3", "f57234c8a2cdae2099153b96f374c819ee24ec5a8d67a62d8327859540222295",
			time.Date(2026, 10, 31, 4, 0, 0, 0, time.UTC), true, 50},
	} {
		if got := genRecording(t, filepath.Join(dir, g.name+".ndjson"), g.start, 3*1440, g.zone, g.degrade, g.base, g.addr); got != g.sum {
			t.Fatalf("%s: sha256 %s, the oracle's recording is %s: the generators differ", g.name, got, g.sum)
		}
	}
	offers, _ := filepath.Abs("../../samples/offers.yaml")
	newyork := ""
	if strings.Contains(users, "New York") {
		// The US users' candidate: its evening is New York's.
		newyork = `  - name: newyork
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.3, protocol: icmp}]
    recorded: {probes: newyork.ndjson}
    offer: tokyo`
	}
	doc := strings.NewReplacer("OFFERS", offers, "USERS", users, "SLA", sla, "NEWYORK", newyork).Replace(`vantage: {city: Shanghai}
users: USERS
candidates:
  - name: lossy
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.1, protocol: icmp}]
    recorded: {probes: lossy.ndjson}
    offer: hk-bgp
  - name: steady
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.2, protocol: icmp}]
    recorded: {probes: steady.ndjson}
    offer: hk-cn2
NEWYORK
offers: OFFERS
traffic: {monthly_gb: 20000, peak_mbps: 200, shape: diurnal, period: 2026-10}
fx: {base: CNY, USD: 7.10}
SLA
`)
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runWindows(t *testing.T, path string) *Result {
	t.Helper()
	f, err := candidates.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func evalOf(t *testing.T, r *Result, name string) *verdict.Evaluation {
	t.Helper()
	for _, e := range r.Candidates {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no candidate %s", name)
	return nil
}

func checkOf(e *verdict.Evaluation, name, window string) *verdict.Check {
	for i, c := range e.SLA.Checks {
		if c.Name == name && c.Window == window {
			return &e.SLA.Checks[i]
		}
	}
	return nil
}

func near(a any, want float64) bool {
	x, ok := a.(float64)
	return ok && math.Abs(x-want) < 1e-9
}

// The example: three days at one probe a minute, one candidate
// losing 4.44 % with p95 106 ms every evening 20:00–23:00 Shanghai and
// clean otherwise (0.56 %, 59.5 ms over the whole recording), the other
// steady. The whole recording passes both; the evening, judged by default
// in the users' zone, fails the cheap one, and the steady one is
// recommended. Figures: testdata/window_oracle.py.
func TestTheEveningDecidesByDefault(t *testing.T) {
	r := runWindows(t, windowScenario(t, "[{city: Shanghai}]", "sla: {rtt_p95_ms: 80, loss: 0.01}"))
	lossy := evalOf(t, r, "lossy")
	for _, c := range []struct {
		name, window string
		measured     float64
		pass         bool
	}{
		{verdict.CheckLoss, verdict.WindowAll, 0.005556, true},
		{verdict.CheckRTTP95, verdict.WindowAll, 59.5, true},
		{verdict.CheckLoss, "evening", 0.044444, false},
		{verdict.CheckRTTP95, "evening", 106, false},
	} {
		got := checkOf(lossy, c.name, c.window)
		if got == nil || !near(got.Measured, c.measured) || got.Pass != c.pass {
			t.Errorf("lossy %s in %s = %+v, want measured %g pass %v", c.name, c.window, got, c.measured, c.pass)
		}
	}
	if lossy.SLA.Pass {
		t.Error("lossy passes the SLA: its evening fails")
	}
	if r.Recommended != "steady" {
		t.Errorf("recommended %q, want steady (the cheap one fails the evening): %s", r.Recommended, r.Verdict)
	}
	notes := strings.Join(r.Notes, "\n")
	if want := "fails rtt_p95_ms 106.0 ms > 80 ms, loss 4.44 % > 1.00 % in evening, 20:00–23:00 Asia/Shanghai"; !strings.Contains(notes, want) {
		t.Errorf("notes %q do not say %q", notes, want)
	}
	if len(lossy.Windows) != 1 || lossy.Windows[0].Occurrences != 3 || lossy.Windows[0].Sent != 540 || lossy.Windows[0].Pass {
		t.Errorf("lossy windows = %+v, want the evening, 3 occurrences, 540 sent, failing", lossy.Windows)
	}
	// The day in 24 hours of Shanghai (oracle: hour 21 loses 9 of 180, p95
	// 109 ms; hour 12 is clean, p95 59.4 ms).
	if h := lossy.Hourly; len(h) != 24 || h[21].Sent != 180 || math.Abs(h[21].Loss-0.05) > 1e-9 || h[21].RTTP95 != 109 || h[12].RTTP95 != 59.4 || h[12].Loss != 0 {
		t.Errorf("hourly = %+v", h)
	}
}

// The US zone across the end of summer time (1 Nov 2026): the evening is
// 20:00–23:00 on New York's clock each day, 540 probes losing 24 (oracle);
// a fixed -04:00 would have judged 18 lost.
func TestTheEveningInAUSZoneAcrossSummerTime(t *testing.T) {
	r := runWindows(t, windowScenario(t, "[{city: New York}]", "sla: {rtt_p95_ms: 80, loss: 0.01}"))
	ny := evalOf(t, r, "newyork")
	if len(ny.Windows) != 1 || ny.Windows[0].Hours != "20:00–23:00 America/New_York" || ny.Windows[0].Sent != 540 || ny.Windows[0].Occurrences != 3 {
		t.Fatalf("windows = %+v, want the evening of New York, 540 probes over 3 evenings", ny.Windows)
	}
	if c := checkOf(ny, verdict.CheckLoss, "evening"); c == nil || !near(c.Measured, 0.044444) || c.Pass {
		t.Errorf("evening loss = %+v, want 0.044444 (24 of 540; a fixed -04:00 gives 0.033333)", c)
	}
	if c := checkOf(ny, verdict.CheckRTTP95, "evening"); c == nil || !near(c.Measured, 106) {
		t.Errorf("evening p95 = %+v, want 106", c)
	}
}

func TestNamedWindowsAcrossMidnightAndWithoutSamples(t *testing.T) {
	r := runWindows(t, windowScenario(t, "[{city: Shanghai}]", `sla:
  rtt_p95_ms: 80
  loss: 0.01
  jitter_ms: 20
  windows:
    night: {from: "22:00", to: "02:00"}
    dawn: {from: "04:00", to: "05:00", days: [sun]}`))
	lossy := evalOf(t, r, "lossy")
	// night, 22:00–02:00 Shanghai: 720 probes, 9 lost (oracle), p95 59.6 ms,
	// jitter 6.2889 ms.
	for _, c := range []struct {
		name     string
		measured float64
		pass     bool
	}{{verdict.CheckLoss, 0.0125, false}, {verdict.CheckRTTP95, 59.6, true}, {verdict.CheckJitter, 6.2889, true}} {
		if got := checkOf(lossy, c.name, "night"); got == nil || !near(got.Measured, c.measured) || got.Pass != c.pass {
			t.Errorf("night %s = %+v, want %g pass %v", c.name, got, c.measured, c.pass)
		}
	}
	// dawn on Sundays: the recording runs Monday to Wednesday, no probe
	// falls in it: no data, never a pass, for every candidate.
	for _, e := range r.Candidates {
		c := checkOf(e, verdict.CheckLoss, "dawn")
		if c == nil || c.Pass || !c.Unmeasured || !strings.HasPrefix(c.Note, verdict.NoData) {
			t.Errorf("%s dawn loss = %+v, want no data, failing", e.Name, c)
		}
		if e.SLA.Pass {
			t.Errorf("%s passes with a window without data", e.Name)
		}
		if checkOf(e, verdict.CheckLoss, "evening") != nil {
			t.Errorf("%s: the evening default is judged beside named windows", e.Name)
		}
	}
	b, err := json.Marshal(lossy.Windows)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"name":"dawn","hours":"04:00–05:00 Asia/Shanghai on sun","default":false,"occurrences":0,"sent":0,"recv":0,"loss":null,"rtt_p50_ms":null,"rtt_p95_ms":null,"jitter_ms":null,"pass":false`) {
		t.Errorf("windows JSON %s: want dawn's figures null", b)
	}
}

func TestWindowsOffJudgesTheWholeRecordingOnly(t *testing.T) {
	r := runWindows(t, windowScenario(t, "[{city: Shanghai}]", "sla: {rtt_p95_ms: 80, loss: 0.01, windows: {}}"))
	for _, e := range r.Candidates {
		for _, c := range e.SLA.Checks {
			if c.Window != verdict.WindowAll {
				t.Errorf("%s: check %s in %s with windows: {}", e.Name, c.Name, c.Window)
			}
		}
	}
	if r.Recommended != "lossy" {
		t.Errorf("recommended %q: with the windows off the whole recording passes the cheap one", r.Recommended)
	}
}

// The days of a trial: the lossy recording split into a file per day and
// named by a glob (and by a list) is judged as the one file is.
func TestRecordedProbesTakesTheDaysOfATrial(t *testing.T) {
	path := windowScenario(t, "[{city: Shanghai}]", "sla: {rtt_p95_ms: 80, loss: 0.01}")
	dir := filepath.Dir(path)
	whole, err := os.ReadFile(filepath.Join(dir, "lossy.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(whole), "\n")
	if err := os.Mkdir(filepath.Join(dir, "days"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Written out of order on purpose: the glob's name order is the days'.
	for _, d := range []int{2, 0, 1} {
		part := strings.Join(lines[d*1440:(d+1)*1440], "")
		if err := os.WriteFile(filepath.Join(dir, "days", fmt.Sprintf("lossy-%d.ndjson", d)), []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, probes := range []string{`"days/lossy-*.ndjson"`, `[days/lossy-2.ndjson, days/lossy-0.ndjson, days/lossy-1.ndjson]`} {
		y := strings.Replace(string(doc), "probes: lossy.ndjson", "probes: "+probes, 1)
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runWindows(t, path)
		lossy := evalOf(t, r, "lossy")
		if lossy.Route.Sent != 4320 || !near(checkOf(lossy, verdict.CheckLoss, "evening").Measured, 0.044444) ||
			!near(checkOf(lossy, verdict.CheckRTTP95, verdict.WindowAll).Measured, 59.5) || lossy.Windows[0].Occurrences != 3 {
			t.Errorf("probes %s: sent %d, checks %+v, windows %+v", probes, lossy.Route.Sent, lossy.SLA.Checks, lossy.Windows)
		}
	}
	y := strings.Replace(string(doc), "probes: lossy.ndjson", `probes: "days/none-*.ndjson"`, 1)
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := candidates.Load(path); err == nil || !strings.Contains(err.Error(), `c.yaml:4: candidates[0] (lossy).recorded.probes: "days/none-*.ndjson" matches no file`) {
		t.Errorf("a glob matching nothing: err = %v", err)
	}
}
