package labtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// procStatus reads one field ("CapEff", "CapPrm") of /proc/PATH/status.
func procStatus(t *testing.T, path, field string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", path, "status"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s*(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/proc/%s/status has no %s", path, field)
	}
	return string(m[1])
}

// capNetRaw is CAP_NET_RAW alone, as /proc/PID/status prints a set.
const capNetRaw = "0000000000002000"

// serve holds no capability on any of its threads, the HTTP server's
// included, both as root and as uid 65534 running a binary given
// cap_net_raw+ep: its raw sockets come from a helper child that holds
// CAP_NET_RAW alone. In the client namespace ping_group_range forbids ICMP
// datagram sockets, so the ICMP probes that reach the lab's server can only
// have left through raw sockets from the helper. Once serve ends, so does
// the helper. backtrace, run as root the same way, traces the path.
func TestServeHoldsNoCapability(t *testing.T) {
	t.Parallel()
	tool(t, "setcap")
	tool(t, "setpriv")
	tool(t, "curl")
	l, bin := lab(t, netlab.Config{Prefix: "lcltw", Hops: 2})
	setPingGroupRange(t, l, "1 0")
	capBin := worldBinary(t, bin)
	mustRun(t, l, l.Client(), "setcap", "cap_net_raw+ep", capBin)
	dir := filepath.Dir(capBin)
	cfg := filepath.Join(dir, "candidates.yaml")
	dst := l.ServerAddr(false)
	if err := os.WriteFile(cfg, []byte("candidates:\n  - name: lab\n    targets: [{addr: "+dst+", protocol: icmp}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	received := regexp.MustCompile(`(?m)^linecheck_probes_received_total\{[^}]*target="` + regexp.QuoteMeta(dst) + `"[^}]*\} ([0-9]+)$`)
	hop := regexp.MustCompile(`(?m)^linecheck_hop_loss_ratio\{[^}]*ttl="3"[^}]*\} 0$`)
	for i, v := range []struct {
		name string
		argv []string
	}{
		{"root", []string{bin}},
		{"uid 65534, cap_net_raw+ep", append(append([]string{}, nobody...), capBin)},
	} {
		t.Run(v.name, func(t *testing.T) {
			listen := fmt.Sprintf("127.0.0.1:%d", 19500+i)
			args := append(append([]string{}, v.argv[1:]...), "serve", "--config", cfg, "--listen", listen,
				"--count", "3", "--interval", "20ms", "--timeout", "500ms", "--trace-every", "1")
			cmd := l.Exec(l.Client(), v.argv[0], args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			stopped := false
			stop := func() {
				if !stopped {
					stopped = true
					_ = cmd.Process.Signal(syscall.SIGTERM)
					select {
					case <-exited:
					case <-time.After(10 * time.Second):
						_ = cmd.Process.Kill()
						<-exited
					}
				}
			}
			defer stop()
			pid := strconv.Itoa(cmd.Process.Pid) // ip netns exec and setpriv exec: serve keeps the pid
			var metrics string
			for deadline := time.Now().Add(30 * time.Second); ; {
				out, _ := l.Exec(l.Client(), "curl", "-s", "--max-time", "2", "http://"+listen+"/metrics").Output()
				metrics = string(out)
				if m := received.FindStringSubmatch(metrics); m != nil && m[1] != "0" && hop.MatchString(metrics) {
					break
				}
				select {
				case <-exited:
					t.Fatalf("serve exited: %s", stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no probes received and no trace to %s after 30 s; stderr: %s\nmetrics: %.3000s", dst, stderr.String(), metrics)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if comm, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(comm)) != "linecheck" {
				t.Fatalf("pid %s is %q, not serve", pid, comm)
			}
			tasks, err := os.ReadDir("/proc/" + pid + "/task")
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range tasks {
				p := pid + "/task/" + task.Name()
				for _, f := range []string{"CapEff", "CapPrm", "CapAmb"} {
					if got := procStatus(t, p, f); got != "0000000000000000" {
						t.Errorf("serve thread %s: %s %s, want 0", p, f, got)
					}
				}
			}
			// A child is listed under the thread that started it: the main
			// one after a re-exec, any one where the capabilities are
			// dropped in place (a build without cgo).
			var kids []string
			for _, task := range tasks {
				children, err := os.ReadFile("/proc/" + pid + "/task/" + task.Name() + "/children")
				if err != nil {
					t.Fatal(err)
				}
				kids = append(kids, strings.Fields(string(children))...)
			}
			if len(kids) != 1 {
				t.Fatalf("serve has children %q, want the socket helper alone", kids)
			}
			helper := kids[0]
			if got := procStatus(t, helper, "CapEff"); got != capNetRaw {
				t.Errorf("socket helper %s: CapEff %s, want CAP_NET_RAW alone (%s)", helper, got, capNetRaw)
			}
			stop()
			for deadline := time.Now().Add(5 * time.Second); ; {
				b, err := os.ReadFile("/proc/" + helper + "/stat")
				if err != nil || strings.Contains(string(b), ") Z ") {
					break // gone, or a zombie waiting for init
				}
				if time.Now().After(deadline) {
					t.Errorf("socket helper %s still runs 5 s after serve ended", helper)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	t.Run("backtrace", func(t *testing.T) {
		targets := filepath.Join(dir, "targets.yaml")
		if err := os.WriteFile(targets, []byte("targets:\n  - {name: lab, carrier: telecom, city: Shanghai, addr: "+dst+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, l, l.Client(), bin, "backtrace", "--targets", targets, "--timeout", "500ms", "--max-ttl", "5", "--format", "json")
		if !strings.Contains(string(r.stdout), `"reached": true`) {
			t.Errorf("backtrace through the socket helper did not reach %s: %s", dst, r)
		}
	})
}
