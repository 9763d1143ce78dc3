//go:build linux

package suites

import (
	"time"

	"golang.org/x/sys/unix"
)

// burstSleep is the burst producer's pause between bursts. It sleeps in
// nanosleep(2) rather than time.Sleep: when every P is idle the runtime
// waits for its next timer in epoll_pwait, whose timeout is whole
// milliseconds, so a 50 µs time.Sleep in an otherwise idle process lasts
// about a millisecond, and the group would measure the timer instead of
// the wake. nanosleep keeps the gap near what was asked (plus the
// kernel's 50 µs timer slack).
func burstSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
