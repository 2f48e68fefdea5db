package candidates

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/yamlmsg"
)

// writeFiles creates files (name → content) in a temp dir and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const validYAML = `vantage: {city: Shanghai}
users: [{city: Shanghai}, {city: Guangzhou}]
candidates:
  - name: hk
    provider: Example
    region: {city: Hong Kong}
    targets:
      - {addr: 127.0.0.1, protocol: icmp}
      - {addr: 127.0.0.1, protocol: tcp, port: 443}
    recorded: {probes: rec/hk.ndjson}
    offer: hk-cn2
  - name: coords
    region: {lat: 35.68, lon: 139.69}
    targets: [{addr: 127.0.0.2}]
    offer: tokyo
offers: offers.yaml
traffic: {monthly_gb: 20000, peak_mbps: 800, shape: diurnal}
fx: {base: CNY, USD: 7.10}
sla: {rtt_p95_ms: 60, loss: 0.005, jitter_ms: 5, line_classes: [cn2-gia, cu-9929, cmin2], max_stretch: 2.0}
`

func TestLoadResolvesPathsRelativeToTheYAMLFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"sub/c.yaml": validYAML, "sub/rec/hk.ndjson": "", "sub/offers.yaml": ""})
	f, err := Load(filepath.Join(dir, "sub/c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "sub/rec/hk.ndjson"); f.Candidates[0].Recorded.Probes != want {
		t.Errorf("probes = %s, want %s", f.Candidates[0].Recorded.Probes, want)
	}
	if want := filepath.Join(dir, "sub/offers.yaml"); f.Offers != want {
		t.Errorf("offers = %s, want %s", f.Offers, want)
	}
	if got := f.Candidates[1].Targets[0].Protocol; got != "icmp" {
		t.Errorf("default protocol = %q, want icmp", got)
	}
	if f.Candidates[1].Region.Lat == nil || *f.Candidates[1].Region.Lat != 35.68 {
		t.Errorf("lat/lon region not kept: %+v", f.Candidates[1].Region)
	}
	if !f.FX.Rates["USD"].Equal(decimal.RequireFromString("7.10")) || f.FX.Base != "CNY" {
		t.Errorf("fx = %+v", f.FX)
	}
	if f.Traffic.MonthlyGB != 20000 || f.Traffic.Shape != "diurnal" {
		t.Errorf("traffic = %+v", f.Traffic)
	}
	if f.SLA.MaxStretch == nil || *f.SLA.MaxStretch != 2.0 || len(f.SLA.LineClasses) != 3 {
		t.Errorf("sla = %+v", f.SLA)
	}
	if f.RecordedOnly {
		t.Error("recorded_only set without the key")
	}
}

func TestLoadErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"unknown key", [2]string{"    offer: tokyo", "    offer: tokyo\n    ofer: x"}, `c.yaml:16: unknown key "ofer"`},
		{"tcp without port", [2]string{"protocol: tcp, port: 443", "protocol: tcp"}, "c.yaml:9: candidates[0] (hk).targets[1].port: required for protocol tcp"},
		{"bad protocol", [2]string{"{addr: 127.0.0.2}", "{addr: 127.0.0.2, protocol: udp}"}, `c.yaml:14: candidates[1] (coords).targets[0].protocol: "udp": use icmp or tcp`},
		{"range as target", [2]string{"{addr: 127.0.0.2}", "{addr: 127.0.0.0/24}"}, "not a range or list"},
		{"target neither address nor name", [2]string{"{addr: 127.0.0.2}", "{addr: 'srv!.example'}"}, `c.yaml:14: candidates[1] (coords).targets[0].addr: "srv!.example" is neither an IP address nor a host name`},
		{"target with an empty label", [2]string{"{addr: 127.0.0.2}", "{addr: srv..example}"}, "is neither an IP address nor a host name"},
		{"unknown city", [2]string{"{city: Hong Kong}", "{city: Atlantis}"}, `c.yaml:6: candidates[0] (hk).region.city: "Atlantis" is not in the embedded city table`},
		{"misspelt city", [2]string{"{city: Hong Kong}", "{city: Shangai}"}, `c.yaml:6: candidates[0] (hk).region.city: "Shangai" is not in the embedded city table: did you mean Shanghai, `},
		{"infinite RTT bound", [2]string{"rtt_p95_ms: 60", "rtt_p95_ms: .inf"}, "c.yaml:19: sla.rtt_p95_ms: +Inf: must be a finite number > 0"},
		{"NaN stretch", [2]string{"max_stretch: 2.0", "max_stretch: .nan"}, "c.yaml:19: sla.max_stretch: NaN: must be a finite number > 0"},
		{"second document", [2]string{"offers: offers.yaml\n", "offers: offers.yaml\n---\nsla: {loss: 0.5}\n"}, "c.yaml:18: a second YAML document (after a --- line): a candidates file is one document"},
		{"city and coords", [2]string{"{city: Hong Kong}", "{city: Hong Kong, lat: 1, lon: 2}"}, "c.yaml:6: candidates[0] (hk).region: give either city or lat/lon"},
		{"lat out of range", [2]string{"lat: 35.68", "lat: 135.68"}, "c.yaml:13: candidates[1] (coords).region.lat: 135.68 is not within -90..90"},
		{"duplicate name", [2]string{"name: coords", "name: hk"}, `c.yaml:12: candidates[1].name: "hk" already used on line 4`},
		{"missing recording", [2]string{"rec/hk.ndjson", "rec/nope.ndjson"}, "c.yaml:4: candidates[0] (hk).recorded.probes:"},
		{"forward glob matching nothing", [2]string{"{probes: rec/hk.ndjson}", `{probes: rec/hk.ndjson, forward: "rec/fwd-*.json"}`}, `c.yaml:4: candidates[0] (hk).recorded.forward: "rec/fwd-*.json" matches no file`},
		{"return file named twice", [2]string{"{probes: rec/hk.ndjson}", `{probes: rec/hk.ndjson, return: [rec/hk.ndjson, rec/hk.ndjson]}`}, "c.yaml:4: candidates[0] (hk).recorded.return: rec/hk.ndjson is named twice"},
		{"forward not a path", [2]string{"{probes: rec/hk.ndjson}", `{probes: rec/hk.ndjson, forward: {a: b}}`}, "c.yaml:10: want a file, a glob pattern or a list of them"},
		{"no offer", [2]string{"    offer: tokyo\n", ""}, "c.yaml:12: candidates[1] (coords).offer: required"},
		{"bad loss", [2]string{"loss: 0.005", "loss: 5"}, "c.yaml:19: sla.loss: 5: a fraction 0..1"},
		{"path MTU below IPv4's minimum", [2]string{"loss: 0.005", "loss: 0.005, min_path_mtu: 40"}, "c.yaml:19: sla.min_path_mtu: 40: a packet size in bytes, 68..65535"},
		{"path MTU not a number", [2]string{"loss: 0.005", "loss: 0.005, min_path_mtu: big"}, "c.yaml:19"},
		{"bad class", [2]string{"cu-9929,", "cu9929,"}, `c.yaml:19: sla.line_classes: "cu9929": not a line class`},
		{"bad fx", [2]string{"USD: 7.10", "USD: seven"}, `c.yaml:18: fx.USD: "seven" is not a positive rate`},
		{"fx beyond the bound", [2]string{"USD: 7.10", "USD: 1e400"}, `c.yaml:18: fx.USD: "1e400" is beyond the bound of 10^15`},
		{"fx without base", [2]string{"base: CNY, ", ""}, "c.yaml:18: fx.base: required"},
		{"traffic both", [2]string{"{monthly_gb", "{log: t.csv, monthly_gb"}, "c.yaml:17: traffic: give either log or monthly_gb/peak_mbps"},
		{"traffic incomplete", [2]string{"peak_mbps: 800, ", ""}, "c.yaml:17: traffic: required: {log: FILE} or both monthly_gb and peak_mbps"},
		{"bad period", [2]string{"shape: diurnal}", "shape: diurnal, period: 2026-13}"}, `c.yaml:17: traffic.period: "2026-13": use YYYY-MM`},
		{"unknown recorded key", [2]string{"{probes: rec/hk.ndjson}", "{probe: rec/hk.ndjson}"}, `c.yaml:10: unknown key "probe"`},
		{"unknown top-level key", [2]string{"offers: offers.yaml", "offer: offers.yaml"}, "c.yaml:16: unknown key \"offer\""},
		{"yaml syntax", [2]string{"users: [{city: Shanghai}", "users: [{city: Shanghai"}, "c.yaml:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(validYAML, tc.replace[0], tc.replace[1], 1)
			if body == validYAML {
				t.Fatalf("replacement %q not found", tc.replace[0])
			}
			dir := writeFiles(t, map[string]string{"c.yaml": body, "rec/hk.ndjson": ""})
			_, err := Load(filepath.Join(dir, "c.yaml"))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
}

func TestFXConvertsByHand(t *testing.T) {
	fx := FX{Base: "CNY", Rates: map[string]decimal.Decimal{"USD": decimal.RequireFromString("7.10"), "JPY": decimal.RequireFromString("0.0475")}}
	cases := []struct{ amount, cur, want string }{
		{"1234.56", "USD", "8765.376"},  // 1234.56 × 7.10
		{"12345.67", "CNY", "12345.67"}, // base: unchanged
		{"150000", "JPY", "7125"},       // 150000 × 0.0475
		{"0.01", "USD", "0.071"},
	}
	for _, c := range cases {
		gotM, err := fx.Convert(billing.MoneyOf(decimal.RequireFromString(c.amount), c.cur))
		if err != nil {
			t.Fatal(err)
		}
		if got := gotM.Amount; gotM.Currency != "CNY" || !got.Equal(decimal.RequireFromString(c.want)) {
			t.Errorf("%s %s = %s CNY, want %s", c.amount, c.cur, got, c.want)
		}
	}
	if _, err := fx.Convert(billing.MoneyOf(decimal.NewFromInt(1), "EUR")); err == nil || !strings.Contains(err.Error(), "no rate for EUR") {
		t.Errorf("missing rate: err = %v", err)
	}
}

// serve --config /dev/zero grew to gigabytes: the candidates file has the
// configuration size limit.
func TestLoadStopsAtTheSizeLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := Load("/dev/zero"); !errors.Is(err, yamlmsg.ErrTooLarge) {
		t.Errorf("Load(/dev/zero): %v, want the size limit", err)
	}
}

// The SLA's jitter key is jitter_ms (the mean |D| of consecutive RTTs); the
// old name jitter_rfc3550_ms is read as it with a warning that names the
// file, the key's line and the new key; both at once is an error (issue 35).
func TestSLAJitterKeyRenamed(t *testing.T) {
	load := func(t *testing.T, sla string) (*File, error) {
		t.Helper()
		body := strings.Replace(validYAML, "sla: {rtt_p95_ms: 60, loss: 0.005, jitter_ms: 5, line_classes: [cn2-gia, cu-9929, cmin2], max_stretch: 2.0}\n", sla, 1)
		dir := writeFiles(t, map[string]string{"c.yaml": body, "rec/hk.ndjson": "", "offers.yaml": ""})
		return Load(filepath.Join(dir, "c.yaml"))
	}
	t.Run("new key, no warning", func(t *testing.T) {
		f, err := load(t, "sla:\n  rtt_p95_ms: 60\n  jitter_ms: 4.5\n")
		if err != nil {
			t.Fatal(err)
		}
		if f.SLA.JitterMs == nil || *f.SLA.JitterMs != 4.5 || len(f.Warnings) != 0 {
			t.Errorf("jitter %v, warnings %q", f.SLA.JitterMs, f.Warnings)
		}
	})
	t.Run("old key, read with a warning", func(t *testing.T) {
		f, err := load(t, "sla:\n  rtt_p95_ms: 60\n  jitter_rfc3550_ms: 4.5\n")
		if err != nil {
			t.Fatal(err)
		}
		if f.SLA.JitterMs == nil || *f.SLA.JitterMs != 4.5 {
			t.Errorf("jitter %v, want 4.5", f.SLA.JitterMs)
		}
		// sla: is line 19 of validYAML, so the old key is on line 21.
		want := "c.yaml:21: sla.jitter_rfc3550_ms is now jitter_ms (the figure is the mean |D| between consecutive RTTs, not RFC 3550's smoothed estimator); read as jitter_ms"
		if len(f.Warnings) != 1 || !strings.HasSuffix(f.Warnings[0], want) {
			t.Errorf("warnings %q, want one ending %q", f.Warnings, want)
		}
	})
	t.Run("both keys", func(t *testing.T) {
		_, err := load(t, "sla:\n  jitter_ms: 4\n  jitter_rfc3550_ms: 5\n")
		if err == nil || !strings.Contains(err.Error(), "c.yaml:21: sla.jitter_rfc3550_ms and sla.jitter_ms both given") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("old key must still be > 0", func(t *testing.T) {
		_, err := load(t, "sla:\n  jitter_rfc3550_ms: -1\n")
		if err == nil || !strings.Contains(err.Error(), "sla.jitter_ms: -1: must be a finite number > 0") {
			t.Errorf("err %v", err)
		}
	})
}
