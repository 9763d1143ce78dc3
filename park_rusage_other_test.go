//go:build !unix

package knit

import "time"

// parkProcessCPU has no getrusage here; the CPU column reads 0.
func parkProcessCPU() time.Duration { return 0 }
