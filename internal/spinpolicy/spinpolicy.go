// Package spinpolicy holds the one meaning every spin budget in knit has,
// so that the rings, Event, the pool and shm read a budget the same way.
//
// A budget is a time.Duration:
//
//	d > 0   spin for d, then park
//	d == 0  the default of the place that takes the budget, which is no
//	        spin at all while GOMAXPROCS < MinProcs
//	d < 0   never spin (knit.NoSpin)
//
// and every budget reads zero while spinning is off process-wide
// (KNIT_SPIN=none, or knit.SetSpin(knit.SpinNone)).
package spinpolicy

import (
	"runtime"
	"time"
)

// off reports that spinning is off process-wide. The root package, which
// owns the spin choice, installs it before any of its importers can run
// (SetOff in its init); until then nothing spins anyway.
var off = func() bool { return false }

// SetOff installs the root package's report of the spin choice. It is
// called once, from an init function.
func SetOff(f func() bool) { off = f }

// Off reports that spinning is off process-wide, so a spin loop that
// measures its budget on the clock must not start. It costs an indirect
// call and an atomic load: read it once per wait, not per poll.
func Off() bool { return off() }

// MinProcs is the GOMAXPROCS below which no default spins.
//
// A spinning goroutine holds a P. With fewer than four Ps the partner
// that would end the spin (the producer, the submitter, the goroutine a
// Notify readied) most likely needs the very P the spinner holds, so the
// spin delays the event it waits for. Measured with knitbench rings and
// pool-call on two CPUs: every spin budget cost more CPU per item and
// bought no latency (figures in BENCHMARKS.md). Four leave one P for each
// side and room for the rest of the program. GOMAXPROCS, not the CPU
// count, is what counts: a process under a CPU quota gets fewer Ps (Go
// 1.25 and later) and must not spin on the few it has.
const MinProcs = 4

// Resolve turns a caller's budget d into the budget to use, where def is
// the place's default for machines with MinProcs or more Ps.
func Resolve(d, def time.Duration) time.Duration {
	switch {
	case Off():
		return 0
	case d > 0:
		return d
	case d < 0:
		return 0
	case runtime.GOMAXPROCS(0) >= MinProcs:
		return max(def, 0)
	}
	return 0
}
