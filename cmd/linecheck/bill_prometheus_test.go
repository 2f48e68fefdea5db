package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
	"github.com/linecheck/linecheck/internal/promclient"
)

// backfillMonth is October 2026 (31 days, 8928 slots) of two interfaces.
var (
	bfFrom   = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	bfTo     = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	bfIfaces = []string{"xe-0/0/1", "xe-0/0/2"}
)

// bfSlot is one slot's traffic in bytes; both are multiples of 5 so that a
// counter sampled every 60 s grows by a whole number of bytes per minute.
type bfSlot struct{ in, out int64 }

// backfillTraffic generates the month: a diurnal shape (evening peak) with
// deterministic noise, different per interface and direction.
func backfillTraffic() map[string][]bfSlot {
	n := int(bfTo.Sub(bfFrom) / (300 * time.Second))
	out := map[string][]bfSlot{}
	seed := uint64(20261001)
	next := func() float64 { // xorshift, so the data is the same on every run
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed%1_000_000) / 1_000_000
	}
	for k, name := range bfIfaces {
		s := make([]bfSlot, n)
		for i := range s {
			hour := float64(i%288) / 12
			shape := 0.55 + 0.45*math.Sin((hour-14)/24*2*math.Pi) // peak near 20:00
			inMbps := (200 + 600*shape + 150*next()) * float64(k+1) / 2
			outMbps := (80 + 250*shape + 300*next()) * float64(k+1) / 2
			s[i] = bfSlot{in: int64(inMbps*1e6*300/8/5) * 5, out: int64(outMbps*1e6*300/8/5) * 5}
		}
		out[name] = s
	}
	return out
}

// writeOpenMetrics writes the counters as snmp_exporter would have scraped
// them every 60 s (as in promtool_backfill_input.om.head), starting one slot
// before the month so the first slot's rate has its left sample. Within a
// slot the counter grows by the same amount each minute: the per-slot rate is
// then exactly recoverable whether the range selector includes the sample at
// t−300 (Prometheus 2.x: increase over exactly 300 s, no extrapolation) or not
// (3.x: 240 s extrapolated by 300/240 at a constant rate).
//
// One file per day: promtool 2.42 re-reads its whole input for every 2-hour
// block it writes, so a single month-long file takes ~45 s and 31 day files
// take a second or two.
func writeOpenMetrics(t *testing.T, dir string, traffic map[string][]bfSlot) []string {
	t.Helper()
	days := int(bfTo.Sub(bfFrom) / (24 * time.Hour))
	files := make([]*bufio.Writer, days)
	var paths []string
	var closers []*os.File
	for d := range days {
		p := filepath.Join(dir, fmt.Sprintf("counters-%02d.om", d+1))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		closers = append(closers, f)
		paths = append(paths, p)
		files[d] = bufio.NewWriterSize(f, 1<<16)
	}
	dayOf := func(ts int64) int { return max(0, int((ts-bfFrom.Unix()-1)/86400)) } // a sample at t closes the slot ending at t
	for _, dir := range []string{"In", "Out"} {
		name := "ifHC" + dir + "Octets"
		for _, w := range files {
			fmt.Fprintf(w, "# HELP %s The total number of octets of the interface (synthetic test data).\n# TYPE %s gauge\n", name, name)
		}
		for k, iface := range bfIfaces {
			labels := fmt.Sprintf(`{ifAlias="transit-%c",ifDescr="TenGigE%d",ifIndex="%d",ifName="%s",instance="192.0.2.1",job="snmp"}`,
				'A'+k, k+1, k+3, iface)
			c := int64(1_000_000_000_000) * int64(k+1)
			ts := bfFrom.Unix() - 300
			fmt.Fprintf(files[0], "%s%s %d %d\n", name, labels, c, ts)
			// the slot before the month: a constant 1 MB per minute
			for m := 1; m <= 5; m++ {
				c += 1_000_000
				fmt.Fprintf(files[0], "%s%s %d %d\n", name, labels, c, ts+int64(60*m))
			}
			for i, s := range traffic[iface] {
				b := s.in
				if dir == "Out" {
					b = s.out
				}
				start := bfFrom.Unix() + int64(300*i)
				for m := 1; m <= 5; m++ {
					c += b / 5
					at := start + int64(60*m)
					fmt.Fprintf(files[dayOf(at)], "%s%s %d %d\n", name, labels, c, at)
				}
			}
		}
	}
	for i, w := range files {
		fmt.Fprintln(w, "# EOF")
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		closers[i].Close()
	}
	return paths
}

