//go:build linux && !knit_futex_fallback

package knit

import (
	"math"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futex(2) on Linux. The operations are from linux/futex.h; x/sys/unix
// has the syscall number but not these.
const (
	_FUTEX_WAIT         = 0
	_FUTEX_WAKE         = 1
	_FUTEX_PRIVATE_FLAG = 128 // the word is not shared with another process: the kernel keys it by (mm, address), skipping the page lookup
)

// maxFutexTimeout bounds one timed wait so the timespec fits a 32-bit
// time_t (386, arm): a longer timeout just returns ErrTimeout after 34
// years.
const maxFutexTimeout = time.Duration(1<<30) * time.Second

// FutexWait sleeps while *addr == val, until FutexWake on addr or the
// timeout (timeout <= 0: none). The check and the sleep are atomic with
// respect to FutexWake, so a waker that changes the word and then wakes
// is never slept through. It returns nil when woken, when *addr != val on
// entry, or spuriously (re-check in a loop), and ErrTimeout once the
// timeout passes. It blocks the OS thread, so it suits goroutines locked
// to their threads; others should wait on an Event. The word is
// private to this process.
func FutexWait(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	return futexWait(addr, val, timeout, _FUTEX_WAIT|_FUTEX_PRIVATE_FLAG)
}

// FutexWake wakes up to n goroutines sleeping in FutexWait on addr and
// returns how many it woke. n <= 0 does nothing (and no syscall).
func FutexWake(addr *atomic.Uint32, n int) int {
	return futexWake(addr, n, _FUTEX_WAKE|_FUTEX_PRIVATE_FLAG)
}

// FutexWaitShared is FutexWait for a word in memory mapped by several
// processes (MAP_SHARED): the kernel keys the sleeper by the page, not by
// this process's address space, so a FutexWakeShared in another process
// that maps the same page reaches it.
func FutexWaitShared(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	return futexWait(addr, val, timeout, _FUTEX_WAIT)
}

// FutexWakeShared is FutexWake for FutexWaitShared sleepers, in this or
// any other process mapping the word.
func FutexWakeShared(addr *atomic.Uint32, n int) int {
	return futexWake(addr, n, _FUTEX_WAKE)
}

func futexWait(addr *atomic.Uint32, val uint32, timeout time.Duration, op uintptr) error {
	deadline := futexDeadline(timeout)
	for {
		var errno unix.Errno
		if deadline.IsZero() {
			_, _, errno = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), op, uintptr(val), 0, 0, 0)
		} else {
			// FUTEX_WAIT takes a relative timeout on CLOCK_MONOTONIC.
			ts := unix.NsecToTimespec(int64(min(timeout, maxFutexTimeout)))
			_, _, errno = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), op, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		switch errno {
		case 0, unix.EAGAIN:
			// Woken (or spuriously), or *addr != val when the kernel
			// looked: either way the caller re-checks.
			return nil
		case unix.ETIMEDOUT:
			return ErrTimeout
		case unix.EINTR:
			// A signal handler ran. An untimed wait is restarted by the
			// kernel itself (SA_RESTART); a timed one comes back here
			// and resumes with what is left of its timeout.
			futexIntr.Add(1)
			var ok bool
			if timeout, ok = futexRemaining(deadline); !ok {
				return ErrTimeout
			}
			futexIntrLeft.Store(int64(timeout))
		default:
			// EFAULT (addr not mapped), EINVAL (misaligned), ENOSYS:
			// programmer or platform errors, not wake-ups.
			return os.NewSyscallError("futex", errno)
		}
	}
}

// futexWake uses RawSyscall6: FUTEX_WAKE never blocks (the runtime's own
// futexwakeup is a raw syscall too), and the scheduler hand-off of
// Syscall6 would add its cost to every wake for nothing.
func futexWake(addr *atomic.Uint32, n int, op uintptr) int {
	if n <= 0 {
		return 0
	}
	r, _, errno := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), op, uintptr(min(n, math.MaxInt32)), 0, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(r)
}
