package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func decode(t *testing.T, src string) (Contract, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return DecodeContract(doc.Content[0].Content[1], "c.yaml")
}

// An order for a bare-metal 8-core, 1 TiB, 7 TB NVMe, 100 G RDMA machine:
// the bare-metal fixture passes every key; the KVM guest fails each with
// the figure it has (or none).
func TestCheckHostAgainstTheOrder(t *testing.T) {
	c, err := decode(t, "host: {form: bare-metal, min_cpu_cores: 4, min_memory_gib: 1024, min_nvme_tb: 7, nic_gbps: 100, rdma: true}\n")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("testdata", "bare-metal")
	checks := CheckHost(c, DetectForm(root), ReadInventory(root))
	if len(checks) != 6 || Verdict(checks) != "pass" {
		t.Errorf("bare metal: %+v", checks)
	}
	root = filepath.Join("testdata", "kvm-guest")
	checks = CheckHost(c, DetectForm(root), ReadInventory(root))
	want := map[string]string{"form": "vm", "min_cpu_cores": "2", "min_memory_gib": "7.77", "min_nvme_tb": "<nil>", "nic_gbps": "<nil>", "rdma": "false"}
	for _, ch := range checks {
		if ch.Pass {
			t.Errorf("kvm guest passes %s: %+v", ch.Name, ch)
		}
		if got := anyString(ch.Measured); got != want[ch.Name] {
			t.Errorf("%s measured %s, want %s", ch.Name, got, want[ch.Name])
		}
	}
	if Verdict(checks) != "fail" || checks[0].Note != "kvm VM" {
		t.Errorf("%+v", checks)
	}
	if Verdict(nil) != "none" {
		t.Error("no checks: none")
	}
}

func anyString(v any) string {
	if v == nil {
		return "<nil>"
	}
	return fmt.Sprint(v)
}

// A typo or a bad value is refused naming file, line and key.
func TestDecodeContractRefusesBadKeys(t *testing.T) {
	for src, want := range map[string]string{
		"host:\n  form: baremetal\n":         `c.yaml:2: host.form: "baremetal": use bare-metal, vm or container`,
		"host:\n  min_cpu_core: 8\n":         "min_cpu_core",
		"host:\n  form: vm\n  nic_gbps: 0\n": "c.yaml:3: host.nic_gbps: 0: a number above 0",
		"host:\n  min_cpu_cores: -1\n":       "c.yaml:2: host.min_cpu_cores: -1",
		"host: [bare-metal]\n":               "c.yaml:1: host: must be a mapping",
		"host:\n  min_memory_gib: lots\n":    "c.yaml:2",
	} {
		_, err := decode(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
