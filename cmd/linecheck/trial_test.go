package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/trial"
	"github.com/linecheck/linecheck/probe/bw"
)

// runTrialHelper runs linecheck args in a child process (the test binary
// as linecheck) and returns the exit code, stdout and stderr; signal, when
// set, is called with the running child.
func runTrialHelper(t *testing.T, signal func(*os.Process), args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	if signal != nil {
		signal(cmd.Process)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// trial on the bare-metal fixture root: the order for bare metal passes
// (exit 0), the order for a VM fails the host part (exit 1, the bundle
// written), a typo in the contract is refused naming file and line (exit 2,
// no bundle).
func TestTrialExitCodesAndBundle(t *testing.T) {
	root, err := filepath.Abs("../../internal/host/testdata/bare-metal")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	contract := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, contract string
		code           int
		out, stderr    string
	}{
		{"passes", contract("bm.yaml", "host: {form: bare-metal, nic_gbps: 100}\n"), 0, "host       pass", "gpu: not checked: linecheck-no-nvidia-smi not found"},
		{"wrong form", contract("vm.yaml", "host: {form: vm}\n"), 1, "host       fail: fails the host: block: form", "trial: part host: fails the host: block: form"},
		{"typo", contract("typo.yaml", "host:\n  from: vm\n"), 2, "", "typo.yaml:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "bundle-"+strings.ReplaceAll(tc.name, " ", "-"))
			code, stdout, stderr := runTrialHelper(t, nil, "trial", "--host-root", root, "--nvidia-smi", "linecheck-no-nvidia-smi",
				"--contract", tc.contract, "--out", out, "--", "true")
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if code == 2 {
				if _, err := os.Stat(out); err == nil {
					t.Error("a bundle was made for bad input")
				}
				return
			}
			if _, err := trial.ReadManifest(out); err != nil {
				t.Error(err)
			}
		})
	}
	// A baseline command given without -- is refused.
	if code, _, stderr := runTrialHelper(t, nil, "trial", "--out", filepath.Join(dir, "x"), "true"); code != 2 || !strings.Contains(stderr, "after --") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// SIGINT during the baseline: exit 130 and a whole bundle, the manifest
// verified, the host part recorded, the baseline marked interrupted.
func TestTrialInterruptedLeavesAReadableBundle(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "bundle")
	marker := filepath.Join(dir, "started")
	code, stdout, stderr := runTrialHelper(t, func(p *os.Process) {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = p.Signal(os.Interrupt)
	}, "trial", "--host-root", "../../internal/host/testdata/kvm-guest", "--nvidia-smi", "linecheck-no-nvidia-smi", "--out", out,
		"--", "sh", "-c", "touch "+marker+"; exec sleep 30")
	if code != 130 {
		t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m, err := trial.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]string{}
	for _, p := range m.Parts {
		st[p.Name] = p.Status
	}
	if !m.Interrupted || st["host"] != trial.StatusRan || st["baseline"] != trial.StatusInterrupted || m.Host.Form != "vm" {
		t.Errorf("manifest: interrupted %v, parts %v, form %q", m.Interrupted, st, m.Host.Form)
	}
	if !strings.Contains(stdout, "interrupted (Ctrl-C)") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// The line part's flags are checked before anything runs: exit 2, the file
// or flag named, no bundle made.
func TestTrialLineFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "127.0.0.1:http"}, `--listen "127.0.0.1:http": want [ADDR:]PORT`},
		{[]string{"--listen", "70000"}, `--listen "70000": want [ADDR:]PORT`},
		{[]string{"--listen", "127.0.0.1:0", "--duration", "-1s"}, "--duration -1s: must be positive"},
		{[]string{"--targets", filepath.Join(dir, "none.yaml")}, "none.yaml"},
	} {
		out := filepath.Join(dir, "bundle")
		code, _, stderr := runTrialHelper(t, nil, append([]string{"trial", "--out", out}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a bundle was made for bad input", tc.args)
		}
	}
}

// trial --listen on 127.0.0.1 serves a test for --duration: a bw client in
// this process tests against it, the trial exits 0 when the duration ends,
// and the verified bundle's manifest names the journal, one test in it.
func TestTrialListenServesATest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	root, err := filepath.Abs("../../internal/host/testdata/bare-metal")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	clientErr := make(chan error, 1)
	go func() {
		// The trial's other parts run first: try until the server is up.
		var err error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err = bw.Run(t.Context(), "127.0.0.1", bw.Config{Port: port, Duration: time.Second}); err == nil {
				break
			}
		}
		clientErr <- err
	}()
	code, stdout, stderr := runTrialHelper(t, nil, "trial", "--host-root", root, "--nvidia-smi", "linecheck-no-nvidia-smi",
		"--all-reduce-perf", "linecheck-no-arp", "--nvbandwidth", "linecheck-no-nvb", "--ibstat", "linecheck-no-ibstat", "--ib-write-bw", "linecheck-no-ibwr",
		"--listen", "127.0.0.1:"+strconv.Itoa(port), "--duration", "6s", "--out", out)
	if err := <-clientErr; err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(stdout, "1 tests served, 0 failed") || !strings.Contains(stderr, "linecheck bw --port "+strconv.Itoa(port)) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m, err := trial.ReadManifest(out)
	if err != nil || m.Line.BWJournal != "line/bw.journal" || !m.Complete {
		t.Fatalf("%+v %v", m, err)
	}
}
