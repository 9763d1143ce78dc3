package harness

import (
	"runtime"
	"slices"

	"github.com/knit-go/knit/affinity"
)

// LockThread locks the calling goroutine to its OS thread and, when the
// run asked for pinning, binds that thread to one CPU with knit's
// affinity package: the slot-th CPU of the process's allowed set (modulo
// its size), so slot 0 and slot 1 land on different CPUs when there are
// two. The returned func undoes both, so the thread goes back to the
// runtime's pool exactly as it came. Where the OS has no thread affinity
// (darwin, others) -pin only locks, and the report says which OS the run
// was on.
//
// Limit rows call it for both ends of a ping-pong, with or without -pin:
// a locked thread is what the "two threads" in the limit means.
func (c Config) LockThread(slot int) (release func()) {
	if c.Pin {
		if set, err := affinity.Available(); err == nil && set.Len() > 0 {
			cpus := slices.Collect(set.All())
			if release, err := affinity.Pin(cpus[nth(slot, len(cpus))]); err == nil {
				return release
			}
		}
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// nth is slot mod n, in [0, n).
func nth(slot, n int) int {
	if slot %= n; slot < 0 {
		slot += n
	}
	return slot
}
