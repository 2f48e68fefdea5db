package host

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Inventory is what the machine holds, as the kernel reports it. A figure
// the files do not give is nil, never 0.
type Inventory struct {
	CPUModel string `json:"cpu_model"`
	// Sockets, Cores (physical) and Threads (logical CPUs).
	Sockets *int `json:"sockets"`
	Cores   *int `json:"cores"`
	Threads *int `json:"threads"`
	// MemoryGiB is MemTotal of /proc/meminfo in GiB.
	MemoryGiB *float64 `json:"memory_gib"`
	NUMANodes *int     `json:"numa_nodes"`
	NVMe      []Disk   `json:"nvme"`
	NICs      []NIC    `json:"nics"`
	// RDMA lists the devices of /sys/class/infiniband (mlx5_0 …).
	RDMA   []string `json:"rdma"`
	Kernel string   `json:"kernel"`
}

// Disk is one NVMe namespace.
type Disk struct {
	Name  string `json:"name"`
	Model string `json:"model,omitempty"`
	Bytes int64  `json:"bytes"`
}

// NIC is one physical network interface (one with a device behind it).
type NIC struct {
	Name string `json:"name"`
	// SpeedMbps is nil when the link is down or the driver does not say.
	SpeedMbps *int   `json:"speed_mbps"`
	Driver    string `json:"driver"`
}

// NVMeTB is the NVMe capacity in TB (10^12 bytes), nil without a disk.
func (in Inventory) NVMeTB() *float64 {
	if len(in.NVMe) == 0 {
		return nil
	}
	var b int64
	for _, d := range in.NVMe {
		b += d.Bytes
	}
	tb := float64(b) / 1e12
	return &tb
}

// MaxNICGbps is the fastest NIC's speed in Gbit/s, nil when none says.
func (in Inventory) MaxNICGbps() *float64 {
	var best *float64
	for _, n := range in.NICs {
		if n.SpeedMbps != nil {
			g := float64(*n.SpeedMbps) / 1000
			if best == nil || g > *best {
				best = &g
			}
		}
	}
	return best
}

// ReadInventory reads the inventory under root ("/" on the machine).
func ReadInventory(root string) Inventory {
	r := fsRoot(root)
	var in Inventory
	in.Kernel = r.read("proc/sys/kernel/osrelease")
	r.cpus(&in)
	for _, l := range strings.Split(r.read("proc/meminfo"), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					g := kb / (1 << 20)
					in.MemoryGiB = &g
				}
			}
		}
	}
	if nodes := r.glob("sys/devices/system/node/node[0-9]*"); len(nodes) > 0 {
		n := len(nodes)
		in.NUMANodes = &n
	}
	for _, p := range r.glob("sys/block/nvme*") {
		name := filepath.Base(p)
		sectors, err := strconv.ParseInt(r.read("sys/block/"+name+"/size"), 10, 64)
		if err != nil {
			continue
		}
		// /sys/block/*/size counts 512-byte sectors whatever the block size.
		d := Disk{Name: name, Bytes: sectors * 512}
		if ctrl, _, ok := strings.Cut(strings.TrimPrefix(name, "nvme"), "n"); ok {
			d.Model = r.read("sys/class/nvme/nvme" + ctrl + "/model")
		}
		in.NVMe = append(in.NVMe, d)
	}
	for _, p := range r.glob("sys/class/net/*") {
		name := filepath.Base(p)
		if !r.exists("sys/class/net/" + name + "/device") {
			continue // lo, bridges, veths, tunnels: no device behind them
		}
		n := NIC{Name: name}
		if s, err := strconv.Atoi(r.read("sys/class/net/" + name + "/speed")); err == nil && s > 0 {
			n.SpeedMbps = &s
		}
		if t, err := os.Readlink(r.path("sys/class/net/" + name + "/device/driver")); err == nil {
			n.Driver = filepath.Base(t)
		}
		in.NICs = append(in.NICs, n)
	}
	for _, p := range r.glob("sys/class/infiniband/*") {
		in.RDMA = append(in.RDMA, filepath.Base(p))
	}
	return in
}

func (r fsRoot) glob(pattern string) []string {
	m, _ := filepath.Glob(r.path(pattern))
	sort.Strings(m)
	return m
}

// cpus fills the CPU model and counts from /proc/cpuinfo, or from the
// sysfs topology when cpuinfo has no physical id (some VMs, arm64).
func (r fsRoot) cpus(in *Inventory) {
	threads := 0
	sockets := map[string]bool{}
	cores := map[string]bool{}
	phys, core := "", ""
	flush := func() {
		if phys != "" {
			sockets[phys] = true
			cores[phys+"/"+core] = true
		}
		phys, core = "", ""
	}
	for _, l := range strings.Split(r.read("proc/cpuinfo"), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			flush()
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			threads++
		case "model name":
			if in.CPUModel == "" {
				in.CPUModel = v
			}
		case "physical id":
			phys = v
		case "core id":
			core = v
		}
	}
	flush()
	if len(sockets) == 0 {
		for _, p := range r.glob("sys/devices/system/cpu/cpu[0-9]*") {
			cpu := strings.TrimPrefix(p, r.path(""))
			pkg := r.read(cpu + "/topology/physical_package_id")
			if pkg == "" {
				continue
			}
			sockets[pkg] = true
			cores[pkg+"/"+r.read(cpu+"/topology/core_id")] = true
		}
	}
	if threads > 0 {
		in.Threads = &threads
	}
	if len(sockets) > 0 {
		s, c := len(sockets), len(cores)
		in.Sockets, in.Cores = &s, &c
	}
}
