//go:build unix

package ingest

import (
	"os"
	"syscall"
	"unsafe"
)

// mapFile maps a regular file of at least 64 KB read-only into memory; ok is
// false when it cannot (small, not regular, or mmap failed): read it instead.
func mapFile(f *os.File) (data []byte, unmap func(), ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 64<<10 || st.Size() != int64(int(st.Size())) {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { syscall.Munmap(data) }, true
}

// dropPages releases the whole pages inside b, part of a mapping made by
// mapFile, from this process; reading them again faults them back in.
func dropPages(b []byte) {
	if len(b) == 0 {
		return
	}
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (start + ps - 1) &^ (ps - 1)
	hi := (start + uintptr(len(b))) &^ (ps - 1)
	if hi > lo {
		syscall.Madvise(b[lo-start:hi-start], syscall.MADV_DONTNEED)
	}
}
