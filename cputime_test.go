package knit

import (
	"time"

	"github.com/knit-go/knit/internal/cputime"
)

// parkProcessCPU is the user plus system CPU time of the whole process
// so far (0 where the platform cannot say).
func parkProcessCPU() time.Duration {
	d, _ := cputime.Process()
	return d
}
