package compare

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/internal/verdict"
)

// TestLiveCompareUnprivilegedICMPTargetReadsNoData runs live compare as uid
// 65534 without any capability, in a network namespace of its own (only its
// loopback) whose net.ipv4.ping_group_range admits no group, so that no ICMP
// socket can be opened, as on a stock Debian host. One candidate's ICMP
// target must read no data, with the two fixes (setcap, the sysctl line),
// and the other candidate, probed by TCP connect to a listener on the same
// loopback, must still be measured, judged and recommended: the run ends in
// a verdict (exit 0) rather than aborting (exit 2, issue 35).
func TestLiveCompareUnprivilegedICMPTargetReadsNoData(t *testing.T) {
	netlab.RequireRoot(t)
	for _, tool := range []string{"unshare", "setpriv", "ip", "sysctl", "/usr/bin/python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing", tool)
		}
	}
	dir, err := os.MkdirTemp("", "lc-unpriv-compare-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "linecheck")
	copyFile(t, testbin.Linecheck(t), bin, 0o755)
	cands := `vantage: {city: Hong Kong}
candidates:
  - name: icmp-only
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.1, protocol: icmp}]
    offer: near-offer
  - name: tcp-only
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.1, protocol: tcp, port: 8443}]
    offer: near-offer
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla: {rtt_p95_ms: 50, loss: 0.05}
`
	for name, body := range map[string]string{"c.yaml": cands, "offers.yaml": labOffers} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The listener runs as root in the namespace; compare runs as nobody.
	script := `set -e
ip link set lo up
sysctl -qw net.ipv4.ping_group_range="1 0"
/usr/bin/python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8443)); s.listen(64)
while True:
    c, _ = s.accept(); c.close()
' &
lpid=$!
for i in $(seq 50); do /usr/bin/python3 -c 'import socket; socket.create_connection(("127.0.0.1", 8443), 1).close()' 2>/dev/null && break; sleep 0.1; done
rc=0
setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$1" compare --format json --count 5 --interval 20ms --timeout 500ms "$2" || rc=$?
kill $lpid
exit $rc
`
	cmd := exec.Command("unshare", "-n", "sh", "-c", script, "sh", bin, filepath.Join(dir, "c.yaml"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d, want 0 (tcp-only passes and is recommended)\nstderr: %s\nstdout: %s", code, stderr.String(), out)
	}
	var doc struct {
		Recommended string `json:"recommended"`
		Candidates  []struct {
			Name     string   `json:"name"`
			Warnings []string `json:"warnings"`
			Targets  []struct {
				Sent int `json:"sent"`
				Recv int `json:"recv"`
			} `json:"targets"`
			SLA struct {
				Checks []struct {
					Name     string `json:"name"`
					Measured any    `json:"measured"`
					Pass     bool   `json:"pass"`
					Note     string `json:"note"`
				} `json:"checks"`
			} `json:"sla"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Recommended != "tcp-only" {
		t.Errorf("recommended %q, want tcp-only", doc.Recommended)
	}
	byName := map[string]int{}
	for i, c := range doc.Candidates {
		byName[c.Name] = i
	}
	icmp, tcp := doc.Candidates[byName["icmp-only"]], doc.Candidates[byName["tcp-only"]]
	if len(icmp.Targets) != 1 || icmp.Targets[0].Sent != 0 {
		t.Errorf("icmp-only targets %+v, want one with nothing sent", icmp.Targets)
	}
	warned := false
	for _, w := range icmp.Warnings {
		if strings.Contains(w, "127.0.0.1 icmp: not probed, no data") && strings.Contains(w, "setcap cap_net_raw+ep") &&
			strings.Contains(w, `net.ipv4.ping_group_range="0 2147483647"`) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("icmp-only: no warning naming the target as no data with both fixes: %q", icmp.Warnings)
	}
	for _, c := range icmp.SLA.Checks {
		if c.Pass || !strings.HasPrefix(c.Note, verdict.NoData) {
			t.Errorf("icmp-only check %+v: want a fail for no data", c)
		}
	}
	if len(tcp.Targets) != 1 || tcp.Targets[0].Sent != 5 || tcp.Targets[0].Recv != 5 {
		t.Errorf("tcp-only targets %+v, want 5 sent and 5 answered", tcp.Targets)
	}
	judged := 0
	for _, c := range tcp.SLA.Checks {
		if c.Note == "" && c.Measured != nil && c.Pass {
			judged++
		}
	}
	if judged != 2 {
		t.Errorf("tcp-only checks %+v: want rtt_p95_ms and loss measured and passed", tcp.SLA.Checks)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
