package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare --plot FILE draws the users' day (RTT p95 by hour of day) of the
// bundled samples, which hold a day of probes per candidate; a name that
// is not .svg or .png is refused before the run, with exit 2 and no file.
func TestComparePlotWritesTheUsersDay(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "day.txt")
	_, stderr, code := lcRun(t, "compare", "--offline", "--plot", bad, "../../samples/candidates.yaml")
	if code != 2 || !strings.Contains(stderr, ".svg or .png") {
		t.Errorf("--plot day.txt: exit %d, %q; want 2 naming the extensions", code, stderr)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("--plot day.txt was written")
	}
	good := filepath.Join(dir, "day.svg")
	if _, stderr, code := lcRun(t, "compare", "--offline", "--plot", good, "../../samples/candidates.yaml"); code > 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "RTT p95 by hour (Asia/Shanghai)", "hk-bgp", "hk-cn2-gia", "SLA p95 60 ms"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
}
