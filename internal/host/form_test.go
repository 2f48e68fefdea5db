package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each fixture root is detected as its README says, with the files that
// say so among the evidence.
func TestDetectFormOnFixtures(t *testing.T) {
	for _, tc := range []struct {
		root, kind, hv, ctr string
		evidence            []string
	}{
		{"kvm-guest", FormVM, "kvm", "", []string{"/sys/class/dmi/id/sys_vendor: QEMU", "kvm-clock", "/proc/cpuinfo: hypervisor flag"}},
		{"bare-metal", FormBareMetal, "", "", []string{"/sys/class/dmi/id/sys_vendor: Supermicro", "/proc/cpuinfo: no hypervisor flag"}},
		{"hyperv-guest", FormVM, "microsoft", "", []string{"product_name: Virtual Machine", "hyperv_clocksource_tsc_page"}},
		{"container", FormContainer, "unknown", "docker", []string{"/.dockerenv: present", "/proc/cpuinfo: hypervisor flag"}},
	} {
		t.Run(tc.root, func(t *testing.T) {
			f := DetectForm(filepath.Join("testdata", tc.root))
			if f.Kind != tc.kind || f.Hypervisor != tc.hv || f.Container != tc.ctr {
				t.Errorf("got %s/%q/%q, want %s/%q/%q", f.Kind, f.Hypervisor, f.Container, tc.kind, tc.hv, tc.ctr)
			}
			ev := strings.Join(f.Evidence, "\n")
			for _, w := range tc.evidence {
				if !strings.Contains(ev, w) {
					t.Errorf("evidence lacks %q:\n%s", w, ev)
				}
			}
		})
	}
	// An empty root claims nothing.
	if f := DetectForm(t.TempDir()); f.Kind != FormUnknown || len(f.Evidence) != 0 {
		t.Errorf("empty root: %+v", f)
	}
}

// The container markers of each runtime, one root each: container= of
// PID 1 (systemd-nspawn and lxc set it), podman's /run/.containerenv, and
// the cgroup paths docker (cgroupfs and systemd drivers), kubernetes,
// podman and lxc give their processes.
func TestDetectFormContainerMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"nspawn environ", "proc/1/environ", "PATH=/usr/bin\x00container=systemd-nspawn\x00", "systemd-nspawn"},
		{"lxc environ", "proc/1/environ", "container=lxc\x00", "lxc"},
		{"podman containerenv", "run/.containerenv", "engine=\"podman-4.9.3\"\n", "podman"},
		{"docker cgroupfs", "proc/self/cgroup", "12:devices:/docker/3f1c6e2b9a\n", "docker"},
		{"docker systemd", "proc/self/cgroup", "0::/system.slice/docker-3f1c6e2b9a.scope\n", "docker"},
		{"kubernetes", "proc/self/cgroup", "0::/kubepods.slice/kubepods-besteffort.slice/cri-containerd-ab12.scope\n", "kubernetes"},
		{"podman cgroup", "proc/self/cgroup", "0::/machine.slice/libpod-ab12.scope/container\n", "podman"},
		{"lxc cgroup", "proc/self/cgroup", "0::/lxc.payload.web1\n", "lxc"},
		{"wsl", "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n", "wsl"},
		{"host cgroup", "proc/self/cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, tc.file)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			f := DetectForm(root)
			if f.Container != tc.want {
				t.Errorf("container %q, want %q (evidence %q)", f.Container, tc.want, f.Evidence)
			}
			if tc.want != "" && f.Kind != FormContainer {
				t.Errorf("form %s", f.Kind)
			}
		})
	}
}

// On this machine, systemd-detect-virt is the oracle for the container
// runtime and for whether there is a VM at all (it also reads CPUID, so
// its VM vendor may be named where ours is "unknown").
func TestDetectFormAgreesWithSystemdDetectVirt(t *testing.T) {
	if _, err := exec.LookPath("systemd-detect-virt"); err != nil {
		t.Skip("systemd-detect-virt not installed: no oracle here")
	}
	out := func(args ...string) string {
		b, _ := exec.Command("systemd-detect-virt", args...).Output()
		return strings.TrimSpace(string(b))
	}
	f := DetectForm("/")
	if c := out("--container"); c != "none" && c != "" {
		if f.Container != normaliseRuntime(c) {
			t.Errorf("container %q, systemd-detect-virt --container says %q (evidence %q)", f.Container, c, f.Evidence)
		}
	} else if f.Container != "" {
		t.Errorf("container %q, systemd-detect-virt --container says none", f.Container)
	}
	vm := out("--vm")
	if (vm != "none" && vm != "") != (f.Hypervisor != "") {
		t.Errorf("hypervisor %q, systemd-detect-virt --vm says %q (evidence %q)", f.Hypervisor, vm, f.Evidence)
	}
}
