package trial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProgram writes a script printing file and recording its arguments.
func fakeProgram(t *testing.T, name, file string) (prog, argsFile string) {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prog, argsFile = filepath.Join(dir, name), filepath.Join(dir, "args")
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\nexec cat " + abs + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, argsFile
}

// Cards claiming SXM5 whose all-reduce is the 2 × RTX 2080 Ti bridge's
// (21.86 GB/s at 128 MiB, internal/interconnect/testdata) fail both the
// order's 350 GB/s and the form-factor cross-check; the one HDR port of
// the gpud ibstat passes ib_ports 1 and ib_gbps 200. all_reduce_perf is
// run over the GPU part's 8 cards, and both outputs land in the bundle.
func TestInterconnectPart(t *testing.T) {
	arp, arpArgs := fakeProgram(t, "all_reduce_perf", "../interconnect/testdata/rtx2080ti-2x-nvlink-bridge.txt")
	ibs, _ := fakeProgram(t, "ibstat", "../interconnect/testdata/ibstat-gpud-mlx5_7.txt")
	c, err := ParseContract([]byte("interconnect: {nvlink_busbw_gbps: 350, ib_ports: 1, ib_gbps: 200}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := newBundle(t)
	o := &Options{Contract: c, AllReducePerf: arp, IBStat: ibs, gpuCards: 8, gpuForm: "SXM5"}
	p := runInterconnect(t.Context(), b, o)
	if p.Status != StatusFail || p.Reason != "fails: nvlink_busbw_gbps, form_factor" {
		t.Errorf("%+v", p)
	}
	lines := strings.Join(p.Lines, "\n")
	for _, w := range []string{"all-reduce bus bandwidth at 134217728 bytes: 21.86 GB/s", "nvlink_busbw_gbps: required 350, measured 21.86 FAIL",
		"PCIe-class", "ib_ports: required 1, measured 1", "ib_gbps: required 200, measured 200"} {
		if !strings.Contains(lines, w) {
			t.Errorf("lines lack %q:\n%s", w, lines)
		}
	}
	if args, _ := os.ReadFile(arpArgs); strings.TrimSpace(string(args)) != "-b 1M -e 8G -f 2 -g 8" {
		t.Errorf("all_reduce_perf args %q", args)
	}
	if strings.Join(p.Files, ",") != "interconnect/all_reduce_perf.txt,interconnect/ibstat.txt" {
		t.Errorf("files %v", p.Files)
	}

	// Neither tool here and no GPUs: not checked, saying why; an order
	// that asked for a figure nothing measured fails.
	o = &Options{AllReducePerf: "linecheck-no-arp", IBStat: "linecheck-no-ibstat"}
	if p := runInterconnect(t.Context(), newBundle(t), o); p.Status != StatusNotChecked || p.Reason != "linecheck-no-arp not found; linecheck-no-ibstat not found" {
		t.Errorf("%+v", p)
	}
	o.Contract = c
	if p := runInterconnect(t.Context(), newBundle(t), o); p.Status != StatusFail || !strings.Contains(p.Reason, "nvlink_busbw_gbps, ib_ports, ib_gbps") {
		t.Errorf("%+v", p)
	}
}
