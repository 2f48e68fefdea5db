package interconnect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ibstat(t *testing.T, name string) []IBPort {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseIBStat(b, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseIBStat(t *testing.T) {
	ro := ibstat(t, "ibstat-mooncake-roce.txt")
	if len(ro) != 3 || ro[0].CA != "mlx5_0" || ro[0].State != "Active" || *ro[0].RateGbps != 200 || ro[0].LinkLayer != "Ethernet" ||
		ro[2].CA != "mlx5_10" || ro[2].State != "Down" || ro[2].RateGbps != nil {
		t.Errorf("%+v", ro)
	}
	m4 := ibstat(t, "ibstat-rdma-core-mlx4.txt")
	if len(m4) != 2 || m4[1].Port != 2 || *m4[1].RateGbps != 56 || m4[1].LinkLayer != "" || m4[0].LinkLayer != "InfiniBand" {
		t.Errorf("%+v", m4)
	}
	if _, err := ParseIBStat([]byte("ibwarn: nothing\n"), "x"); err == nil || !strings.Contains(err.Error(), "no CA port") {
		t.Errorf("%v", err)
	}
	if _, err := ParseIBStat([]byte("CA 'a'\n\tPort 1:\n\t\tRate: fast\n"), "x"); err == nil || !strings.Contains(err.Error(), "x:3: rate") {
		t.Errorf("%v", err)
	}
}

func TestCheckIB(t *testing.T) {
	two, hdr := 2, 200.0
	// One HDR InfiniBand port (the ibpanic line skipped): 1 < 2 ports, 200 ≥ 200.
	c := CheckIB(ibstat(t, "ibstat-gpud-mlx5_7.txt"), &two, &hdr)
	if c[0].Pass || c[0].Measured != 1 || !c[1].Pass || c[1].Measured != 200.0 {
		t.Errorf("%+v", c)
	}
	// RoCE ports are not InfiniBand ports.
	c = CheckIB(ibstat(t, "ibstat-mooncake-roce.txt"), &two, &hdr)
	if c[0].Pass || c[0].Measured != 0 || !strings.Contains(c[0].Note, "2 active RoCE") || c[1].Pass || c[1].Measured != nil {
		t.Errorf("%+v", c)
	}
	// mlx4 port 2 is active but its link layer is not in the listing: not counted.
	one := 1
	if c = CheckIB(ibstat(t, "ibstat-rdma-core-mlx4.txt"), &one, nil); len(c) != 1 || c[0].Pass {
		t.Errorf("%+v", c)
	}
}
