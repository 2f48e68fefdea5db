package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// tuiLabTable makes the lab's router links stand in for CN2 backbone ranges
// and the server's link for a Shanghai Telecom access range, so that the
// live route has a line class to find.
const tuiLabTable = "10.77.1.0/24\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for 59.43.0.0/16\n" +
	"10.77.2.0/24\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for 59.43.0.0/16\n" +
	"10.77.3.0/24\t4812\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in for a Shanghai Telecom access range\n"

// TestEndToEndLiveLab runs `linecheck tui` live in the client namespace of a
// lab (client → r1 → r2 → r3 → server 10.77.3.2; prefix lctui), in tmux:
// the route screen shows every hop of the live route with its address, and
// the line class the live trace gives (cn2-gia by the lab's prefix table)
// is validated forward only, as the overview says. Run it under the lab
// lock: flock /tmp/lc-lab.lock go test ./tui -run Lab.
func TestEndToEndLiveLab(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: lab test skipped")
	}
	netlab.RequireRoot(t)
	needTmux(t)
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lctui", Hops: 3})
	bin := testbin.Linecheck(t)
	dir := t.TempDir()
	table := filepath.Join(dir, "prefixes.tsv")
	file := filepath.Join(dir, "lab.yaml")
	yaml := fmt.Sprintf(`candidates:
  - name: lab-server
    targets: [{addr: %s, protocol: icmp}]
sla: {line_classes: [cn2-gia]}
`, lab.ServerAddr(false))
	for p, text := range map[string]string{table: tuiLabTable, file: yaml} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("linecheck-tui-e2e-lab-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	script := fmt.Sprintf(`ip netns exec %s %s tui --no-color --interval 200ms --prefix-table %s %s; echo "EXIT=$?"; sleep 60`,
		lab.Client(), bin, table, file)
	s.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "30", "sh", "-c", script)

	screen := s.waitFor("live overview", "lab-server", "cn2-gia→", "0 errors")
	if !strings.Contains(screen, "✓ class cn2-gia") {
		t.Errorf("the line class check does not pass on the live route:\n%s", screen)
	}
	s.tmux("send-keys", "-t", "e2e", "Enter")
	hops := lab.RouterAddrs(false) // r1, r2, r3, then the server
	want := []string{"forward → " + lab.ServerAddr(false) + " icmp · reached", "line cn2-gia"}
	for i, a := range hops {
		want = append(want, fmt.Sprintf("%5d %s", i+1, a))
	}
	screen = s.waitFor("route screen with every hop", want...)
	for _, l := range strings.Split(screen, "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[0] == "1" && f[4] != "0%" {
			t.Errorf("hop 1 shows loss on a lossless lab: %q", l)
		}
	}
	s.tmux("send-keys", "-t", "e2e", "q")
	if screen = s.waitFor("exit", "EXIT="); !strings.Contains(screen, "EXIT=0") {
		t.Errorf("q did not exit 0:\n%s", screen)
	}
}
