package gpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expected values in these tests were read by hand from the recorded
// outputs in testdata (testdata/README.md names where each came from).

func readCase(t *testing.T, dir string) *Machine {
	t.Helper()
	f, err := FromDir(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func contract(t *testing.T, yml string) *Contract {
	t.Helper()
	c, err := ParseContractFile([]byte(yml), "contract.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

func checkMap(d Doc) map[string]Check {
	out := map[string]Check{}
	for _, c := range d.Checks {
		out[c.Name] = c
	}
	return out
}

func fv(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func iv(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func TestH100SXM5EightCards(t *testing.T) {
	m := readCase(t, "h100-sxm5-8x")
	if len(m.Cards) != 8 || m.Driver != "565.57.01" || m.CUDA != "12.7" {
		t.Fatalf("cards %d driver %q cuda %q", len(m.Cards), m.Driver, m.CUDA)
	}
	c0 := m.Cards[0]
	if c0.Name != "NVIDIA H100 80GB HBM3" || c0.BusID != "00000000:18:00.0" || c0.Serial != "1654423001593" ||
		c0.UUID != "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1" || c0.DeviceID != "0x233010DE" {
		t.Errorf("card 0: %+v", c0)
	}
	if m.Cards[1].Serial != "1654223054577" || m.Cards[1].BusID != "00000000:2a:00.0" {
		t.Errorf("card 1: serial %q bus %q", m.Cards[1].Serial, m.Cards[1].BusID)
	}
	for _, c := range m.Cards {
		if fv(c.MemoryMiB) != 81559 || fv(c.PowerLimitW) != 700 || fv(c.DefaultPowerLimitW) != 700 || fv(c.MaxPowerLimitW) != 700 ||
			iv(c.PCIeGenMax) != 5 || iv(c.PCIeGenCurrent) != 5 || iv(c.PCIeWidthMax) != 16 || iv(c.PCIeWidthCurrent) != 16 ||
			c.ECC != "Enabled" || c.MIG != "Disabled" {
			t.Errorf("card %d: mem %v power %v/%v/%v pcie %d/%d x%d/%d ecc %s mig %s", c.Index, fv(c.MemoryMiB), fv(c.PowerLimitW),
				fv(c.DefaultPowerLimitW), fv(c.MaxPowerLimitW), iv(c.PCIeGenCurrent), iv(c.PCIeGenMax), iv(c.PCIeWidthCurrent), iv(c.PCIeWidthMax), c.ECC, c.MIG)
		}
		if c.FormFactor != FormSXM5 {
			t.Errorf("card %d form factor %s, evidence %v", c.Index, c.FormFactor, c.Evidence)
		}
		// name, device id and the 700 W limit all speak, none disagrees
		if len(c.Evidence) != 3 || strings.Contains(strings.Join(c.Evidence, " "), "conflict") {
			t.Errorf("card %d evidence %q", c.Index, c.Evidence)
		}
	}
	d := NewDoc(m, contract(t, `gpu: {count: 8, model: H100 SXM5, memory_gib: 80, interconnect: nvlink-all-pairs, power_limit_w: 700, pcie_gen: 5, ecc: true, mig: false}`))
	ck := checkMap(d)
	for _, n := range []string{CheckCount, CheckModel, CheckMemoryGiB, CheckPowerLimitW, CheckPCIeGen, CheckECC, CheckMIG} {
		if !ck[n].Pass {
			t.Errorf("%s failed: %+v", n, ck[n])
		}
	}
	// no topo matrix was recorded on this machine: the NVLink promise is unproven
	if c := ck[CheckInterconnect]; c.Pass || c.Measured != nil || !strings.HasPrefix(c.Note, NoData) {
		t.Errorf("interconnect without topo: %+v", c)
	}
	if d.Verdict != VerdictFail {
		t.Errorf("verdict %s", d.Verdict)
	}
	if ck[CheckMemoryGiB].Measured != 79.65 || ck[CheckModel].Measured != "8 × NVIDIA H100 80GB HBM3 (SXM5)" {
		t.Errorf("measured memory %v model %v", ck[CheckMemoryGiB].Measured, ck[CheckModel].Measured)
	}
	for _, tc := range []struct{ yml, check string }{
		{`gpu: {model: H100 PCIe}`, CheckModel},
		{`gpu: {model: H200}`, CheckModel},
		{`gpu: {count: 10}`, CheckCount},
		{`gpu: {memory_gib: 94}`, CheckMemoryGiB},
		{`gpu: {pcie_gen: 6}`, CheckPCIeGen},
		{`gpu: {mig: true}`, CheckMIG},
	} {
		d := NewDoc(m, contract(t, tc.yml))
		if c := checkMap(d)[tc.check]; c.Pass || d.Verdict != VerdictFail {
			t.Errorf("%s: %+v passed", tc.yml, c)
		}
	}
	for _, model := range []string{"H100", "H100 SXM", "H100 SXM5 80GB", "NVIDIA H100 80GB"} {
		if c := checkMap(NewDoc(m, contract(t, "gpu: {model: "+model+"}")))[CheckModel]; !c.Pass {
			t.Errorf("model %q: %+v", model, c)
		}
	}
}

func TestH100NVLPair(t *testing.T) {
	m := readCase(t, "h100-nvl-2x")
	if len(m.Cards) != 2 || m.Driver != "550.54.14" || m.CUDA != "12.4" {
		t.Fatalf("cards %d driver %q cuda %q", len(m.Cards), m.Driver, m.CUDA)
	}
	want := []struct{ bus, serial, uuid string }{
		{"00000000:ad:00.0", "1650724004565", "GPU-806f8ea2-6428-1096-a076-bb687fb45fb0"},
		{"00000000:ae:00.0", "1650924002357", "GPU-db6d02a2-1413-eccf-8a17-d99eac29d365"},
	}
	for i, c := range m.Cards {
		if c.BusID != want[i].bus || c.Serial != want[i].serial || c.UUID != want[i].uuid || c.Name != "NVIDIA H100 NVL" {
			t.Errorf("card %d: %+v", i, c)
		}
		if c.FormFactor != FormNVL || fv(c.MemoryMiB) != 95830 || fv(c.PowerLimitW) != 310 || fv(c.DefaultPowerLimitW) != 310 ||
			fv(c.MaxPowerLimitW) != 400 || iv(c.PCIeGenMax) != 5 || c.ECC != "Enabled" || c.MIG != "Disabled" {
			t.Errorf("card %d: form %s mem %v power %v/%v/%v gen %d ecc %s mig %s", i, c.FormFactor, fv(c.MemoryMiB),
				fv(c.PowerLimitW), fv(c.DefaultPowerLimitW), fv(c.MaxPowerLimitW), iv(c.PCIeGenMax), c.ECC, c.MIG)
		}
	}
	d := NewDoc(m, contract(t, "gpu:\n  count: 2\n  model: H100 NVL\n  memory_gib: 94\n  power_limit_w: 350\n  ecc: true\n"))
	ck := checkMap(d)
	if !ck[CheckCount].Pass || !ck[CheckModel].Pass || !ck[CheckMemoryGiB].Pass || !ck[CheckECC].Pass {
		t.Errorf("checks %+v", d.Checks)
	}
	// 310 W is the cap in force on both cards (default 310, max 400): below the 350 W ordered
	if c := ck[CheckPowerLimitW]; c.Pass || c.Measured != 310.0 || !strings.Contains(c.Note, "capped at 310 W (default 310 W)") {
		t.Errorf("power: %+v", c)
	}
	for _, model := range []string{"H100 SXM5", "H100 PCIe", "H100 NVL 80GB"} {
		if c := checkMap(NewDoc(m, contract(t, "gpu: {model: "+model+"}")))[CheckModel]; c.Pass {
			t.Errorf("model %q passed: %+v", model, c)
		}
	}
}

func TestRTX6000AdaEightPCIeCards(t *testing.T) {
	m := readCase(t, "rtx6000ada-8x")
	if len(m.Cards) != 8 || m.Driver != "550.127.05" {
		t.Fatalf("cards %d driver %q", len(m.Cards), m.Driver)
	}
	for _, c := range m.Cards {
		if c.FormFactor != FormPCIe || c.Name != "NVIDIA RTX 6000 Ada Generation" || fv(c.MemoryMiB) != 49140 ||
			fv(c.PowerLimitW) != 300 || iv(c.PCIeGenMax) != 4 || iv(c.PCIeGenCurrent) != 1 || c.ECC != "Disabled" || c.MIG != "N/A" {
			t.Errorf("card %d: form %s mem %v power %v gen %d/%d ecc %s mig %s", c.Index, c.FormFactor, fv(c.MemoryMiB),
				fv(c.PowerLimitW), iv(c.PCIeGenCurrent), iv(c.PCIeGenMax), c.ECC, c.MIG)
		}
	}
	d := NewDoc(m, contract(t, "gpu: {count: 8, model: RTX 6000 Ada, pcie_gen: 4, ecc: true, mig: false, interconnect: pcie}"))
	ck := checkMap(d)
	// the link trains down to gen 1 at idle: the check is on the max (gen 4)
	if !ck[CheckPCIeGen].Pass || ck[CheckPCIeGen].Measured != 4 || !ck[CheckModel].Pass || !ck[CheckMIG].Pass || !ck[CheckCount].Pass {
		t.Errorf("checks %+v", d.Checks)
	}
	if c := ck[CheckECC]; c.Pass || c.Measured != false || c.Note != "cards 0–7: Disabled" {
		t.Errorf("ecc off on all 8 cards must fail: %+v", c)
	}
}

func TestA100MIGOn(t *testing.T) {
	m := readCase(t, "a100-sxm4-mig")
	if len(m.Cards) != 1 || m.Driver != "510.47.03" || m.CUDA != "11.6" {
		t.Fatalf("%+v", m)
	}
	c := m.Cards[0]
	if c.Name != "NVIDIA A100-SXM4-40GB" || c.FormFactor != FormSXM4 || c.MIG != "Enabled" || iv(c.MIGDevices) != 2 ||
		c.ECC != "Enabled" || fv(c.MemoryMiB) != 40960 || fv(c.PowerLimitW) != 400 || fv(c.MaxPowerLimitW) != 400 ||
		iv(c.PCIeGenMax) != 4 || iv(c.PCIeWidthMax) != 16 || c.UUID != "GPU-27b94a00-ed54-5c24-b1fd-1054085de32a" ||
		c.Serial != "1324321002473" || c.BusID != "00000000:00:04.0" {
		t.Errorf("%+v", c)
	}
	d := NewDoc(m, contract(t, "gpu: {count: 1, model: A100 SXM4 40GB, ecc: true, mig: false}"))
	ck := checkMap(d)
	if !ck[CheckModel].Pass || !ck[CheckECC].Pass || !ck[CheckCount].Pass {
		t.Errorf("%+v", d.Checks)
	}
	if c := ck[CheckMIG]; c.Pass || c.Measured != true {
		t.Errorf("mig sliced card passed: %+v", c)
	}
	if c := checkMap(NewDoc(m, contract(t, "gpu: {model: A100 80GB}")))[CheckModel]; c.Pass || !strings.Contains(c.Note, "40 GB board") {
		t.Errorf("%+v", c)
	}
}

func TestTopologies(t *testing.T) {
	for _, tc := range []struct {
		dir, kind, detail string
		gpus              int
		form              string
		nic               []string // nearest NIC path and names of GPU 0 and the last GPU
	}{
		{"h100-sxm5-8x-topo", InterconnectNVLinkAllPairs, "28 pairs NV18", 8, FormSXM, []string{"PIX NIC0", "PIX NIC9"}},
		{"h100-sxm5-8x-nic-topo", InterconnectNVLinkAllPairs, "28 pairs NV18", 8, FormSXM, []string{"PIX NIC8", "PIX NIC1"}},
		{"rtx4090-8x-topo", InterconnectPCIe, "no NVLink; farthest PCIe path SYS", 8, FormPCIe, []string{"PIX mlx5_bond_0", "SYS mlx5_bond_0"}},
		{"l40s-4x-topo", InterconnectPCIe, "no NVLink; farthest PCIe path SYS", 4, FormPCIe, []string{"SYS mlx5_0 mlx5_1", "NODE mlx5_0 mlx5_1"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			m := readCase(t, tc.dir)
			if len(m.Cards) != tc.gpus || len(m.Topology.GPUs) != tc.gpus {
				t.Fatalf("%d cards", len(m.Cards))
			}
			d := NewDoc(m, contract(t, "gpu: {count: "+string(rune('0'+tc.gpus))+", interconnect: "+tc.kind+"}"))
			if d.Interconnect.Kind != tc.kind || d.Interconnect.Detail != tc.detail || d.Verdict != VerdictPass {
				t.Errorf("interconnect %+v verdict %s checks %+v", d.Interconnect, d.Verdict, d.Checks)
			}
			for _, c := range m.Cards {
				if c.FormFactor != tc.form {
					t.Errorf("card %d: %s %v", c.Index, c.FormFactor, c.Evidence)
				}
			}
			got := []string{
				d.NICAffinity[0].Path + " " + strings.Join(d.NICAffinity[0].NICs, " "),
				d.NICAffinity[tc.gpus-1].Path + " " + strings.Join(d.NICAffinity[tc.gpus-1].NICs, " "),
			}
			if got[0] != tc.nic[0] || got[1] != tc.nic[1] {
				t.Errorf("NIC affinity %q, want %q", got, tc.nic)
			}
		})
	}
	// a PCIe machine fails an NVLink contract; an NVSwitch one passes a pairs contract
	m := readCase(t, "rtx4090-8x-topo")
	if c := checkMap(NewDoc(m, contract(t, "gpu: {interconnect: nvlink-pairs}")))[CheckInterconnect]; c.Pass || c.Measured != InterconnectPCIe {
		t.Errorf("%+v", c)
	}
	m = readCase(t, "h100-sxm5-8x-topo")
	if c := checkMap(NewDoc(m, contract(t, "gpu: {interconnect: nvlink-pairs}")))[CheckInterconnect]; !c.Pass {
		t.Errorf("%+v", c)
	}
	if m.Topology.CPUAffinity[4] != "56-111,168-223" || m.Topology.NUMAAffinity[4] != "1" {
		t.Errorf("affinity %q %q", m.Topology.CPUAffinity[4], m.Topology.NUMAAffinity[4])
	}
}

func TestMalformedOutputsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	cut := func(src string, keepLines int, name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines[:keepLines], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		files Files
		want  string
	}{
		{Files{XML: cut("a100-sxm4-mig/nvidia-smi-q.xml", 120, "cut.xml")}, "cut.xml:121: not well-formed XML"},
		{Files{Topo: cut("rtx4090-8x-topo/topo.txt", 6, "topo.txt")}, "topo.txt:6: 5 GPU rows for the header's 8 GPUs"},
		{Files{QText: cut("h100-nvl-2x/nvidia-smi-q.txt", 7, "q.txt")}, "q.txt:7: no \"GPU 00000000:…\" section"},
		{Files{QText: cut("h100-nvl-2x/nvidia-smi-q.txt", 8, "q8.txt")}, "q8.txt:8: GPU 00000000:ad:00.0 has no Product Name line"},
		{Files{QText: cut("h100-nvl-2x/nvidia-smi-q.txt", 200, "q200.txt")}, "q200.txt:200: 1 GPU sections, but line 7 says Attached GPUs: 2"},
	} {
		_, err := Read(tc.files)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.files, err, tc.want)
		}
	}
	// a cell that is no path kind, with its line and column
	b, _ := os.ReadFile("testdata/l40s-4x-topo/topo.txt")
	bad := strings.Replace(string(b), "GPU1    NODE     X      SYS", "GPU1    NODE     X      SYX", 1)
	if _, err := ParseTopo([]byte(bad), "t.txt"); err == nil || !strings.Contains(err.Error(), `t.txt:3: row GPU1, column GPU2: "SYX"`) {
		t.Errorf("%v", err)
	}
	// inputs of two machines do not merge
	_, err := Read(Files{QText: "testdata/h100-nvl-2x/nvidia-smi-q.txt", Topo: "testdata/rtx4090-8x-topo/topo.txt"})
	if err == nil || !strings.Contains(err.Error(), "topo matrix shows 8 GPUs, the other inputs 2 cards") {
		t.Errorf("%v", err)
	}
}

func TestContractErrorsCarryLines(t *testing.T) {
	for _, tc := range []struct{ yml, want string }{
		{"gpu:\n  count: 8\n  interconect: pcie\n", `contract.yaml:3`},
		{"gpu:\n  interconnect: nvswitch\n", `contract.yaml:2: gpu.interconnect: "nvswitch": use nvlink-all-pairs, nvlink-pairs or pcie`},
		{"gpu:\n  model: SXM5\n", `contract.yaml:2: gpu.model: "SXM5" names no GPU family`},
		{"gpu:\n  max_throttle_share: 5\n", `contract.yaml:2: gpu.max_throttle_share`},
		{"sla: {}\n", `contract.yaml:1: no gpu: block`},
		{"gpu: {count: 8}\n---\ngpu: {count: 4}\n", `contract.yaml:3: a second YAML document (after a --- line): a contract file is one document`},
	} {
		_, err := ParseContractFile([]byte(tc.yml), "contract.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yml, err, tc.want)
		}
	}
}

func TestA40TenPCIeCards(t *testing.T) {
	m := readCase(t, "a40-10x")
	if len(m.Cards) != 10 {
		t.Fatalf("%d cards", len(m.Cards))
	}
	for _, c := range m.Cards {
		if c.Name != "NVIDIA A40" || c.FormFactor != FormPCIe || fv(c.MemoryMiB) != 46068 || fv(c.PowerLimitW) != 300 ||
			iv(c.PCIeGenMax) != 4 || c.ECC != "Enabled" || c.MIG != "N/A" {
			t.Errorf("card %d: %+v", c.Index, c)
		}
	}
	d := NewDoc(m, contract(t, "gpu: {count: 10, model: A40, memory_gib: 45, ecc: true, mig: false}"))
	if d.Verdict != VerdictPass {
		t.Errorf("%+v", d.Checks)
	}
}
