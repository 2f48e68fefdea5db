package tui

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU names the calling OS thread and the CPU time it has used
// (clock_gettime CLOCK_THREAD_CPUTIME_ID, to the nanosecond): a frame's
// own work, apart from the time the thread waited for a CPU on a shared
// machine. The thread is -1 when unknown.
func threadCPU() (int, time.Duration) {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	tid := syscall.Gettid()
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return -1, 0
	}
	return tid, time.Duration(ts.Nano())
}
