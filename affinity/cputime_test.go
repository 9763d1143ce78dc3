package affinity

import (
	"time"

	"github.com/knit-go/knit/internal/cputime"
)

// processCPU is the CPU time, user and system, this process has used (0
// where the platform cannot say).
func processCPU() time.Duration {
	d, _ := cputime.Process()
	return d
}
