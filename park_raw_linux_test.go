//go:build linux

package knit

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The limit for a parked wake: bare futex(2) calls, private, untimed,
// blocking through Syscall6 like FutexWait, with no user-space
// bookkeeping at all. Defined here, not through FutexWait, so the limit
// is the kernel's even in a -tags knit_futex_fallback build.

func rawFutexWait(addr *atomic.Uint32, val uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), 0|128, uintptr(val), 0, 0, 0)
}

func rawFutexWake(addr *atomic.Uint32) {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), 1|128, 1, 0, 0, 0)
}
