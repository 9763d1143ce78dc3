package pool

import (
	"time"

	"github.com/knit-go/knit/internal/cputime"
)

// cpuTime is the CPU time (user + system) the process has used so far (0
// where the platform cannot say).
func cpuTime() time.Duration {
	d, _ := cputime.Process()
	return d
}
