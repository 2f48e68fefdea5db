package host

import (
	"os"
	"path/filepath"
	"strings"
)

// Delivery forms of a machine.
const (
	FormBareMetal = "bare-metal"
	FormVM        = "vm"
	FormContainer = "container"
	// FormUnknown: no marker either way (no DMI, no hypervisor flag, no
	// container marker); nothing is claimed.
	FormUnknown = "unknown"
)

// Form is how the machine is delivered, with the evidence read.
type Form struct {
	// Kind is FormBareMetal, FormVM, FormContainer or FormUnknown.
	Kind string `json:"form"`
	// Hypervisor names the virtual machine's hypervisor (kvm, qemu,
	// vmware, xen, microsoft, oracle, amazon, google, bhyve, parallels,
	// bochs), "unknown" when only the cpuinfo flag says there is one, ""
	// when none is seen. A container may run in a VM: both are set.
	Hypervisor string `json:"hypervisor,omitempty"`
	// Container names the runtime (docker, podman, lxc, kubernetes,
	// systemd-nspawn, wsl, or the container= value), "" outside one.
	Container string `json:"container,omitempty"`
	// Evidence lists each marker found, as "file: value".
	Evidence []string `json:"evidence"`
}

// fsRoot reads files under a root directory ("/" on the machine).
type fsRoot string

func (r fsRoot) path(p string) string { return filepath.Join(string(r), p) }

// read returns the file's content trimmed, "" when absent or unreadable.
func (r fsRoot) read(p string) string {
	b, err := os.ReadFile(r.path(p))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r fsRoot) exists(p string) bool {
	_, err := os.Lstat(r.path(p))
	return err == nil
}

// dmiVendors maps a DMI string's prefix to the hypervisor it names, as
// the vendors set them (sys_vendor "QEMU", product_name "KVM", bios_vendor
// "innotek GmbH" …). Order matters: the longer, more specific first.
var dmiVendors = []struct{ prefix, hv string }{
	{"Amazon EC2", "amazon"},
	{"Google Compute Engine", "google"},
	{"OpenStack", "kvm"},
	{"KubeVirt", "kvm"},
	{"KVM", "kvm"},
	{"QEMU", "qemu"},
	{"VMware", "vmware"},
	{"VMW", "vmware"},
	{"innotek GmbH", "oracle"},
	{"VirtualBox", "oracle"},
	{"Xen", "xen"},
	{"Bochs", "bochs"},
	{"Parallels", "parallels"},
	{"BHYVE", "bhyve"},
	{"Apple Virtualization", "apple"},
}

// DetectForm reads the delivery form under root ("/" on the machine).
func DetectForm(root string) Form {
	r := fsRoot(root)
	var f Form
	f.Container = r.container(&f.Evidence)
	f.Hypervisor = r.hypervisor(&f.Evidence)
	switch {
	case f.Container != "":
		f.Kind = FormContainer
	case f.Hypervisor != "":
		f.Kind = FormVM
	case r.read("sys/class/dmi/id/sys_vendor") != "" || r.read("sys/class/dmi/id/board_vendor") != "":
		// DMI readable and naming a maker, no hypervisor anywhere: the
		// firmware is the machine's own.
		f.Kind = FormBareMetal
		for _, k := range []string{"sys_vendor", "product_name", "board_vendor", "bios_vendor"} {
			if v := r.read("sys/class/dmi/id/" + k); v != "" {
				f.Evidence = append(f.Evidence, "/sys/class/dmi/id/"+k+": "+v)
			}
		}
		f.Evidence = append(f.Evidence, "/proc/cpuinfo: no hypervisor flag")
	default:
		f.Kind = FormUnknown
	}
	return f
}

