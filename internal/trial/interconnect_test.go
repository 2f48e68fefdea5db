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
	o := &Options{Contract: c, AllReducePerf: arp, IBStat: ibs, NVBandwidth: "linecheck-no-nvb", IBWriteBW: "linecheck-no-ibwr", gpuCards: 8, gpuForm: "SXM5"}
	p := runInterconnect(t.Context(), b, o)
	if p.Status != StatusFail || p.Reason != "fails: nvlink_busbw_gbps, form_factor (linecheck-no-nvb not found; linecheck-no-ibwr not found)" {
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
	o = &Options{AllReducePerf: "linecheck-no-arp", IBStat: "linecheck-no-ibstat", NVBandwidth: "linecheck-no-nvb", IBWriteBW: "linecheck-no-ibwr"}
	if p := runInterconnect(t.Context(), newBundle(t), o); p.Status != StatusNotChecked ||
		p.Reason != "linecheck-no-arp not found; linecheck-no-nvb not found; linecheck-no-ibstat not found; linecheck-no-ibwr not found" {
		t.Errorf("%+v", p)
	}
	o.Contract = c
	if p := runInterconnect(t.Context(), newBundle(t), o); p.Status != StatusFail || !strings.Contains(p.Reason, "nvlink_busbw_gbps, ib_ports, ib_gbps") {
		t.Errorf("%+v", p)
	}
}

// nvbandwidth runs its two one-way GPU-to-GPU testcases; ib_write_bw runs
// as a server on the first active InfiniBand port of ibstat's listing and
// as a client of it over 127.0.0.1. The 8 × H100 matrix with one pair at
// 47.30 GB/s (3 → 5) fails nvlink_pair_gbps 300; the NDR loopback's 393.88
// Gb/s at 8 MiB passes ib_write_gbps 360 (internal/interconnect/testdata).
// Both outputs are in the bundle, and ReadInterconnect reads them back.
func TestInterconnectPartNVBandwidthAndIBWriteBW(t *testing.T) {
	nvb, nvbArgs := fakeProgram(t, "nvbandwidth", "../interconnect/testdata/nvbandwidth-h100-8x-one-slow-pair.txt")
	ibs, _ := fakeProgram(t, "ibstat", "../interconnect/testdata/ibstat-gpud-mlx5_7.txt")
	out, err := filepath.Abs("../interconnect/testdata/ib_write_bw-ndr-400.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ibwr := filepath.Join(dir, "ib_write_bw")
	// The client (last argument 127.0.0.1) prints the table; the server
	// records its arguments and waits for the client, as perftest's does.
	script := "#!/bin/sh\nfor a; do last=$a; done\nif [ \"$last\" = 127.0.0.1 ]; then echo \"$@\" > " + dir + "/client; exec cat " + out +
		"; fi\necho \"$@\" > " + dir + "/server\nsleep 1\n"
	if err := os.WriteFile(ibwr, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := ParseContract([]byte("interconnect: {nvlink_pair_gbps: 300, ib_write_gbps: 360}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := newBundle(t)
	o := &Options{Contract: c, AllReducePerf: "linecheck-no-arp", NVBandwidth: nvb, IBStat: ibs, IBWriteBW: ibwr, gpuCards: 8}
	p := runInterconnect(t.Context(), b, o)
	if p.Status != StatusFail || p.Reason != "fails: nvlink_pair_gbps (linecheck-no-arp not found)" {
		t.Errorf("%+v", p)
	}
	lines := strings.Join(p.Lines, "\n")
	for _, w := range []string{"nvlink_pair_gbps: required 300, measured 47.3 (slowest pair GPU 3 → GPU 5 in device_to_device_memcpy_read_ce) FAIL",
		"ib_write_gbps: required 360, measured 393.88 (average at 8388608-byte messages)"} {
		if !strings.Contains(lines, w) {
			t.Errorf("lines lack %q:\n%s", w, lines)
		}
	}
	if a, _ := os.ReadFile(nvbArgs); strings.TrimSpace(string(a)) != "-t device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce" {
		t.Errorf("nvbandwidth args %q", a)
	}
	// mlx5_7 port 1 is the listing's one active InfiniBand port.
	srv, _ := os.ReadFile(filepath.Join(dir, "server"))
	cli, _ := os.ReadFile(filepath.Join(dir, "client"))
	if want := "-d mlx5_7 -i 1 -F --report_gbits -D 5"; strings.TrimSpace(string(srv)) != want || strings.TrimSpace(string(cli)) != want+" 127.0.0.1" {
		t.Errorf("server %q client %q", srv, cli)
	}
	if strings.Join(p.Files, ",") != "interconnect/nvbandwidth.txt,interconnect/ibstat.txt,interconnect/ib_write_bw.txt" {
		t.Errorf("files %v", p.Files)
	}
	m, err := ReadInterconnect(b.Dir)
	if err != nil || m.AllReduce != nil || m.NVBandwidth == nil || len(m.IBPorts) != 1 || m.IBWriteBW == nil {
		t.Fatalf("%+v %v", m, err)
	}
	// A saved output edited into nonsense is named when read back.
	if err := os.WriteFile(filepath.Join(b.Dir, InterconnectDir, NVBandwidthFile), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInterconnect(b.Dir); err == nil || !strings.Contains(err.Error(), "interconnect/nvbandwidth.txt: no bandwidth matrix") {
		t.Errorf("%v", err)
	}
}
