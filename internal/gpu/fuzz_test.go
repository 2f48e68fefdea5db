package gpu

import (
	"os"
	"testing"
)

// No input makes a reader panic: a malformed file is an error.
func FuzzReaders(f *testing.F) {
	for _, p := range []string{"a100-sxm4-mig/nvidia-smi-q.xml", "h100-nvl-2x/nvidia-smi-q.txt", "l40s-4x-topo/topo.txt", "rtx4090-8x-topo/topo.txt"} {
		b, err := os.ReadFile("testdata/" + p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		f.Add(b)
	}
	f.Add([]byte(queryNVL))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func([]byte, string) (*Machine, error){ParseXML, ParseQText, ParseQueryCSV} {
			if m, err := parse(b, "in"); err == nil {
				DeriveFormFactor(m)
				NewDoc(m, &Contract{Interconnect: InterconnectPCIe})
			}
		}
		if tp, err := ParseTopo(b, "in"); err == nil {
			tp.Interconnect()
			tp.NICAffinity()
			if m, err := Merge(tp); err == nil {
				NewDoc(m, &Contract{Interconnect: InterconnectNVLinkAllPairs})
			}
		}
	})
}
