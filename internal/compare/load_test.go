package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
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

func TestRecordedOnlyKeyForbidsLiveRuns(t *testing.T) {
	dir := writeFiles(t, map[string]string{"c.yaml": "recorded_only: true\n" + validYAML, "rec/hk.ndjson": ""})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.RecordedOnly {
		t.Fatal("recorded_only not read")
	}
	if _, err := Run(t.Context(), f, Options{}); err != candidates.ErrRecordedOnly {
		t.Fatalf("live run of a recorded_only file: err = %v, want ErrRecordedOnly", err)
	}
}

func TestLiveRunRefusesDocumentationAddresses(t *testing.T) {
	body := strings.Replace(validYAML, "{addr: 127.0.0.2}", "{addr: 198.51.100.7}", 1)
	dir := writeFiles(t, map[string]string{"c.yaml": body, "rec/hk.ndjson": ""})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), f, Options{})
	if err == nil || !strings.Contains(err.Error(), "198.51.100.7 is a documentation address") {
		t.Fatalf("err = %v, want a refusal naming 198.51.100.7", err)
	}
}
