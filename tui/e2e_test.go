package tui

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
)

// TestMain removes the binary the end-to-end tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getuid() == 0 {
			t.Fatal("tmux is missing (as root the test must run: apt-get install tmux)")
		}
		t.Skip("tmux is not installed and not root: end-to-end TUI test skipped")
	}
}

// tmuxSession runs one command in a detached tmux session on a private
// server (its own socket), so nothing else's sessions are touched.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) capture() string { return s.tmux("capture-pane", "-p", "-t", "e2e") }

// waitFor polls the pane until every want is on it.
func (s *tmuxSession) waitFor(step string, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var screen string
	for time.Now().Before(deadline) {
		screen = s.capture()
		ok := true
		for _, w := range want {
			if !strings.Contains(screen, w) {
				ok = false
				break
			}
		}
		if ok {
			return screen
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("%s: the screen never showed %q:\n%s", step, want, screen)
	return ""
}

func TestEndToEndInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: end-to-end TUI test skipped")
	}
	needTmux(t)
	bin := testbin.Linecheck(t)
	args := "tui --offline --speed 600 ../samples/candidates.yaml"
	first := "hk-cn2-gia"
	if _, err := os.Stat("../samples/candidates.yaml"); err != nil {
		args, first = "tui --fixture --speed 5", "hk-cn2-gia"
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("linecheck-tui-e2e-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	// After the UI exits, the shell prints the exit code and the terminal
	// modes, so the test can see that the terminal was restored.
	script := fmt.Sprintf(`printf 'before the UI\n'; %s %s; echo "EXIT=$?"; stty -a | tr ' ;' '\n\n' | grep -E '^-?(icanon|echo|isig)$' | tr '\n' ' '; echo MODES; sleep 60`, bin, args)
	s.tmux("new-session", "-d", "-s", "e2e", "-x", "100", "-y", "30", "sh", "-c", script)

	screen := s.waitFor("overview", "CANDIDATE", first, "MONTHLY", "?:help")
	if !strings.Contains(screen, "probes") {
		t.Errorf("no status line with probe counts:\n%s", screen)
	}
	if !strings.Contains(screen, "FIXED") {
		t.Errorf("the scheme columns are missing at 100×30:\n%s", screen)
	}
	// Resizing re-lays the columns: at 80 the sparkline, stretch and
	// jitter give way (the detail line keeps their checks), the cost
	// columns stay.
	s.tmux("resize-window", "-t", "e2e", "-x", "80", "-y", "24")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(s.capture(), "RECENT") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	screen = s.waitFor("overview at 80×24", "CANDIDATE", first, "MONTHLY", "?:help")
	if strings.Contains(screen, "RECENT") || !strings.Contains(screen, "FIXED") || !strings.Contains(screen, "95TH") {
		t.Errorf("after resizing to 80×24: want the cost columns kept, the sparkline gone:\n%s", screen)
	}
	s.tmux("resize-window", "-t", "e2e", "-x", "100", "-y", "30")
	s.waitFor("overview back at 100×30", "RECENT")
	s.tmux("send-keys", "-t", "e2e", "Enter")
	s.waitFor("route detail", "HOP", "ADDRESS", "NETWORK", "RTT to "+first)
	s.tmux("send-keys", "-t", "e2e", "?")
	s.waitFor("help", "quit (from any screen)", "icmp-rate-limited")
	s.tmux("send-keys", "-t", "e2e", "Escape")
	s.waitFor("back to the route", "HOP", "ADDRESS")
	s.tmux("send-keys", "-t", "e2e", "c")
	s.waitFor("cost detail", "SCHEME", "TOTAL")
	s.tmux("send-keys", "-t", "e2e", "q")
	screen = s.waitFor("exit", "EXIT=", "MODES")
	if !strings.Contains(screen, "EXIT=0") {
		t.Errorf("q did not exit 0:\n%s", screen)
	}
	if !strings.Contains(screen, "before the UI") || strings.Contains(screen, "CANDIDATE") {
		t.Errorf("the alternate screen was not left on exit:\n%s", screen)
	}
	modes := map[string]bool{}
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), "MODES") {
			for _, f := range strings.Fields(l) {
				modes[f] = true
			}
		}
	}
	for _, mode := range []string{"icanon", "echo", "isig"} {
		if !modes[mode] {
			t.Errorf("terminal mode %s not restored after exit (modes %v):\n%s", mode, modes, screen)
		}
	}
}

