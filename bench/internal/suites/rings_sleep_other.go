//go:build !linux

package suites

import "time"

// burstSleep is the burst producer's pause between bursts; see the Linux
// version for why it is not time.Sleep there.
func burstSleep(d time.Duration) { time.Sleep(d) }
