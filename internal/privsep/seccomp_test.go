package privsep

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp program, run in x/net/bpf's virtual machine over a struct
// seccomp_data per case. The machine loads words in network order and the
// kernel in the host's, so each field is written big-endian here: the
// program sees the same numbers either way.
func TestSeccompRefusesHeaderIncludeOnly(t *testing.T) {
	arch := seccompArch()
	if arch == 0 {
		t.Skip("no seccomp filter on this architecture")
	}
	vm, err := bpf.NewVM(noHeaderInclude(arch))
	if err != nil {
		t.Fatal(err)
	}
	data := func(a, nr, level, opt uint32) []byte {
		b := make([]byte, 64) // nr, arch, ip, args[6]
		binary.BigEndian.PutUint32(b[0:], nr)
		binary.BigEndian.PutUint32(b[4:], a)
		binary.BigEndian.PutUint32(b[24:], level)
		binary.BigEndian.PutUint32(b[32:], opt)
		return b
	}
	const setsockopt, getsockopt, socket = unix.SYS_SETSOCKOPT, unix.SYS_GETSOCKOPT, unix.SYS_SOCKET
	allow, deny := int(unix.SECCOMP_RET_ALLOW), int(unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	for _, c := range []struct {
		name string
		in   []byte
		want int
	}{
		{"IP_HDRINCL", data(arch, setsockopt, 0, 3), deny},
		{"IPV6_HDRINCL", data(arch, setsockopt, 41, 36), deny},
		{"IP_TTL", data(arch, setsockopt, 0, 2), allow},
		{"IPV6_UNICAST_HOPS", data(arch, setsockopt, 41, 16), allow},
		{"option 36 at the IPv4 level", data(arch, setsockopt, 0, 36), allow},
		{"option 3 at SOL_SOCKET (SO_TYPE)", data(arch, setsockopt, 1, 3), allow},
		{"SO_RCVBUF", data(arch, setsockopt, 1, 8), allow},
		{"getsockopt IP_HDRINCL", data(arch, getsockopt, 0, 3), allow},
		{"socket", data(arch, socket, 2, 3), allow},
		{"x32 setsockopt", data(arch, 0x40000000|541, 0, 3), deny},
		{"x32 socket", data(arch, 0x40000000|socket, 2, 3), deny},
		{"i386 ABI", data(unix.AUDIT_ARCH_I386, 102, 0, 0), deny},
	} {
		got, err := vm.Run(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
}