// container names the container runtime from its markers, "" when none.
func (r fsRoot) container(ev *[]string) string {
	// systemd and most runtimes set container= for PID 1.
	for _, p := range []string{"run/systemd/container", "proc/1/environ"} {
		v := r.read(p)
		if p == "proc/1/environ" {
			v = envValue(v, "container")
		}
		if v != "" {
			*ev = append(*ev, "/"+p+": container="+v)
			return normaliseRuntime(v)
		}
	}
	if r.exists("run/.containerenv") {
		*ev = append(*ev, "/run/.containerenv: present")
		return "podman"
	}
	if r.exists(".dockerenv") {
		*ev = append(*ev, "/.dockerenv: present")
		return "docker"
	}
	if k := envValue(r.read("proc/1/environ"), "KUBERNETES_SERVICE_HOST"); k != "" {
		*ev = append(*ev, "/proc/1/environ: KUBERNETES_SERVICE_HOST set")
		return "kubernetes"
	}
	for _, p := range []string{"proc/1/cgroup", "proc/self/cgroup"} {
		for _, l := range strings.Split(r.read(p), "\n") {
			if rt := cgroupRuntime(l); rt != "" {
				*ev = append(*ev, "/"+p+": "+l)
				return rt
			}
		}
	}
	for _, l := range strings.Split(r.read("proc/self/mountinfo"), "\n") {
		switch {
		case strings.Contains(l, "/docker/containers/"):
			*ev = append(*ev, "/proc/self/mountinfo: "+l)
			return "docker"
		case strings.Contains(l, "/kubelet/pods/"):
			*ev = append(*ev, "/proc/self/mountinfo: "+l)
			return "kubernetes"
		}
	}
	if rel := r.read("proc/sys/kernel/osrelease"); strings.Contains(strings.ToLower(rel), "microsoft") {
		*ev = append(*ev, "/proc/sys/kernel/osrelease: "+rel)
		return "wsl"
	}
	return ""
}

// cgroupRuntime names the runtime a /proc/PID/cgroup line's path shows.
func cgroupRuntime(l string) string {
	i := strings.LastIndexByte(l, ':')
	if i < 0 {
		return ""
	}
	p := l[i+1:]
	switch {
	case strings.Contains(p, "kubepods"):
		return "kubernetes"
	case strings.Contains(p, "/docker/") || strings.Contains(p, "docker-"):
		return "docker"
	case strings.Contains(p, "libpod"):
		return "podman"
	case strings.HasPrefix(p, "/lxc/") || strings.Contains(p, "lxc.payload"):
		return "lxc"
	case strings.Contains(p, "machine.slice/machine-"):
		return "systemd-nspawn"
	}
	return ""
}

func normaliseRuntime(v string) string {
	switch v {
	case "oci":
		return "docker"
	case "lxc-libvirt":
		return "lxc"
	}
	return v
}

// envValue is the value of key in a NUL-separated environment block.
func envValue(env, key string) string {
	for _, kv := range strings.Split(env, "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// hypervisor names the hypervisor under the machine, "" when none is seen.
func (r fsRoot) hypervisor(ev *[]string) string {
	hv := ""
	for _, k := range []string{"sys_vendor", "product_name", "board_vendor", "bios_vendor"} {
		v := r.read("sys/class/dmi/id/" + k)
		if v == "" {
			continue
		}
		for _, d := range dmiVendors {
			if strings.HasPrefix(v, d.prefix) {
				*ev = append(*ev, "/sys/class/dmi/id/"+k+": "+v)
				if hv == "" || hv == "qemu" {
					hv = d.hv
				}
				break
			}
		}
		// Hyper-V: "Microsoft Corporation" makes hardware too; its VM's
		// product is "Virtual Machine".
		if k == "product_name" && v == "Virtual Machine" && r.read("sys/class/dmi/id/sys_vendor") == "Microsoft Corporation" {
			*ev = append(*ev, "/sys/class/dmi/id/sys_vendor: Microsoft Corporation, product_name: Virtual Machine")
			hv = "microsoft"
		}
	}
	// A paravirtual guest registers its hypervisor's clock: QEMU with KVM
	// acceleration shows DMI "QEMU" and the kvm-clock.
	clocks := r.read("sys/devices/system/clocksource/clocksource0/available_clocksource")
	for _, c := range []struct{ name, hv string }{{"kvm-clock", "kvm"}, {"xen", "xen"}, {"hyperv_clocksource", "microsoft"}} {
		if strings.Contains(clocks, c.name) {
			*ev = append(*ev, "/sys/devices/system/clocksource/clocksource0/available_clocksource: "+clocks)
			if hv == "" || hv == "qemu" {
				hv = c.hv
			}
			break
		}
	}
	if t := r.read("sys/hypervisor/type"); t != "" {
		*ev = append(*ev, "/sys/hypervisor/type: "+t)
		if hv == "" {
			hv = t
		}
	}
	if cpuFlag(r.read("proc/cpuinfo"), "hypervisor") {
		*ev = append(*ev, "/proc/cpuinfo: hypervisor flag")
		if hv == "" {
			hv = "unknown"
		}
	}
	return hv
}

// cpuFlag reports whether the first CPU's flags line holds flag.
func cpuFlag(cpuinfo, flag string) bool {
	for _, l := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(k) != "flags" {
			continue
		}
		for _, f := range strings.Fields(v) {
			if f == flag {
				return true
			}
		}
		return false
	}
	return false
}
