//go:build linux && amd64 && !purego && !race

package knit

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The asymmetric barrier behind the bell modes (bell.go): membarrier(2)
// with MEMBARRIER_CMD_PRIVATE_EXPEDITED interrupts every CPU running a
// thread of this process and has it execute a full barrier before the
// call returns; a thread that is not running passed one when it was
// switched out. The process must register first, and registering waits
// for an RCU grace period, which takes milliseconds (BENCHMARKS.md,
// "Rings"), so it runs in the background from the first ring's
// construction; until it is done every bell stays fenced, which is
// always correct.

const (
	membarrierQuery                    = 0
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

var (
	asymOnce  sync.Once
	asymReady atomic.Bool
)

// startAsymBarrier registers the process for the barrier, once, in the
// background.
func startAsymBarrier() {
	asymOnce.Do(func() { go registerAsymBarrier() })
}

func registerAsymBarrier() {
	cmds, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierQuery, 0, 0)
	if errno != 0 || cmds&membarrierPrivateExpedited == 0 {
		return // old kernel, or a seccomp filter: stay fenced
	}
	if _, _, errno = unix.Syscall(unix.SYS_MEMBARRIER, membarrierRegisterPrivateExpedited, 0, 0); errno != 0 {
		return
	}
	if _, _, errno = unix.Syscall(unix.SYS_MEMBARRIER, membarrierPrivateExpedited, 0, 0); errno != 0 {
		return
	}
	asymReady.Store(true)
}

// asymBarrierReady reports that asymBarrier works, so a bell may relax.
func asymBarrierReady() bool { return asymReady.Load() }

// asymBarrier runs the barrier. It is only called for a bell that went
// relaxed, which needs asymBarrierReady, and the registered command does
// not fail after it has once succeeded; if it ever did, no ordering could
// be promised, so it panics rather than risk a lost wakeup.
//
// It is a raw syscall: the barrier never blocks (it waits a few
// microseconds for the other CPUs' acknowledgements), so the goroutine
// keeps its P rather than paying the scheduler's syscall hand-off.
func asymBarrier() {
	if _, _, errno := unix.RawSyscall(unix.SYS_MEMBARRIER, membarrierPrivateExpedited, 0, 0); errno != 0 {
		panic("knit: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration: " + errno.Error())
	}
}
