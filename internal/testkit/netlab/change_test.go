package netlab

import (
	"slices"
	"testing"
	"time"
)

// TestTUNLinkChangesAtItsTime: a wire clean until a scheduled time and
// then 80 ms and 50 % loss (Config.Change). Pings before the time cross
// it undelayed and none is lost on it; pings after it are never faster
// than 80 ms (the wire delays, it cannot hurry), and the wire's own
// count of what it dropped is exactly what ping lost. The bounds (a clean
// RTT far under 80 ms, ±15 points around 50 %) hold on a loaded machine.
func TestTUNLinkChangesAtItsTime(t *testing.T) {
	t.Parallel()
	RequireRoot(t)
	// The wire is built first: the change is due 6 s after the clock is
	// read, and building it may take longer than that on a loaded machine.
	if _, err := tunlinkBinary(); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(6 * time.Second)
	l := UpForTest(t, Config{Prefix: "lcnlch", Hops: 1, TUNLink: 1, Seed: 5,
		Change: &Change{At: at, Delay: 80 * time.Millisecond, Loss: 0.5}})
	ping := func() PingResult {
		t.Helper()
		p, err := PingOutput(run(t, l.Exec(l.Client(), "ping", "-n", "-c", "100", "-i", "0.01", "-W", "2", l.ServerAddr(false)), true))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := ping()
	if !time.Now().Before(at) {
		t.Skipf("the first ping ended after the change (%s late): the machine is too slow for this test", time.Since(at))
	}
	c, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	if before.Sent != 100 || before.Recv != 100 || c.Lost != 0 {
		t.Errorf("before the change: %d of %d received, the wire dropped %d; want 100 of 100 and none", before.Recv, before.Sent, c.Lost)
	}
	if m := median(before.RTTs); m >= 40 {
		t.Errorf("before the change: median RTT %.2f ms, want far under the 80 ms to come", m)
	}
	time.Sleep(time.Until(at) + 100*time.Millisecond)
	after := ping()
	c2, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	lost := after.Sent - after.Recv
	if lost < 35 || lost > 65 || c2.Lost-c.Lost != lost {
		t.Errorf("after the change: ping lost %d of %d, the wire dropped %d; want 50 ± 15 and the same", lost, after.Sent, c2.Lost-c.Lost)
	}
	if len(after.RTTs) == 0 || slices.Min(after.RTTs) < 80 {
		t.Errorf("after the change: RTTs %v, want none under 80 ms", after.RTTs)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