// writeTrafficCSV writes the same month as the CSV `bill` reads.
func writeTrafficCSV(t *testing.T, path string, traffic map[string][]bfSlot) {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	for _, iface := range bfIfaces {
		for i, s := range traffic[iface] {
			fmt.Fprintf(&b, "%d,%s,%d,%d\n", bfFrom.Unix()+int64(300*i), iface, s.in, s.out)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startBackfilledPrometheus backfills the month with promtool and starts a
// Prometheus on it with a retention far longer than the month.
func startBackfilledPrometheus(t *testing.T) (string, map[string][]bfSlot) {
	t.Helper()
	promtool := needTool(t, "promtool")
	needTool(t, "prometheus")
	dir := t.TempDir()
	traffic := backfillTraffic()
	data := filepath.Join(dir, "data")
	paths := writeOpenMetrics(t, dir, traffic)
	// Several promtool processes at a time (they mostly wait on the disk);
	// the day files cover disjoint 2-hour blocks, so blocks never overlap.
	errs := make(chan error, len(paths))
	sem := make(chan struct{}, 4)
	for _, p := range paths {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", p, data).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("promtool backfill %s: %v\n%s", filepath.Base(p), err, out)
			}
			errs <- err
		}()
	}
	for range paths {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	base := startPrometheus(t, "global: {scrape_interval: 1m}\nscrape_configs: []\n", data,
		"--storage.tsdb.retention.time=3650d", "--query.lookback-delta=5m")
	return base, traffic
}

func relClose(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// The series promclient fetches from the backfilled server equal the
// generated month slot by slot (to float rounding, 1e-9 relative: PromQL
// computes bit/s as Δcounter/300·8 and we turn it back into ·300/8 bytes),
// whether fetched in one request or split into 1000-point requests, and
// their 95th under every direction rule equals the 95th of the generated
// data.
func checkFetchEqualsTheGeneratedMonth(t *testing.T, base string, traffic map[string][]bfSlot) {
	for _, maxPoints := range []int{0, 1000} {
		c, err := promclient.New(promclient.Config{URL: base, MaxPoints: maxPoints, Retries: 1, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		series, err := c.FetchBilling(context.Background(), `rate(ifHCInOctets[5m])*8`, `rate(ifHCOutOctets[5m])*8`, bfFrom, bfTo, ingest.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != 2 || series[0].Name != "xe-0/0/1" || series[1].Name != "xe-0/0/2" {
			t.Fatalf("series %v", seriesNames(series))
		}
		for _, s := range series {
			want := traffic[s.Name]
			if len(s.Slots) != len(want) || len(s.Warnings) != 0 {
				t.Fatalf("%s: %d slots (want %d), warnings %q", s.Name, len(s.Slots), len(want), s.Warnings)
			}
			var gin, gout, win, wout []float64
			for i, sl := range s.Slots {
				w := want[i]
				if sl.Start != bfFrom.Unix()+int64(300*i) || !relClose(sl.In, float64(w.in)) || !relClose(sl.Out, float64(w.out)) {
					t.Fatalf("%s slot %d: got %+v, want start %d in %d out %d", s.Name, i, sl, bfFrom.Unix()+int64(300*i), w.in, w.out)
				}
				gin, gout = append(gin, sl.In*8/300), append(gout, sl.Out*8/300)
				win, wout = append(win, float64(w.in)*8/300), append(wout, float64(w.out)*8/300)
			}
			for _, d := range billing.Directions {
				got := billing.P95Dir("nearest-rank", d, gin, gout)
				exp := billing.P95Dir("nearest-rank", d, win, wout)
				if !relClose(got, exp) || got == 0 {
					t.Errorf("%s %s: p95 %v from Prometheus, %v from the data", s.Name, d, got, exp)
				}
			}
		}
	}
}

// The billing reader of saved query_range JSON and promclient apply the same
// rule (the value at t is the slot starting at t−300) to the same real
// Prometheus answer: one month saved with a direction label per query, read
// back with ingest.ReadFile, equals the fetched series slot by slot.
func checkSavedResponseEqualsFetch(t *testing.T, base string) {
	c, err := promclient.New(promclient.Config{URL: base, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fetched, err := c.FetchBilling(context.Background(), `rate(ifHCInOctets[5m])*8`, `rate(ifHCOutOctets[5m])*8`, bfFrom, bfTo, ingest.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start, end := promclient.BillingRange(bfFrom, bfTo)
	q := `label_replace(rate(ifHCInOctets[5m])*8, "direction", "in", "", "") or label_replace(rate(ifHCOutOctets[5m])*8, "direction", "out", "", "")`
	body := httpGet(t, fmt.Sprintf("%s/api/v1/query_range?query=%s&start=%d&end=%d&step=300", base, url.QueryEscape(q), start.Unix(), end.Unix()))
	saved := filepath.Join(t.TempDir(), "query_range.json")
	if err := os.WriteFile(saved, body, 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := ingest.ReadFile(saved, ingest.ReadOptions{})
	if err != nil {
		t.Fatalf("ingest.ReadFile of the saved answer: %v", err)
	}
	if len(read) != len(fetched) {
		t.Fatalf("%d series read, %d fetched", len(read), len(fetched))
	}
	sort.Slice(read, func(i, j int) bool { return read[i].Name < read[j].Name })
	for k, r := range read {
		f := fetched[k]
		if r.Name != f.Name || len(r.Slots) != len(f.Slots) {
			t.Fatalf("read %s (%d slots), fetched %s (%d slots)", r.Name, len(r.Slots), f.Name, len(f.Slots))
		}
		for i := range r.Slots {
			a, b := r.Slots[i], f.Slots[i]
			if a.Start != b.Start || !relClose(a.In, b.In) || !relClose(a.Out, b.Out) {
				t.Fatalf("%s slot %d: read %+v, fetched %+v", r.Name, i, a, b)
			}
		}
	}
}

func seriesNames(ss []*billing.Series) []string {
	var n []string
	for _, s := range ss {
		n = append(n, s.Name)
	}
	sort.Strings(n)
	return n
}

// billDoc is the part of linecheck.bill/v1 compared below.
type billDoc struct {
	Schema string `json:"schema"`
	Series []struct {
		Name    string          `json:"name"`
		Samples json.RawMessage `json:"samples"`
		Traffic map[string]any  `json:"traffic"`
		P95     map[string]any  `json:"p95"`
		Bills   []struct {
			Offer  string `json:"offer"`
			Amount string `json:"amount"`
		} `json:"bills"`
	} `json:"series"`
	// single-series form (--aggregate)
	Samples json.RawMessage `json:"samples"`
	Traffic map[string]any  `json:"traffic"`
	P95     map[string]any  `json:"p95"`
	Bills   []struct {
		Offer  string `json:"offer"`
		Amount string `json:"amount"`
	} `json:"bills"`
}

const bfOffers = `currency: USD
offers:
  - name: p95-transit
    currency: USD
    bandwidth: {scheme: p95, commit_mbps: 300, commit_price: "900", overage_per_mbps: "2.5"}
  - name: per-gb
    currency: USD
    bandwidth: {scheme: per-gb, price_per_gb: "0.01", base: 1000, direction: out}
`

// `bill --prometheus` on the backfilled server equals `bill` on the same
// month written as a CSV, for every direction rule, per interface and with
// --aggregate: the samples, the p95 block (to 1e-9 relative, see above) and
// the amounts of every offer.
//
// One backfilled server serves both checks: promtool 2.42 writes one block
// per 2 hours of data, which makes the backfill the slow part of the test.
func TestBillPrometheusEqualsBillOnTheCSV(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	base, traffic := startBackfilledPrometheus(t)
	t.Run("fetched series equal the generated month", func(t *testing.T) {
		checkFetchEqualsTheGeneratedMonth(t, base, traffic)
	})
	t.Run("a saved query_range response read by bill equals the fetch", func(t *testing.T) {
		checkSavedResponseEqualsFetch(t, base)
	})
	dir := t.TempDir()
	csv := filepath.Join(dir, "traffic.csv")
	writeTrafficCSV(t, csv, traffic)
	offers := filepath.Join(dir, "offers.yaml")
	os.WriteFile(offers, []byte(bfOffers), 0o644)
	prom := []string{"--prometheus", base, "--query-in", `rate(ifHCInOctets[5m])*8`, "--query-out", `rate(ifHCOutOctets[5m])*8`,
		"--max-points", "2000"}
	for _, d := range []string{"greater", "max", "sum", "in", "out"} {
		for _, agg := range [][]string{nil, {"--aggregate"}} {
			common := append([]string{"bill", "--period", "2026-10", "--direction", d, "--offers", offers, "--format", "json"}, agg...)
			var fromCSV, fromProm billDoc
			a := runLinecheck(t, append(append([]string{}, common...), csv)...)
			b := runLinecheck(t, append(append([]string{}, common...), prom...)...)
			if err := json.Unmarshal(a, &fromCSV); err != nil {
				t.Fatalf("csv: %v\n%s", err, a)
			}
			if err := json.Unmarshal(b, &fromProm); err != nil {
				t.Fatalf("prometheus: %v\n%s", err, b)
			}
			compareBillDocs(t, fmt.Sprintf("%s %v", d, agg), fromCSV, fromProm)
		}
	}
}

func compareBillDocs(t *testing.T, what string, a, b billDoc) {
	t.Helper()
	type one struct {
		name    string
		samples json.RawMessage
		traffic map[string]any
		p95     map[string]any
		amounts []string
	}
	flat := func(d billDoc) []one {
		if len(d.Series) == 0 {
			o := one{name: "", samples: d.Samples, traffic: d.Traffic, p95: d.P95}
			for _, b := range d.Bills {
				o.amounts = append(o.amounts, b.Offer+"="+b.Amount)
			}
			return []one{o}
		}
		var out []one
		for _, s := range d.Series {
			o := one{name: s.Name, samples: s.Samples, traffic: s.Traffic, p95: s.P95}
			for _, b := range s.Bills {
				o.amounts = append(o.amounts, b.Offer+"="+b.Amount)
			}
			out = append(out, o)
		}
		return out
	}
	fa, fb := flat(a), flat(b)
	if len(fa) != len(fb) || len(fa) == 0 {
		t.Fatalf("%s: %d series from the CSV, %d from Prometheus", what, len(fa), len(fb))
	}
	for i := range fa {
		x, y := fa[i], fb[i]
		if x.name != y.name || string(x.samples) != string(y.samples) {
			t.Errorf("%s: series %q samples %s vs %q %s", what, x.name, x.samples, y.name, y.samples)
		}
		if len(x.p95) == 0 || len(x.traffic) == 0 {
			t.Fatalf("%s: no p95 or traffic block", what)
		}
		for block, m := range map[string][2]map[string]any{"p95": {x.p95, y.p95}, "traffic": {x.traffic, y.traffic}} {
			for k, v := range m[0] {
				fv, ok := v.(float64)
				if !ok {
					if v != m[1][k] {
						t.Errorf("%s %s: %s %s = %v vs %v", what, x.name, block, k, v, m[1][k])
					}
					continue
				}
				gv, _ := m[1][k].(float64)
				if !relClose(fv, gv) {
					t.Errorf("%s %s: %s %s = %v from the CSV, %v from Prometheus", what, x.name, block, k, fv, gv)
				}
			}
		}
		if strings.Join(x.amounts, " ") != strings.Join(y.amounts, " ") || len(x.amounts) != 2 {
			t.Errorf("%s %s: amounts %v from the CSV, %v from Prometheus", what, x.name, x.amounts, y.amounts)
		}
	}
}

func TestBillPromPeriodFromTheBillFlags(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	sh, _ := time.LoadLocation("Asia/Shanghai")
	for _, tc := range []struct {
		flags      map[string]string
		start, end time.Time
		wantErr    string
	}{
		{nil, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), ""},
		{map[string]string{"period": "2026-02"}, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), ""},
		{map[string]string{"period": "2026-10", "tz": "Asia/Shanghai"}, time.Date(2026, 10, 1, 0, 0, 0, 0, sh), time.Date(2026, 11, 1, 0, 0, 0, 0, sh), ""},
		{map[string]string{"from": "2026-10-05", "to": "2026-10-06"}, time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC), ""},
		{map[string]string{"from": "2026-10-05"}, time.Time{}, time.Time{}, "needs both --from and --to"},
		{map[string]string{"period": "2026-10", "to": "2026-10-06"}, time.Time{}, time.Time{}, "choose one"},
		{map[string]string{"tz": "Mars/Olympus"}, time.Time{}, time.Time{}, "--tz"},
	} {
		c := &cobra.Command{}
		for _, f := range []string{"period", "from", "to"} {
			c.Flags().String(f, "", "")
		}
		c.Flags().String("tz", "UTC", "")
		for k, v := range tc.flags {
			c.Flags().Set(k, v)
		}
		p, err := billPromPeriod(c, now)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.flags, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !p.Start.Equal(tc.start) || !p.End.Equal(tc.end) {
			t.Errorf("%v: %v – %v (%v), want %v – %v", tc.flags, p.Start, p.End, err, tc.start, tc.end)
		}
	}
	c := &cobra.Command{}
	c.Flags().String("tz", "UTC", "")
	if p, _ := billPromPeriod(c, time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC)); !p.Start.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("in January the default period starts %v, want 2026-12-01", p.Start)
	}
}

// runLinecheckCode runs linecheck in a child process and returns its exit
// code and stderr.
func runLinecheckCode(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, _, stderr := runLinecheckOut(t, args...)
	return code, stderr
}

// runLinecheckOut runs linecheck in a child process: exit code, stdout, stderr.
func runLinecheckOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

func TestBillPrometheusBadUsageExits2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bill", "--prometheus", "http://127.0.0.1:1", "--period", "2026-10"}, "needs --query-in and --query-out"},
		{[]string{"bill", "--query-in", "x", "--query-out", "y", "f.csv"}, "need --prometheus URL"},
		{[]string{"bill", "--prometheus", "http://127.0.0.1:1", "--query-in", "x", "--query-out", "y", "f.csv"}, "give no LOG files"},
		{[]string{"bill", "--prometheus", "ftp://x", "--query-in", "x", "--query-out", "y"}, "want an http:// or https:// URL"},
		{[]string{"bill", "--prometheus", "http://127.0.0.1:1", "--query-in", "x", "--query-out", "y", "--basic-auth-user", "u"}, "go together"},
	} {
		code, stderr := runLinecheckCode(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// An unreachable server is a failure of the run, not of the verdict; the
	// message names the query and the cause.
	code, stderr := runLinecheckCode(t, "bill", "--prometheus", "http://127.0.0.1:1", "--query-in", "x", "--query-out", "y",
		"--period", "2026-10", "--retries", "0")
	if code == 0 || !strings.Contains(stderr, `--query-in: query "x"`) || !strings.Contains(stderr, "connection refused") {
		t.Errorf("unreachable server: exit %d, %q", code, stderr)
	}
}
