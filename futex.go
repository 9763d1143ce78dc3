package knit

import (
	"os"
	"sync/atomic"
	"time"
)

// The futex layer: sleep in the kernel until a 32-bit word changes, and
// wake the sleepers on a word. One mechanism per OS:
//
//	futex_linux.go   futex(2): FUTEX_WAIT / FUTEX_WAKE, private and shared
//	futex_darwin.go  __ulock_wait2 / __ulock_wake through libSystem
//	futex_other.go   a hashed table of wait lists in Go (every other OS,
//	                 and Linux or darwin built with -tags knit_futex_fallback)
//
// The contract is the kernel's: FutexWait sleeps only if *addr == val at
// the moment it is queued, atomically with respect to FutexWake on the
// same address, so a waker that changes the word and then wakes can never
// be slept through. Every wait may also return early for no reason
// (a signal, a wake meant for someone else, an emulator): callers always
// re-check their condition in a loop.
//
// The blocking calls go through Syscall6 (or the darwin runtime's
// syscall6), never RawSyscall: a raw syscall never tells the scheduler the
// thread is blocked, and an untimed wait there can hang a GOMAXPROCS=1
// process. Even so, a goroutine blocked in FutexWait holds its P until
// sysmon retakes it (a sysmon tick at best, BENCHMARKS.md "Spin layer", and
// only when other work is waiting), so FutexWait is for goroutines
// locked to their threads; other goroutines should park in the runtime
// (Event with BackendRuntime).
//
// Every wait function (FutexWait, FutexWaitShared) takes timeout <= 0 to
// mean no timeout, returns nil when woken, when *addr != val on entry, or
// spuriously, returns ErrTimeout when the timeout passes, and retries
// EINTR itself with the time that is left.

// ErrTimeout is returned by FutexWait and FutexWaitShared when the timeout
// passes. errors.Is(err, os.ErrDeadlineExceeded) is also true for it, so
// code that handles I/O deadlines handles it too.
var ErrTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string { return "knit: futex wait timed out" }
func (timeoutError) Timeout() bool { return true }

// Is makes errors.Is(ErrTimeout, os.ErrDeadlineExceeded) true.
func (timeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

// futexIntr counts waits interrupted by a signal (EINTR) and retried, and
// futexIntrLeft is the timeout (ns) the latest retry resumed with. They
// are touched only on that rare path; the tests read them to prove the
// retry ran and did not restart the full timeout.
var (
	futexIntr     atomic.Uint64
	futexIntrLeft atomic.Int64
)

// futexDeadline turns a relative timeout into an absolute monotonic
// deadline, or the zero Time for no timeout.
func futexDeadline(timeout time.Duration) time.Time {
	if timeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(timeout)
}

// futexRemaining is the time left until deadline after an interrupted
// wait: the retry must not restart the full timeout, or a steady stream
// of signals would postpone the timeout forever.
func futexRemaining(deadline time.Time) (time.Duration, bool) {
	if deadline.IsZero() {
		return 0, true
	}
	left := time.Until(deadline)
	return left, left > 0
}
