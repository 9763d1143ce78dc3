//go:build !unix

package harness

import "time"

// processCPU reports no figure where getrusage does not exist; the CPU
// columns then read as unavailable rather than as zero cost.
func processCPU() (time.Duration, bool) { return 0, false }
