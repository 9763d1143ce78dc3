//go:build !unix

package pool

import "time"

// cpuTime is not measured here; the CPU metrics read zero.
func cpuTime() time.Duration { return 0 }
