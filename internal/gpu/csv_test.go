package gpu

import (
	"strings"
	"testing"
)

// queryNVL is the inventory query's CSV for the H100 NVL pair of
// testdata/h100-nvl-2x, written for this test from the values in that
// machine's recorded nvidia-smi -q (no CSV of that machine was published),
// in the layout nvidia-smi prints with --format=csv: a header with units,
// ", " between fields, units after numbers.
const queryNVL = `index, name, pci.bus_id, pci.device_id, serial, uuid, memory.total [MiB], driver_version, power.limit [W], power.default_limit [W], power.max_limit [W], pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max, ecc.mode.current, mig.mode.current
0, NVIDIA H100 NVL, 00000000:AD:00.0, 0x232110DE, 1650724004565, GPU-806f8ea2-6428-1096-a076-bb687fb45fb0, 95830 MiB, 550.54.14, 310.00 W, 310.00 W, 400.00 W, 5, 5, 16, 16, Enabled, Disabled
1, NVIDIA H100 NVL, 00000000:AE:00.0, 0x232110DE, 1650924002357, GPU-db6d02a2-1413-eccf-8a17-d99eac29d365, 95830 MiB, 550.54.14, 310.00 W, 310.00 W, 400.00 W, 5, 5, 16, 16, Enabled, Disabled
`

// The query CSV and the -q text of one machine say the same thing: two
// readers, one answer.
func TestQueryCSVAgreesWithTheQText(t *testing.T) {
	fromCSV, err := ParseQueryCSV([]byte(queryNVL), "query.csv")
	if err != nil {
		t.Fatal(err)
	}
	fromText := readCase(t, "h100-nvl-2x")
	merged, err := Merge(nil, fromText, fromCSV)
	if err != nil {
		t.Fatalf("the two inputs of one machine do not merge: %v", err)
	}
	if len(merged.Cards) != 2 {
		t.Fatalf("%d cards after merging", len(merged.Cards))
	}
	DeriveFormFactor(fromCSV)
	for i, c := range fromCSV.Cards {
		q := fromText.Cards[i]
		if c.Name != q.Name || c.BusID != q.BusID || c.UUID != q.UUID || c.Serial != q.Serial || c.DeviceID != q.DeviceID ||
			fv(c.MemoryMiB) != fv(q.MemoryMiB) || fv(c.PowerLimitW) != fv(q.PowerLimitW) || fv(c.DefaultPowerLimitW) != fv(q.DefaultPowerLimitW) ||
			fv(c.MaxPowerLimitW) != fv(q.MaxPowerLimitW) || iv(c.PCIeGenMax) != iv(q.PCIeGenMax) || iv(c.PCIeWidthCurrent) != iv(q.PCIeWidthCurrent) ||
			c.ECC != q.ECC || c.MIG != q.MIG || c.FormFactor != q.FormFactor {
			t.Errorf("card %d: csv %+v\n text %+v", i, c, q)
		}
	}
	if fromCSV.Driver != "550.54.14" {
		t.Errorf("driver %q", fromCSV.Driver)
	}
	// nounits and [N/A]: absent stays absent
	m, err := ParseQueryCSV([]byte("index, name, memory.total [MiB], power.limit [W]\n0, NVIDIA H100 PCIe, 81559, [N/A]\n"), "q.csv")
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Cards[0]; fv(c.MemoryMiB) != 81559 || c.PowerLimitW != nil {
		t.Errorf("%+v", c)
	}
	DeriveFormFactor(m)
	if m.Cards[0].FormFactor != FormPCIe {
		t.Errorf("%s", m.Cards[0].FormFactor)
	}
}

func TestQueryCSVErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"NVIDIA H100 NVL, 0x232110DE\n", "q.csv:1: the first line must be the header"},
		{"index, name, memory.total [MiB]\n0, NVIDIA H100 NVL, 95830 MiB\n1, NVIDIA H100 NVL\n", "q.csv:3: 2 fields, the header has 3"},
		{"index, name, memory.total [MiB]\n0, NVIDIA H100 NVL, lots\n", `q.csv:2: column memory.total: "lots" is not a number`},
		{"index, name\n0, A\n0, A\n", "q.csv:3: card index 0 twice (first on line 2)"},
		{"index, name\n", "q.csv:1: a header and no card"},
		{"", "q.csv: empty"},
	} {
		_, err := ParseQueryCSV([]byte(tc.in), "q.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}
