package interconnect

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func decode(t *testing.T, src string) (Contract, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return DecodeContract(doc.Content[0], "c.yaml")
}

func TestDecodeContractNewKeys(t *testing.T) {
	c, err := decode(t, "nvlink_pair_gbps: 300\nib_write_gbps: 360\n")
	if err != nil || *c.NVLinkPairGbps != 300 || *c.IBWriteGbps != 360 {
		t.Fatalf("%+v %v", c, err)
	}
	for src, want := range map[string]string{
		"nvlink_pair_gbs: 300\n":             "c.yaml:1",
		"ib_write_gbps: 0\n":                 "c.yaml:1: interconnect.ib_write_gbps: 0: Gb/s above 0",
		"ib_gbps: 1\nnvlink_pair_gbps: -3\n": "c.yaml:2: interconnect.nvlink_pair_gbps: -3: GB/s above 0",
	} {
		if _, err := decode(t, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// A key nothing measured fails, saying which tool's output is missing; a
// run of nvbandwidth without GPU-to-GPU testcases measures no pair.
func TestCheckAllNewKeys(t *testing.T) {
	pair, wr := 300.0, 360.0
	ct := Contract{NVLinkPairGbps: &pair, IBWriteGbps: &wr}
	c := CheckAll(ct, Measured{}, "")
	if len(c) != 2 || c[0].Pass || c[0].Note != "not measured (no nvbandwidth output)" || c[1].Pass || c[1].Note != "not measured (no ib_write_bw output)" {
		t.Errorf("%+v", c)
	}
	host := nvb(t, "nvbandwidth-rtx4090-8x-host.txt")
	c = CheckAll(ct, Measured{NVBandwidth: host, IBWriteBW: ibwr(t, "ib_send_bw-perftest65-mbsec.txt")}, "")
	if c[0].Pass || c[0].Measured != nil || !strings.Contains(c[0].Note, "no GPU-to-GPU testcase") || c[1].Pass || c[1].Measured.(float64) < 46.5 {
		t.Errorf("%+v", c)
	}
	c = CheckAll(ct, Measured{NVBandwidth: nvb(t, "nvbandwidth-h100-8x-nvswitch.txt"), IBWriteBW: ibwr(t, "ib_write_bw-ndr-400.txt")}, "")
	if !c[0].Pass || c[0].Measured != 388.25 || !c[1].Pass || c[1].Measured != 393.88 {
		t.Errorf("%+v", c)
	}
}

// Cards claiming SXM5: the 8 × H100 matrix with the pair 3 → 5 at 47.30
// GB/s fails nvlink_all_pairs (47.30 ≤ 63.0, PCIe-class); the whole one
// (slowest 388.25) passes; PCIe cards are not cross-checked, nor is a run
// with no GPU-to-GPU testcase.
func TestCheckAllNVLinkAllPairs(t *testing.T) {
	slow := CheckAll(Contract{}, Measured{NVBandwidth: nvb(t, "nvbandwidth-h100-8x-one-slow-pair.txt")}, "SXM5")
	if len(slow) != 1 || slow[0].Name != "nvlink_all_pairs" || slow[0].Pass || slow[0].Measured != 47.30 || !strings.Contains(slow[0].Note, "GPU 3 → GPU 5 copies at 47.30 GB/s") {
		t.Errorf("%+v", slow)
	}
	if ok := CheckAll(Contract{}, Measured{NVBandwidth: nvb(t, "nvbandwidth-h100-8x-nvswitch.txt")}, "SXM5"); len(ok) != 1 || !ok[0].Pass {
		t.Errorf("%+v", ok)
	}
	if c := CheckAll(Contract{}, Measured{NVBandwidth: nvb(t, "nvbandwidth-a6000-6x-pcie.txt")}, "PCIe"); len(c) != 0 {
		t.Errorf("%+v", c)
	}
	if c := CheckAll(Contract{}, Measured{NVBandwidth: nvb(t, "nvbandwidth-rtx4090-8x-host.txt")}, "SXM5"); len(c) != 0 {
		t.Errorf("%+v", c)
	}
}
