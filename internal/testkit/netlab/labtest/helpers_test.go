// Package labtest proves `linecheck ping` and `linecheck trace` on the
// netlab multi-hop lab (issue 3, "The lab and the tests that count"). The
// linecheck binary is tested as a black box: built once without -race, run
// inside the lab's client namespace, its JSON (linecheck.ping/v1,
// linecheck.trace/v1) compared with the lab's own layout, with nftables and
// TUN-link counters, and with ping, traceroute and mtr on the same path.
package labtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// linecheck returns the path of the linecheck binary (testbin: built once,
// without -race; LINECHECK_BIN overrides it).
func linecheck(t *testing.T) string { return testbin.Linecheck(t) }

// lab builds a lab for t (skipping when not root) and the binary.
func lab(t *testing.T, cfg netlab.Config) (*netlab.Lab, string) {
	t.Helper()
	netlab.RequireRoot(t)
	bin := linecheck(t)
	return netlab.UpForTest(t, cfg), bin
}

// result is what a finished command produced.
type result struct {
	args           []string
	stdout, stderr []byte
	err            error
}

func (r result) String() string {
	return fmt.Sprintf("%s: %v\nstderr: %s\nstdout: %.2000s", strings.Join(r.args, " "), r.err, r.stderr, r.stdout)
}

// start runs name args in namespace ns in the background; wait() returns
// its result. Commands are killed after 150 s.
func start(l *netlab.Lab, ns, name string, args ...string) func() result {
	cmd := l.Exec(ns, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	r := result{args: append([]string{name}, args...)}
	if err := cmd.Start(); err != nil {
		r.err = err
		return func() result { return r }
	}
	timer := time.AfterFunc(150*time.Second, func() { _ = cmd.Process.Kill() })
	return func() result {
		r.err = cmd.Wait()
		timer.Stop()
		r.stdout, r.stderr = out.Bytes(), errb.Bytes()
		return r
	}
}

// mustRun runs a command in ns and fails t if it exits non-zero.
func mustRun(t *testing.T, l *netlab.Lab, ns, name string, args ...string) result {
	t.Helper()
	r := start(l, ns, name, args...)()
	if r.err != nil {
		t.Fatal(r)
	}
	return r
}

// runExit runs a command in ns and fails t unless it exits with code want
// (ping exits 1 when a target had no reply at all, as fping does).
func runExit(t *testing.T, want int, l *netlab.Lab, ns, name string, args ...string) result {
	t.Helper()
	r := start(l, ns, name, args...)()
	code := 0
	if r.err != nil {
		var ee *exec.ExitError
		if !errors.As(r.err, &ee) {
			t.Fatal(r)
		}
		code = ee.ExitCode()
	}
	if code != want {
		t.Fatalf("exit code %d, want %d: %v", code, want, r)
	}
	r.err = nil // the expected exit code is not a failure
	return r
}

// traceJSON runs `linecheck trace --format json args…` in the client.
func traceJSON(t *testing.T, l *netlab.Lab, bin string, args ...string) route.Trace {
	t.Helper()
	return parseTrace(t, mustRun(t, l, l.Client(), bin, append([]string{"trace", "--format", "json"}, args...)...))
}

func parseTrace(t *testing.T, r result) route.Trace {
	t.Helper()
	if r.err != nil {
		t.Fatal(r)
	}
	var tr route.Trace
	if err := json.Unmarshal(r.stdout, &tr); err != nil {
		t.Fatalf("trace JSON: %v\n%s", err, r)
	}
	if tr.Schema != "linecheck.trace/v1" {
		t.Fatalf("trace schema %q, want linecheck.trace/v1", tr.Schema)
	}
	for i, h := range tr.Hops {
		if h.TTL != i+1 {
			t.Fatalf("trace hop %d has ttl %d: want one entry per TTL from 1", i, h.TTL)
		}
	}
	return tr
}

// pingDoc is the linecheck.ping/v1 document as the issue spells it.
type pingDoc struct {
	Schema  string       `json:"schema"`
	Results []pingResult `json:"results"`
}

type pingResult struct {
	Target     string         `json:"target"`
	Addr       string         `json:"addr"`
	Sent       int            `json:"sent"`
	Recv       int            `json:"recv"`
	Loss       float64        `json:"loss"`
	Late       int            `json:"late"`
	Duplicates int            `json:"duplicates"`
	Foreign    int            `json:"foreign"` // not in the list; 0 when absent
	RTT        stats.RTTStats `json:"rtt_ms"`
}

func parsePing(t *testing.T, r result) pingDoc {
	t.Helper()
	if r.err != nil {
		t.Fatal(r)
	}
	var d pingDoc
	if err := json.Unmarshal(r.stdout, &d); err != nil {
		t.Fatalf("ping JSON: %v\n%s", err, r)
	}
	if d.Schema != "linecheck.ping/v1" {
		t.Fatalf("ping schema %q, want linecheck.ping/v1", d.Schema)
	}
	return d
}

// hopAddrs lists each hop's responder addresses joined by "|" ("" for none).
func hopAddrs(tr route.Trace) []string {
	var out []string
	for _, h := range tr.Hops {
		var a []string
		for _, r := range h.Responders {
			a = append(a, r.Addr)
		}
		out = append(out, strings.Join(a, "|"))
	}
	return out
}

func hasFlag(h route.Hop, f string) bool {
	for _, x := range h.Flags {
		if x == f {
			return true
		}
	}
	return false
}

func recv(h route.Hop) int {
	n := 0
	for _, r := range h.Responders {
		n += r.Recv
	}
	return n
}

func tool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed (scripts/test installs it): %v", name, err)
	}
}
