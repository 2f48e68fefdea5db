package verdict

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// CheckSLA runs the table of checks in the order the reports have always
// listed them.
func TestSLAChecksKeepTheReportOrder(t *testing.T) {
	mtu := 1500
	pass := true
	s := candidates.SLA{RTTP95ms: ptr(60), Loss: ptr(0.01), JitterMs: ptr(5), LineClasses: []string{"cn2-gia"}, MaxStretch: ptr(2),
		MinPathMTU: &mtu, LineClassesByCarrier: map[string][]string{"telecom": {"cn2-gia"}}, MinThroughputMbps: ptr(100), MaxOversell: ptr(0.3)}
	q := goodRoute()
	q.Carriers = []route.UserRoute{{Carrier: "telecom", City: "Shanghai", Return: "cn2-gia", Pass: &pass}}
	var names []string
	for _, c := range CheckSLA(s, q).Checks {
		names = append(names, c.Name)
	}
	want := []string{"rtt_p95_ms", "loss", "jitter_ms", "line_class", "stretch", "min_path_mtu", "line_class:telecom", "min_throughput_mbps", "max_oversell"}
	if !slices.Equal(names, want) {
		t.Errorf("checks %q, want %q", names, want)
	}
}

// Each SLA check is one file, check_*.go, that registers one entry of the
// table: a new check is a new file, not an edit of CheckSLA.
func TestEachSLACheckIsOneFile(t *testing.T) {
	files, err := filepath.Glob("check_*.go")
	if err != nil {
		t.Fatal(err)
	}
	reg := regexp.MustCompile(`registerCheck\(`)
	n := 0
	for _, f := range files {
		if filepath.Ext(f) != ".go" || regexp.MustCompile(`_test\.go$`).MatchString(f) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if k := len(reg.FindAll(b, -1)); k != 1 {
			t.Errorf("%s registers %d checks, want 1", f, k)
		}
		n++
	}
	if n != len(SLAChecks()) || n < 8 {
		t.Errorf("%d check files, %d checks in the table", n, len(SLAChecks()))
	}
}
