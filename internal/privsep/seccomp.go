package privsep

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A raw socket sends whatever its holder writes after the IP header the
// kernel builds, from one of the host's own addresses. With IP_HDRINCL
// (IPV6_HDRINCL) the holder writes that header too, source address
// included. No probe of serve, backtrace or tui needs it (trace --nat,
// which does, runs without the split), and the helper cannot stop the
// holder of a descriptor from setting it; so the command itself refuses it
// for good: a seccomp filter on every thread answers EPERM to setsockopt
// of either option, whatever the command later runs.

// seccompArch is the audit architecture of this build's system calls; 0
// where the filter is not written (other architectures go without it).
func seccompArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// noHeaderInclude is the seccomp program: setsockopt(IPPROTO_IP,
// IP_HDRINCL) and setsockopt(IPPROTO_IPV6, IPV6_HDRINCL) fail with EPERM,
// as does any system call of another ABI (x32, or i386 on amd64, where
// setsockopt has other numbers); everything else is allowed.
func noHeaderInclude(arch uint32) []bpf.Instruction {
	const (
		nr      = 0 // offsets in struct seccomp_data
		archOff = 4
		arg1    = 16 + 8  // the low half (little-endian) of args[1]: level
		arg2    = 16 + 16 // of args[2]: optname
		x32     = 0x40000000
		allow   = unix.SECCOMP_RET_ALLOW
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: archOff, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipFalse: 13}, // → deny
		bpf.LoadAbsolute{Off: nr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32, SkipTrue: 11},               // → deny
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SETSOCKOPT, SkipFalse: 9}, // → allow
		bpf.LoadAbsolute{Off: arg1, Size: 4},                                    // level
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.IPPROTO_IP, SkipFalse: 2},     // → IPv6?
		bpf.LoadConstant{Dst: bpf.RegA, Val: unix.IP_HDRINCL},                   // the option to refuse
		bpf.Jump{Skip: 2}, // → compare
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.IPPROTO_IPV6, SkipFalse: 4}, // → allow
		bpf.LoadConstant{Dst: bpf.RegA, Val: unix.IPV6_HDRINCL},
		bpf.TAX{},
		bpf.LoadAbsolute{Off: arg2, Size: 4}, // optname
		bpf.JumpIfX{Cond: bpf.JumpEqual, SkipTrue: 1},
		bpf.RetConstant{Val: allow},
		bpf.RetConstant{Val: deny},
	}
}

// refuseHeaderInclude installs noHeaderInclude on every thread of the
// process (SECCOMP_FILTER_FLAG_TSYNC); no_new_privs is already set.
func refuseHeaderInclude() error {
	arch := seccompArch()
	if arch == 0 {
		return nil
	}
	raw, err := bpf.Assemble(noHeaderInclude(arch))
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(f)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not take the filter", r)
	}
	return nil
}