func TestEndToEndCtrlCFromCostScreen(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: end-to-end TUI test skipped")
	}
	needTmux(t)
	bin := testbin.Linecheck(t)
	s := &tmuxSession{t: t, socket: fmt.Sprintf("linecheck-tui-e2e-c-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	script := fmt.Sprintf(`%s tui --fixture --speed 5 --no-color; echo "EXIT=$?"; stty -a | tr ' ;' '\n\n' | grep -E '^-?(icanon|echo)$' | tr '\n' ' '; echo MODES; sleep 60`, bin)
	s.tmux("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", "sh", "-c", script)
	s.waitFor("overview at 80×24", "CANDIDATE", "hk-cn2-gia", "MONTHLY")
	s.tmux("send-keys", "-t", "e2e", "c")
	s.waitFor("cost detail", "SCHEME", "TOTAL")
	s.tmux("send-keys", "-t", "e2e", "C-c")
	screen := s.waitFor("exit", "EXIT=", "MODES")
	if !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, "icanon echo") {
		t.Errorf("ctrl+c did not quit with exit 0 and the terminal restored:\n%s", screen)
	}
}

func TestOffTerminalRefuses(t *testing.T) {
	bin := testbin.Linecheck(t)
	cmd := exec.Command(bin, "tui", "--offline", "../samples/candidates.yaml")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("off a terminal: %v, want exit 2", err)
	}
	for _, want := range []string{"needs a terminal", "linecheck compare"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

// TestEndToEndLiveLoopback runs `linecheck tui` live (not replayed) on a
// candidates file whose targets are loopback addresses, in tmux: both
// candidates are pinged (ICMP and TCP to a listener this test opens) and
// traced continuously; the status bar shows no error; the route screen shows
// the hop with counts that grow as cycles complete; the rows are in
// compare's ranking order.
func TestEndToEndLiveLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: end-to-end TUI test skipped")
	}
	if os.Getuid() != 0 {
		t.Skip("live tracing needs raw sockets: run as root")
	}
	needTmux(t)
	bin := testbin.Linecheck(t)
	port := testbin.TCPListener(t)
	samples, err := filepath.Abs("../samples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Both fail the SLA (a loopback route has no premium line class) and
	// both are measured, so the ranking is by monthly cost: lo-b's offer
	// hk-bgp (128,064.00 CNY) before lo-a's hk-cn2 (144,691.54 CNY), the
	// reverse of the file and name order.
	yaml := fmt.Sprintf(`vantage: {city: Shanghai}
candidates:
  - name: lo-a
    provider: Local A
    region: {city: Hong Kong}
    targets:
      - {addr: 127.0.0.2, protocol: icmp}
      - {addr: 127.0.0.1, protocol: tcp, port: %d}
    offer: hk-cn2
  - name: lo-b
    provider: Local B
    region: {city: Hong Kong}
    targets:
      - {addr: 127.0.0.3, protocol: icmp}
    offer: hk-bgp
offers: %s/offers.yaml
traffic: {log: %s/traffic/2026-10.csv}
fx: {base: CNY, USD: 7.10}
sla: {rtt_p95_ms: 60, loss: 0.005, line_classes: [cn2-gia]}
`, port, samples, samples)
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("linecheck-tui-e2e-live-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	script := fmt.Sprintf(`%s tui --no-color --interval 200ms %s; echo "EXIT=$?"; sleep 60`, bin, file)
	s.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "30", "sh", "-c", script)

	screen := s.waitFor("live overview", "CANDIDATE", "lo-a", "lo-b", " live ", "traces · 0 errors")
	// The first trace cycles land a moment after the first pings (the loops
	// pace themselves); wait until the status bar counts some, so that the
	// route line is judged once traces exist, not before.
	tracesRE := regexp.MustCompile(`· ([1-9][0-9]*) traces · 0 errors`)
	for deadline := time.Now().Add(15 * time.Second); !tracesRE.MatchString(screen) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		screen = s.capture()
	}
	if !tracesRE.MatchString(screen) {
		t.Fatalf("no trace cycle completed in 15 s on loopback:\n%s", screen)
	}
	rowsOf := func(screen string) map[string]int {
		rows := map[string]int{}
		for i, l := range strings.Split(screen, "\n") {
			for _, n := range []string{"lo-a", "lo-b"} {
				if f := strings.Fields(strings.TrimPrefix(l, "›")); len(f) > 0 && f[0] == n && rows[n] == 0 {
					rows[n] = i // the table row, not the detail block below
				}
			}
		}
		return rows
	}
	// Once both are measured (until then a measured row ranks first), the
	// order is the ranking's.
	deadline := time.Now().Add(15 * time.Second)
	rows := rowsOf(screen)
	for (rows["lo-b"] == 0 || rows["lo-a"] <= rows["lo-b"]) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		screen = s.capture()
		rows = rowsOf(screen)
	}
	if rows["lo-b"] == 0 || rows["lo-a"] <= rows["lo-b"] {
		t.Errorf("rows not in ranking order (lo-b, cheaper, first; both fail): %v\n%s", rows, screen)
	}
	for _, bad := range []string{"at most", "forward not traced", "tracing…", "error:"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the live overview says %q:\n%s", bad, screen)
		}
	}
	// The cursor is on the top row, lo-b: its route screen.
	s.tmux("send-keys", "-t", "e2e", "Enter")
	screen = s.waitFor("route screen", "HOP", "ADDRESS", "forward → 127.0.0.3 icmp · reached", "    1 127.0.0.3")
	sent := func(screen string) int {
		for _, l := range strings.Split(screen, "\n") {
			if f := strings.Fields(l); len(f) > 5 && f[0] == "1" && f[1] == "127.0.0.3" {
				n, err := strconv.Atoi(f[5])
				if err == nil {
					return n
				}
			}
		}
		return -1
	}
	first := sent(screen)
	if first < 1 {
		t.Fatalf("hop 1 has no SNT count:\n%s", screen)
	}
	deadline = time.Now().Add(15 * time.Second)
	for sent(screen) < first+2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		screen = s.capture()
	}
	if n := sent(screen); n < first+2 {
		t.Errorf("hop 1 sent %d then %d: the trace does not go on cycle after cycle:\n%s", first, n, screen)
	}
	if strings.Contains(screen, "errors:") || !strings.Contains(screen, "0 errors") {
		t.Errorf("the status bar reports an error on a healthy loopback target:\n%s", screen)
	}
	s.tmux("send-keys", "-t", "e2e", "q")
	if screen = s.waitFor("exit", "EXIT="); !strings.Contains(screen, "EXIT=0") {
		t.Errorf("q did not exit 0:\n%s", screen)
	}
}

