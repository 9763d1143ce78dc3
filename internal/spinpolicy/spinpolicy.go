// Package spinpolicy holds the one meaning every spin budget in knit has,
// so that the rings, Event, the pool and shm read a budget the same way.
//
// A budget is a time.Duration:
//
//	d > 0   spin for d, then park
//	d == 0  the default of the place that takes the budget, which is no
//	        spin at all unless DefaultSpins
//	d < 0   never spin (knit.NoSpin)
//
// and every budget reads zero while spinning is off process-wide
// (KNIT_HINT=none, or knit.SetHint(knit.HintNone)).
package spinpolicy

import (
	"runtime"
	"sync/atomic"
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

// MinProcs is how many Ps, each with a CPU of its own, a default needs
// before it spins.
//
// A spinning goroutine holds a P, and its CPU. With fewer than four the
// partner that would end the spin (the producer, the submitter, the
// goroutine a Notify readied) most likely needs the very P, or the very
// CPU, the spinner holds, so the spin delays the event it waits for; four
// leave one for each side and room for the rest of the program. Both
// counts matter: a process under a CPU quota gets fewer Ps (Go 1.25 and
// later) and must not spin on the few it has, and Ps beyond the CPUs
// (GOMAXPROCS 8 on two CPUs) are oversubscribed, so a spinner still holds
// the CPU its partner needs. BENCHMARKS.md ("Spin budgets on two CPUs")
// has the measurements.
const MinProcs = 4

// DefaultSpins reports whether a zero budget takes its place's default:
// spinning is on, and there are at least MinProcs Ps and MinProcs CPUs.
// The CPU count is read first: it is a variable's load, where GOMAXPROCS
// takes the scheduler's lock.
func DefaultSpins() bool {
	return !Off() && numCPU() >= MinProcs && runtime.GOMAXPROCS(0) >= MinProcs
}

// procsRead is GOMAXPROCS as DefaultSpinsCached last read it.
var procsRead struct {
	enough atomic.Bool   // GOMAXPROCS >= MinProcs at that read
	at     atomic.Uint64 // the caller's clock then, never 0; 0 before any read
}

// DefaultSpinsCached is DefaultSpins for a place that resolves a zero
// budget on every wait (an Event's Wait, a Select). GOMAXPROCS takes
// the scheduler's lock, the one every P's scheduler takes when it looks
// for work, so on a machine with enough CPUs to spin, waiters on every
// P would contend for it, and with the scheduler, on every wait. This
// reads it once per window ticks of now, a clock of the caller's, and in
// between answers from that read: a change of GOMAXPROCS reaches these
// waits within a window or so, which costs a spin too many or too few.
// The CPU count and Off are read every time. A clock that goes back
// (counters of CPUs out of step) reads as a window passed.
func DefaultSpinsCached(now func() uint64, window uint64) bool {
	if Off() || numCPU() < MinProcs {
		return false
	}
	t := now() | 1
	at := procsRead.at.Load()
	if at != 0 && t-at < window {
		return procsRead.enough.Load()
	}
	if at != 0 && !procsRead.at.CompareAndSwap(at, t) {
		// Another waiter is reading it: the last reading will do.
		return procsRead.enough.Load()
	}
	enough := runtime.GOMAXPROCS(0) >= MinProcs
	procsRead.enough.Store(enough)
	procsRead.at.Store(t) // the first reading's, and a no-op for a refresh
	return enough
}

// ResolveCached is Resolve with DefaultSpinsCached in place of
// DefaultSpins.
func ResolveCached(d, def time.Duration, now func() uint64, window uint64) time.Duration {
	if d != 0 {
		return Resolve(d, def) // reads no GOMAXPROCS
	}
	if DefaultSpinsCached(now, window) {
		return max(def, 0)
	}
	return 0
}

// Resolve turns a caller's budget d into the budget to use, where def is
// the place's default where DefaultSpins.
func Resolve(d, def time.Duration) time.Duration {
	switch {
	case Off():
		return 0
	case d > 0:
		return d
	case d < 0:
		return 0
	case DefaultSpins():
		return max(def, 0)
	}
	return 0
}
