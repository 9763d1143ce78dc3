//go:build !linux

package suites

import "github.com/knit-go/knit/bench/internal/harness"

// futexRows is empty off Linux: the raw futex floor needs SYS_FUTEX.
func futexRows() []harness.Row { return nil }
