//go:build darwin && !knit_futex_fallback

package knit

import (
	"math"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The futex layer on darwin: the ulock calls behind libc's os_unfair_lock
// and C++ atomic wait. They are private libSystem API, stable since macOS
// 10.12 (__ulock_wait2, with a 64-bit nanosecond timeout, since macOS 11;
// Go itself needs macOS 12). Calls go through libSystem, as every darwin
// syscall of a Go program must: a trampoline per function in
// futex_darwin.s jumps to the symbol that //go:cgo_import_dynamic binds,
// and syscall.syscall6, pushed to us by the runtime, runs it on the system
// stack with entersyscall/exitsyscall around it, so a blocked wait hands
// its P to the scheduler like any blocking syscall. No cgo is involved.

// From xnu bsd/sys/ulock.h.
const (
	_UL_COMPARE_AND_WAIT        = 1          // private 32-bit compare-and-wait
	_UL_COMPARE_AND_WAIT_SHARED = 3          // the same, keyed by the physical page, for memory shared between processes
	_ULF_WAKE_ALL               = 0x100      // __ulock_wake: wake every sleeper
	_ULF_NO_ERRNO               = 0x01000000 // return -errno instead of -1 and errno: no thread-local errno to fetch
)

// FutexWait sleeps while *addr == val, until FutexWake on addr or the
// timeout (timeout <= 0: none). The check and the sleep are atomic with
// respect to FutexWake, so a waker that changes the word and then wakes
// is never slept through. It returns nil when woken, when *addr != val on
// entry, or spuriously (re-check in a loop), and ErrTimeout once the
// timeout passes. It blocks the OS thread, so it suits goroutines locked
// to their threads; others should wait on an Event. The word is
// private to this process.
func FutexWait(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	return ulockWait(_UL_COMPARE_AND_WAIT, addr, val, timeout)
}

// FutexWake wakes up to n goroutines sleeping in FutexWait on addr and
// returns how many it woke. ulock wakes one or all: n == 1 is one call;
// 1 < n < all is that many single wakes, stopping at the first that finds
// nobody (so the count is exact); n >= math.MaxInt32 is one wake-all
// call, which reports only whether anyone was there (returns 1 or 0).
func FutexWake(addr *atomic.Uint32, n int) int {
	return ulockWake(_UL_COMPARE_AND_WAIT, addr, n)
}

// FutexWaitShared is FutexWait for a word in memory mapped by several
// processes: UL_COMPARE_AND_WAIT_SHARED keys the sleeper by the page, so
// a FutexWakeShared in another process mapping it reaches it.
func FutexWaitShared(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	return ulockWait(_UL_COMPARE_AND_WAIT_SHARED, addr, val, timeout)
}

// FutexWakeShared is FutexWake for FutexWaitShared sleepers, in this or
// any other process mapping the word.
func FutexWakeShared(addr *atomic.Uint32, n int) int {
	return ulockWake(_UL_COMPARE_AND_WAIT_SHARED, addr, n)
}

func ulockWait(op uintptr, addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	deadline := futexDeadline(timeout)
	for {
		// timeout 0 means forever to __ulock_wait2; value2 is unused by
		// the compare-and-wait operations.
		var ns uintptr
		if !deadline.IsZero() {
			ns = uintptr(max(timeout, 1))
		}
		r, _, _ := syscall_syscall6(libc___ulock_wait2_trampoline_addr,
			op|_ULF_NO_ERRNO, uintptr(unsafe.Pointer(addr)), uintptr(val), ns, 0, 0)
		// With ULF_NO_ERRNO the result is -errno on failure, otherwise
		// the number of sleepers left; a mismatching value returns at
		// once without error.
		switch e := syscall.Errno(-int32(r)); {
		case int32(r) >= 0:
			return nil
		case e == syscall.ETIMEDOUT:
			return ErrTimeout
		case e == syscall.EINTR:
			futexIntr.Add(1)
			var ok bool
			if timeout, ok = futexRemaining(deadline); !ok {
				return ErrTimeout
			}
			futexIntrLeft.Store(int64(timeout))
		case e == syscall.EFAULT:
			// The kernel could not read the word without faulting the
			// page in (it holds locks while it reads): touch it from
			// here and go round; the caller re-checks anyway.
			addr.Load()
			return nil
		default:
			return os.NewSyscallError("__ulock_wait2", e)
		}
	}
}

func ulockWake(op uintptr, addr *atomic.Uint32, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= math.MaxInt32 {
		if ulockWake1(op|_ULF_WAKE_ALL, addr) {
			return 1
		}
		return 0
	}
	woke := 0
	for woke < n && ulockWake1(op, addr) {
		woke++
	}
	return woke
}

// ulockWake1 reports whether the wake found a sleeper (ENOENT: none).
// EINTR is retried: the wake did not happen.
func ulockWake1(op uintptr, addr *atomic.Uint32) bool {
	for {
		r, _, _ := syscall_syscall6(libc___ulock_wake_trampoline_addr,
			op|_ULF_NO_ERRNO, uintptr(unsafe.Pointer(addr)), 0, 0, 0, 0)
		if int32(r) >= 0 {
			return true
		}
		if syscall.Errno(-int32(r)) != syscall.EINTR {
			return false
		}
	}
}

// syscall6 is the runtime's libc call with entersyscall/exitsyscall, the
// one golang.org/x/sys/unix uses; the runtime pushes it to package syscall
// and keeps its signature for exactly such callers.
//
//go:linkname syscall_syscall6 syscall.syscall6
func syscall_syscall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)

// The trampolines in futex_darwin.s; their addresses are set there.
var (
	libc___ulock_wait2_trampoline_addr uintptr
	libc___ulock_wake_trampoline_addr  uintptr
)

// int __ulock_wait2(uint32_t operation, void *addr, uint64_t value, uint64_t timeout_ns, uint64_t value2);
//
//go:cgo_import_dynamic libc___ulock_wait2 __ulock_wait2 "/usr/lib/libSystem.B.dylib"

// int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
//
//go:cgo_import_dynamic libc___ulock_wake __ulock_wake "/usr/lib/libSystem.B.dylib"
