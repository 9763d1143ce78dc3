//go:build unix

package knit

import (
	"syscall"
	"time"
)

// parkProcessCPU is the user plus system CPU time of the whole process
// (every thread) so far, from getrusage(RUSAGE_SELF).
func parkProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
