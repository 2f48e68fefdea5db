package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lcRun runs `linecheck args...` in a child process (flags are package state)
// and returns stdout, stderr and the exit code.
func lcRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), stderr.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// candidatesWith copies the bundled candidates file beside the sample
// recordings with one line replaced, so that relative paths still resolve.
func candidatesWith(t *testing.T, old, new string) string {
	t.Helper()
	b, err := os.ReadFile("../../samples/candidates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("samples/candidates.yaml no longer holds %q", old)
	}
	abs, err := filepath.Abs("../../samples")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), old, new, 1)
	s = strings.ReplaceAll(s, "rec/", abs+"/rec/")
	s = strings.Replace(s, "offers: offers.yaml", "offers: "+abs+"/offers.yaml", 1)
	s = strings.Replace(s, "log: traffic/", "log: "+abs+"/traffic/", 1)
	return writeFile(t, "c.yaml", s)
}

func TestBadInputNamesFileLineAndExitsTwo(t *testing.T) {
	offers := func(body string) string { return writeFile(t, "offers.yaml", body) }
	cases := []struct {
		name string
		args []string
		want []string
	}{
		// A period of millions of years once built its 5-minute grid until the
		// kernel killed the process; unix seconds past year 9999 wrapped.
		{"bill: a --from/--to range of millennia", []string{"bill", sampleCSV, "--from", "0", "--to", "99999999999999"},
			[]string{"--to", "unix seconds outside"}},
		{"bill: a --from/--to range of decades", []string{"bill", sampleCSV, "--from", "2000-01-01", "--to", "2026-01-01"},
			[]string{"longer than a billing period can be", "--period all"}},
		{"offers: YAML syntax error", []string{"bill", sampleCSV, "--offers", offers("offers: [\n")},
			[]string{"offers.yaml:1: did not find expected node content"}},
		{"offers: a mapping where the list goes", []string{"bill", sampleCSV, "--offers", offers("currency: CNY\noffers: {}\n")},
			[]string{"offers.yaml:2: want a list, got a mapping"}},
		{"offers: empty file", []string{"bill", sampleCSV, "--offers", offers("")},
			[]string{"offers.yaml:1: empty file"}},
		{"offers: zero exchange rate", []string{"bill", sampleCSV, "--offers", offers("compare_currency: CNY\nexchange_rates: {USD: \"0\"}\noffers:\n  - name: a\n    currency: USD\n    bandwidth: {scheme: fixed, price: \"10\", port_mbps: 100}\n")},
			[]string{"offers.yaml:4:", `exchange_rates: USD "0" is not a positive rate`}},
		{"bill: period outside the log", []string{"bill", sampleCSV, "--period", "2025-01"},
			[]string{"2026-10.csv:1:", "requested period 2025-01-01T00:00:00Z .. 2025-02-01T00:00:00Z"}},
		{"vnstat: text where a number goes", []string{"bill", writeFile(t, "v.json", `{"vnstatversion":"2.10","jsonversion":"2","interfaces":[{"name":"eth0","traffic":{"fiveminute":[{"date":{"year":2026,"month":10,"day":1},"time":{"hour":0,"minute":0},"rx":"x","tx":1}]}}]}`)},
			[]string{"v.json:1:", `want a number, got "x"`}},
		{"bill: every row a gap", []string{"bill", writeFile(t, "nan.csv", "time,in,out\n2026-10-01T00:00:00Z,NaN,NaN\n")},
			[]string{"nan.csv: no traffic samples: every row is a gap"}},
		{"candidates: text where a number goes", []string{"compare", "--offline", candidatesWith(t, "rtt_p95_ms: 60", "rtt_p95_ms: 60ms")},
			[]string{"c.yaml:61: want a number, got \"60ms\""}},
		{"candidates: unknown top-level key", []string{"compare", "--offline", candidatesWith(t, "\ncandidates:", "\ncandidate:")},
			[]string{`c.yaml:14: unknown key "candidate"`}},
		{"compare without a file", []string{"compare", "--offline"}, []string{"compare takes one CANDIDATES.yaml, got none", "linecheck compare --help"}},
		{"compare with two files", []string{"compare", "--offline", "a.yaml", "b.yaml"}, []string{"got 2: a.yaml b.yaml"}},
		{"tui: unknown sort column", []string{"tui", "--offline", "--sort", "foo", "../../samples/candidates.yaml"}, []string{`--sort "foo": use one of name, line, rtt,`}},
		{"tui: speed not above 0", []string{"tui", "--offline", "--speed", "0", "../../samples/candidates.yaml"}, []string{"--speed 0: want a finite factor above 0"}},
		{"compare: no probes", []string{"compare", "--count", "0", "../../samples/candidates.yaml"}, []string{"--count 0: must be at least 1"}},
		{"compare: no trace cycles", []string{"compare", "--cycles", "0", "../../samples/candidates.yaml"}, []string{"--cycles 0: must be at least 1"}},
		{"compare: zero interval", []string{"compare", "--interval", "0", "../../samples/candidates.yaml"}, []string{"both must be positive"}},
		{"tui: zero interval", []string{"tui", "--interval", "0", "../../samples/candidates.yaml"}, []string{"--interval 0s: must be positive"}},
		{"tui: zero bw-time", []string{"tui", "--bw-time", "0", "../../samples/candidates.yaml"}, []string{"--bw-time 0s: must be positive"}},
		{"tui: bw-every shorter than a test", []string{"tui", "--bw-every", "5s", "../../samples/candidates.yaml"},
			[]string{"--bw-every 5s is shorter than one test (--bw-time 5s and 1s of warm-up)"}},
		{"tui: bw flags offline", []string{"tui", "--offline", "--bw-every", "1h", "../../samples/candidates.yaml"},
			[]string{"--offline replays recorded.bw and runs no throughput test, so --bw-every would be ignored"}},
		{"tui: multipath offline", []string{"tui", "--offline", "--multipath", "../../samples/candidates.yaml"},
			[]string{"--offline replays the recordings and traces nothing, so --multipath would be ignored"}},
		{"candidates: empty file", []string{"compare", "--offline", writeFile(t, "c.yaml", "")},
			[]string{"c.yaml:1: empty file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := lcRun(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty on bad input: %q", out)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			for _, goism := range []string{"panic", "goroutine", "float64", "[]*", "cannot unmarshal", "EOF", "Number"} {
				if strings.Contains(errs, goism) {
					t.Errorf("stderr %q shows Go internals (%q)", errs, goism)
				}
			}
		})
	}
}