// TestEndToEndLiveThroughput runs `linecheck tui` live in tmux on a
// candidate with a bandwidth_test at our iperf3-protocol server on
// loopback: after the first ping round the status line says it measures,
// then THRU shows a figure and the thru check passes; b measures again.
func TestEndToEndLiveThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: end-to-end TUI test skipped")
	}
	if os.Getuid() != 0 {
		t.Skip("live tracing needs raw sockets: run as root")
	}
	needTmux(t)
	bin := testbin.Linecheck(t)
	tcp, bwPort := testbin.TCPListener(t), bwtest.Server(t)
	file := filepath.Join(t.TempDir(), "bw.yaml")
	yaml := fmt.Sprintf(`candidates:
  - name: lo-bw
    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]
    bandwidth_test: {addr: 127.0.0.1, port: %d}
sla: {min_throughput_mbps: 1}
`, tcp, bwPort)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("linecheck-tui-e2e-bw-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	script := fmt.Sprintf(`%s tui --no-color --interval 200ms --bw-time 3s %s; echo "EXIT=$?"; sleep 60`, bin, file)
	s.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "30", "sh", "-c", script)
	s.waitFor("live overview", "CANDIDATE", "THRU", "lo-bw")
	s.waitFor("the test under way", "measuring throughput of lo-bw: download 3s")
	row := regexp.MustCompile(`lo-bw .* ([0-9]+) (pass|wait|FAIL)`)
	screen := s.waitFor("the figure", "✓ thru")
	m := row.FindStringSubmatch(screen)
	if m == nil || strings.Contains(screen, "measuring throughput") || strings.Contains(screen, "errors:") {
		t.Fatalf("after the test: no THRU figure on the row, or a warning:\n%s", screen)
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 {
		t.Errorf("THRU %s Mbit/s on loopback:\n%s", m[1], screen)
	}
	s.tmux("send-keys", "-t", "e2e", "b")
	s.waitFor("b: measured again", "measuring throughput of lo-bw")
	s.tmux("send-keys", "-t", "e2e", "q")
	if screen = s.waitFor("exit", "EXIT="); !strings.Contains(screen, "EXIT=0") {
		t.Errorf("q did not exit 0:\n%s", screen)
	}
}
