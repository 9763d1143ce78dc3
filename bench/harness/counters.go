package harness

import "github.com/knit-go/knit/bench/internal/perfcount"

// Counters is a set of kernel and CPU event counters open on the whole
// process (perf_event_open on Linux, with inherit, so every thread
// counts): the ctx-sw/op column and, where a PMU is, cycles,
// instructions, cache and branch misses. Elsewhere each counter says why
// it cannot count and reads nothing.
type Counters = perfcount.Set

// CounterInfo says whether a counter of a set counts, and if not, why.
type CounterInfo = perfcount.Info

// Counts is one reading of a set, by counter name.
type Counts = perfcount.Counts

// OpenCounters opens the default counters (context switches), or every
// counter the package knows with all: CPU migrations, and cycles,
// instructions, cache and branch misses where a PMU is. Open them before
// any suite starts its threads; Close the set when done.
func OpenCounters(all bool) *Counters {
	if all {
		return perfcount.Open(perfcount.All...)
	}
	return perfcount.Open(perfcount.Default...)
}

// ContextSwitches is the name of the context-switch counter in
// Counts and RowResult.CountersPerOp.
var ContextSwitches = perfcount.ContextSwitches.String()
