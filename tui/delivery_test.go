package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The TUI judges a recorded delivery as compare does (compare.EvaluateDelivery):
// hk-cn2-gia delivered as 2 × H100 NVL against an order for 8 × H100 SXM5
// fails, ranks with the failing even with its SLA passing, is never the
// cheapest pass, and its detail line says the delivery fails.
func TestFailedDeliveryFailsTheRow(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Skip("samples not present")
	}
	dir, err := filepath.Abs("../internal/gpu/testdata/h100-nvl-2x")
	if err != nil {
		t.Fatal(err)
	}
	old := "probes: rec/hk-cn2-gia-ping.ndjson}"
	s := strings.Replace(string(b), old, strings.TrimSuffix(old, "}")+", gpu: "+dir+"}\n    gpu: {count: 8, model: H100 SXM5}\n", 1)
	f, err := candidates.ParseWith([]byte(s), samplesFile, LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	feed, err := FeedFromCompare(f, FeedOptions{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 120, Height: 40, NoColor: true})
	var hk *Candidate
	for _, c := range m.cands {
		if c.Name == "hk-cn2-gia" {
			hk = c
		}
	}
	if hk == nil || strings.Join(hk.DeliveryFailed, ",") != "gpu" {
		t.Fatalf("hk-cn2-gia delivery failed: %+v", hk)
	}
	// Its line passing (as it does in the samples once warmed up) does not
	// make it pass.
	hk.SLA = verdict.Verdict{Pass: true, Checks: []verdict.Check{{Name: "rtt_p95_ms", Pass: true}}}
	if rankKey(hk).Pass {
		t.Error("rank key passes a failed delivery")
	}
	if m.cheapestPassing() == "hk-cn2-gia" {
		t.Error("a failed delivery is the cheapest pass")
	}
	m.selected, m.moved = "hk-cn2-gia", true
	if frame := plain(m); !strings.Contains(frame, "delivery FAIL (gpu)") {
		t.Errorf("the detail line does not say the delivery fails:\n%s", frame)
	}
}
