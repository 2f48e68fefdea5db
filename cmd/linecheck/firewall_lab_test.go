package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// A local firewall rule that drops what the client sends to one address
// (sendto fails with EPERM) fails that target alone, saying so. Before, it
// was reported as a missing privilege and every other target was dropped
// with it: ping exited 2, and in serve the healthy target went
// linecheck_target_up 0. The healthy target is the lab's router, the
// blocked one the server behind it.
func TestLocalFirewallFailsOnlyTheBlockedTarget(t *testing.T) {
	netlab.RequireRoot(t)
	needTool(t, "nft")
	needTool(t, "curl")
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lcfw", Hops: 1})
	healthy, blocked := lab.RouterAddrs(false)[0], lab.ServerAddr(false)
	if err := lab.ClientBlock(blocked); err != nil {
		t.Fatal(err)
	}
	t.Run("ping", func(t *testing.T) {
		cmd := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
		cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "-c", "3", "-i", "0.05", "-W", "1",
			"--format", "json", healthy, blocked}, "\x1f"))
		var errb syncBuffer
		cmd.Stderr = &errb
		out, _ := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("exit %d, want 1 (one target did not reply)\n%s", code, errb.String())
		}
		var doc report.PingDoc
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, errb.String())
		}
		if len(doc.Results) != 2 || doc.Results[0].Recv != 3 || doc.Results[1].Recv != 0 {
			t.Errorf("results %+v: want %s 3 of 3, %s none", doc.Results, healthy, blocked)
		}
		e := errb.String()
		if !strings.Contains(e, blocked) || !strings.Contains(e, "blocked by a local firewall") || strings.Contains(e, "privilege") {
			t.Errorf("stderr does not name the firewall and the blocked target:\n%s", e)
		}
	})
	t.Run("serve", func(t *testing.T) {
		dir := t.TempDir()
		cfgPath := filepath.Join(dir, "candidates.yaml")
		os.WriteFile(cfgPath, []byte(fmt.Sprintf("candidates:\n  - name: healthy\n    targets: [{addr: %s, protocol: icmp}]\n"+
			"  - name: blocked\n    targets: [{addr: %s, protocol: icmp}]\n", healthy, blocked)), 0o644)
		listen := "127.0.0.1:19428"
		serve := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
		serve.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"serve", "--config", cfgPath,
			"--listen", listen, "--count", "3", "--interval", "20ms", "--timeout", "1s", "--trace-every", "0"}, "\x1f"))
		serveLog := startLogged(t, serve)
		up := regexp.MustCompile(`(?m)^linecheck_target_up\{candidate="(\w+)"[^}]*\} (\d)$`)
		got := map[string]string{}
		var metrics string
		waitFor(t, 30*time.Second, "the healthy target up and the blocked one down in linecheck_target_up", func() bool {
			out, err := lab.Exec(lab.Client(), "curl", "-sS", "--max-time", "2", "http://"+listen+"/metrics").Output()
			if err != nil {
				return false
			}
			metrics = string(out)
			for _, m := range up.FindAllStringSubmatch(metrics, -1) {
				got[m[1]] = m[2]
			}
			// target_up is 0 until a target's first answer (issue 23), so
			// wait for the healthy one's; the blocked one never answers.
			return got["blocked"] == "0" && got["healthy"] == "1"
		})
		if got["healthy"] != "1" {
			t.Errorf("target_up %v: the healthy target must stay up\n%s", got, serveLog.String())
		}
		page, err := lab.Exec(lab.Client(), "curl", "-sS", "--max-time", "2", "http://"+listen+"/").Output()
		if err != nil || !strings.Contains(string(page), "blocked by a local firewall") || strings.Contains(string(page), "privilege") {
			t.Errorf("status page (%v) does not say the firewall blocked the target:\n%s", err, page)
		}
	})
}
