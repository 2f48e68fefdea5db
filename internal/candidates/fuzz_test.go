package candidates

import (
	"testing"
)

// FuzzParse: a malformed candidates file gives an error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validYAML))
	f.Add([]byte("candidates: [{name: a, targets: [{addr: 1.2.3.4, protocol: tcp, port: 99999}]}]\nfx: {base: CNY, USD: -1}\n"))
	f.Add([]byte("vantage: {lat: 91, lon: 0}\nsla: {loss: .nan, line_classes: [x]}\ntraffic: {monthly_gb: 0, peak_mbps: -1, shape: wave}\n"))
	f.Add([]byte("region: [\n"))
	f.Add([]byte("fx: [1, 2]\nusers: Shanghai\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b, "fuzz.yaml")
		if err == nil && file == nil {
			t.Fatal("nil file without an error")
		}
	})
}
