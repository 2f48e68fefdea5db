package host

import (
	"math"
	"path/filepath"
	"testing"
)

// The fixtures' inventories, computed by hand from testdata/README.md.
func TestReadInventory(t *testing.T) {
	bm := ReadInventory(filepath.Join("testdata", "bare-metal"))
	// 8 processors, physical ids 0 and 1, core ids 0 and 1 in each.
	if bm.CPUModel != "Intel(R) Xeon(R) Platinum 8480+" || *bm.Sockets != 2 || *bm.Cores != 4 || *bm.Threads != 8 {
		t.Errorf("cpu %q %v/%v/%v", bm.CPUModel, *bm.Sockets, *bm.Cores, *bm.Threads)
	}
	// 2113411072 kB / 1048576 = 2015 + 530432/1048576 = 2015.505859 GiB
	if bm.MemoryGiB == nil || math.Abs(*bm.MemoryGiB-2015.505859) > 1e-6 {
		t.Errorf("memory %v", bm.MemoryGiB)
	}
	if *bm.NUMANodes != 2 || len(bm.NVMe) != 2 || bm.NVMe[0].Model != "SAMSUNG MZQL23T8HCLS-00A07" || bm.NVMe[0].Bytes != 7501476528*512 {
		t.Errorf("numa %v nvme %+v", *bm.NUMANodes, bm.NVMe)
	}
	// 2 × 7501476528 × 512 B = 7.681512 TB
	if tb := bm.NVMeTB(); tb == nil || math.Abs(*tb-7.681512) > 1e-6 {
		t.Errorf("nvme TB %v", tb)
	}
	if len(bm.NICs) != 1 || bm.NICs[0].Name != "enp65s0f0np0" || bm.NICs[0].Driver != "mlx5_core" || *bm.NICs[0].SpeedMbps != 100000 {
		t.Errorf("nics %+v (docker0 has no device: not a NIC)", bm.NICs)
	}
	if g := bm.MaxNICGbps(); g == nil || *g != 100 {
		t.Errorf("nic gbps %v", g)
	}
	if len(bm.RDMA) != 2 || bm.RDMA[0] != "mlx5_0" || bm.Kernel != "6.8.0-49-generic" {
		t.Errorf("rdma %v kernel %q", bm.RDMA, bm.Kernel)
	}

	kvm := ReadInventory(filepath.Join("testdata", "kvm-guest"))
	if *kvm.Sockets != 2 || *kvm.Cores != 2 || *kvm.Threads != 2 || kvm.NUMANodes == nil || *kvm.NUMANodes != 1 {
		t.Errorf("kvm cpu %v/%v/%v numa %v", *kvm.Sockets, *kvm.Cores, *kvm.Threads, kvm.NUMANodes)
	}
	// virtio reports speed -1: absent, not 0; vda is not NVMe; lo is not a NIC.
	if len(kvm.NICs) != 1 || kvm.NICs[0].SpeedMbps != nil || kvm.NICs[0].Driver != "virtio_net" || kvm.MaxNICGbps() != nil || kvm.NVMeTB() != nil || len(kvm.RDMA) != 0 {
		t.Errorf("kvm nics %+v nvme %v", kvm.NICs, kvm.NVMe)
	}

	// The container fixture has one processor without physical id: no
	// sockets or cores claimed, one thread; no meminfo: memory absent.
	ct := ReadInventory(filepath.Join("testdata", "container"))
	if ct.Sockets != nil || ct.Cores != nil || ct.Threads == nil || *ct.Threads != 1 || ct.MemoryGiB != nil || ct.NUMANodes != nil {
		t.Errorf("container %+v", ct)
	}
}

// The sysfs topology stands in when cpuinfo has no physical id.
func TestReadInventorySysfsTopology(t *testing.T) {
	root := t.TempDir()
	write(t, root, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Neoverse-V2\n\nprocessor\t: 1\n\nprocessor\t: 2\n\n")
	for cpu, pc := range map[string][2]string{"cpu0": {"0", "0"}, "cpu1": {"0", "1"}, "cpu2": {"1", "0"}} {
		write(t, root, "sys/devices/system/cpu/"+cpu+"/topology/physical_package_id", pc[0]+"\n")
		write(t, root, "sys/devices/system/cpu/"+cpu+"/topology/core_id", pc[1]+"\n")
	}
	in := ReadInventory(root)
	if in.Sockets == nil || *in.Sockets != 2 || *in.Cores != 3 || *in.Threads != 3 || in.CPUModel != "Neoverse-V2" {
		t.Errorf("%+v", in)
	}
}
