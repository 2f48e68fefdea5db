package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// serve's /metrics on loopback: a TCP target whose every connection is
// refused (a port nothing listens on) is not up, one that accepts is; and
// serve shows linecheck_build_info and client_golang's Go and process
// metrics, which promtool accepts. Before issue 23 the refused target
// stayed up (1): its probes are lost, not errors, so it never backed off.
func TestServeTargetUpAndProcessMetrics(t *testing.T) {
	open, conns := countingListener(t)
	closed := freePort(t) // free a moment ago: nothing listens there
	cfg := filepath.Join(t.TempDir(), "candidates.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("candidates:\n"+
		"  - name: open\n    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]\n"+
		"  - name: refused\n    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]\n", open, closed)), 0o644)
	_, log, listen := startServe(t, "--config", cfg, "--count", "2", "--interval", "100ms", "--trace-every", "0")
	sent := regexp.MustCompile(`(?m)^linecheck_probes_sent_total\{candidate="refused"[^}]*\} ([1-9][0-9]*)$`)
	var body string
	waitFor(t, 20*time.Second, "probes of the refused target to end", func() bool {
		_, body = get(t, "http://"+listen+"/metrics")
		return sent.MatchString(body) && conns.Load() > 0
	})
	_, body = get(t, "http://"+listen+"/metrics")
	for _, want := range []string{
		fmt.Sprintf(`linecheck_target_up{candidate="refused",protocol="tcp",target="127.0.0.1:%d"} 0`, closed),
		fmt.Sprintf(`linecheck_target_up{candidate="open",protocol="tcp",target="127.0.0.1:%d"} 1`, open),
		fmt.Sprintf(`linecheck_probes_received_total{candidate="refused",protocol="tcp",target="127.0.0.1:%d"} 0`, closed),
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q\n%s\n%s", want, body, log.String())
		}
	}
	build := regexp.MustCompile(`(?m)^linecheck_build_info\{goversion="([^"]+)",revision="([^"]+)",version="([^"]+)"\} 1$`)
	if m := build.FindStringSubmatch(body); m == nil {
		t.Errorf("no linecheck_build_info{goversion,revision,version} 1:\n%s", body)
	} else if m[1] != runtime.Version() || m[3] != readBuild().version {
		t.Errorf("build_info goversion %q version %q, want %q %q", m[1], m[3], runtime.Version(), readBuild().version)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "go_gc_duration_seconds", "go_info",
		"process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds", "process_open_fds"} {
		if !regexp.MustCompile(`(?m)^# TYPE ` + name + ` `).MatchString(body) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if strings.Count(body, "# TYPE go_goroutines ") != 1 {
		t.Errorf("go_goroutines shown %d times", strings.Count(body, "# TYPE go_goroutines "))
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		// promtool's lint wants counters to end in _total and so on; what
		// matters is that it parses: exit 3 is lint findings, 1 a parse error.
		if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 3 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
