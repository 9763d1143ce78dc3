package harness

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// LockThread locks the calling goroutine to its OS thread and, when the
// run asked for pinning, binds that thread to one CPU: the slot-th CPU of
// the process's allowed set (modulo its size), so slot 0 and slot 1 land
// on different CPUs when there are two. The returned func restores the
// previous mask before unlocking, so the thread goes back to the runtime's
// pool exactly as it came.
//
// Limit rows call it for both ends of a ping-pong, with or without -pin:
// a locked thread is what the "two threads" in the limit means.
func (c Config) LockThread(slot int) (release func()) {
	runtime.LockOSThread()
	if !c.Pin {
		return runtime.UnlockOSThread
	}
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return runtime.UnlockOSThread
	}
	cpu, ok := nthCPU(&old, slot)
	if !ok {
		return runtime.UnlockOSThread
	}
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return runtime.UnlockOSThread
	}
	return func() {
		if unix.SchedSetaffinity(0, &old) != nil {
			// The thread keeps a mask the runtime did not give it: stay
			// locked rather than hand it back. A goroutine that exits
			// while locked takes its thread with it.
			return
		}
		runtime.UnlockOSThread()
	}
}

// nthCPU returns the (slot mod count)-th CPU present in set.
func nthCPU(set *unix.CPUSet, slot int) (int, bool) {
	n := set.Count()
	if n == 0 {
		return 0, false
	}
	slot %= n
	if slot < 0 {
		slot += n
	}
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if set.IsSet(cpu) {
			if slot == 0 {
				return cpu, true
			}
			slot--
		}
	}
	return 0, false
}