// TestFloatFlagsRefuseNaNInfinityAndTinyRates: a float flag compared only
// with `<= 0` let NaN through (every comparison with NaN is false), and a
// --rate of 1e-300 overflowed the wait between probes. Each is refused
// with exit 2 before anything is sent; 127.0.0.1 is the only target named.
func TestFloatFlagsRefuseNaNInfinityAndTinyRates(t *testing.T) {
	t.Parallel()
	targets := writeFile(t, "targets.yaml", "targets:\n  - {name: a, carrier: telecom, city: X, addr: 127.0.0.1}\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"ping", "-c", "1", "--rate", "NaN", "127.0.0.1"}, "--rate NaN: give packets per second, 0.01"},
		{[]string{"ping", "-c", "1", "--rate", "1e-300", "127.0.0.1"}, "--rate 1e-300:"},
		{[]string{"ping", "-c", "1", "--rate", "Inf", "127.0.0.1"}, "--rate +Inf:"},
		{[]string{"trace", "-c", "1", "--rate", "NaN", "127.0.0.1"}, "--rate NaN:"},
		{[]string{"trace", "-c", "1", "--rate", "0.001", "127.0.0.1"}, "--rate 0.001:"},
		{[]string{"ping", "--watch", "--journal", "x.journal", "-c", "1", "--rate", "NaN", "127.0.0.1"}, "--rate NaN:"},
		{[]string{"serve", "--config", "c.yaml", "--rate", "1e-9"}, "--rate 1e-09:"},
		{[]string{"serve", "--config", "c.yaml", "--resolve-rate", "NaN"}, "--resolve-rate must be positive"},
		{[]string{"backtrace", "--targets", targets, "--rate", "NaN"}, "--rate NaN:"},
		{[]string{"bw", "--report", "--journal", "x.journal", "--floor", "100M", "--share", "NaN"}, "--share NaN:"},
		{[]string{"tui", "--fixture", "--speed", "NaN"}, "--speed NaN:"},
		{[]string{"tui", "--fixture", "--speed", "Inf"}, "--speed +Inf:"},
		{[]string{"bill", "x.csv", "--scale", "NaN"}, "--scale NaN:"},
	}
	for _, tc := range cases {
		stdout, stderr, code := lcRun(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("linecheck %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if strings.Contains(stdout, "sent") || strings.Contains(stdout, "TTL") {
			t.Errorf("linecheck %s: printed a result: %q", strings.Join(tc.args, " "), stdout)
		}
	}
}
