//go:build unix

package harness

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time (user + system) of every thread of this
// process so far. Process-wide on purpose: a handoff's cost includes the
// worker's spinning, the runtime's background work and the GC it caused,
// not just the caller's thread.
func processCPU() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
