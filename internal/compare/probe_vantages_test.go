package compare

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
)

// recorded.probes may be a RIPE Atlas ping result list: the candidate's
// target gets the probes of every vantage (probe 2001's two runs, 2002's
// run with an error entry, 2003's run with no answer), and a warning names
// the vantages. By hand from testdata/atlas-ping.json: probes sent 4+4
// (2001) + 2 (2002; the error entry sent nothing) + 3 (2003) = 13;
// answered in time 3+2 + 2 + 0 = 7 (the late answer and the duplicate are
// not); RTTs sorted 181.907 182.412 183.125 185.0 190.25 199.75 201.5: the
// nearest-rank p50 is rank ceil(3.5) = 4, 185.0; p95 rank ceil(6.65) = 7,
// 201.5.
func TestRecordedProbesFromAtlasPing(t *testing.T) {
	probes, err := filepath.Abs("../pingfile/testdata/atlas-ping.json")
	if err != nil {
		t.Fatal(err)
	}
	yml := `candidates:
  - name: hk
    targets: [{addr: 130.94.10.1, protocol: icmp}]
    recorded: {probes: PROBES}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(strings.ReplaceAll(yml, "PROBES", probes)), 0o644)
	f, err := candidates.LoadWith(path, candidates.LoadOptions{TargetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Replay(&f.Candidates[0])
	if err != nil {
		t.Fatal(err)
	}
	r := m.Targets[0]
	if r.Sent != 13 || r.Recv != 7 || r.Late != 1 || r.Duplicates != 1 {
		t.Errorf("sent/recv/late/dup %d/%d/%d/%d, want 13/7/1/1", r.Sent, r.Recv, r.Late, r.Duplicates)
	}
	if math.Abs(r.Loss-6.0/13) > 1e-12 || r.RTT.P50 != 185.0 || r.RTT.P95 != 201.5 || r.RTT.Min != 181.907 {
		t.Errorf("loss %v p50 %v p95 %v min %v", r.Loss, r.RTT.P50, r.RTT.P95, r.RTT.Min)
	}
	if w := strings.Join(m.Warnings, "\n"); !strings.Contains(w, "recorded.probes holds 3 vantages (ripe-atlas 2001, ripe-atlas 2002, ripe-atlas 2003)") {
		t.Errorf("warnings %q", w)
	}
	// The TUI's replay reads the same stream, in time order.
	s, err := OpenSession(f, SessionOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Candidates[0].Stream
	if len(st) != 14 {
		t.Fatalf("stream of %d records, want 14 (13 probes and a duplicate)", len(st))
	}
	for i := 1; i < len(st); i++ {
		if st[i].Time.Before(st[i-1].Time) {
			t.Fatalf("record %d out of time order", i)
		}
	}
}
