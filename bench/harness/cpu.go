package harness

import (
	"time"

	"github.com/knit-go/knit/internal/cputime"
)

// processCPU is the CPU time of every thread of this process so far; the
// bool is false where the platform cannot say, and the CPU columns then
// read as unavailable rather than as zero cost.
func processCPU() (time.Duration, bool) { return cputime.Process() }
