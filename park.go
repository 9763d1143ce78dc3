package knit

import (
	"time"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// Park says how a blocked call waits: spin for Spin, watching its word
// with the CPU's spin hint, then sleep on Backend. It is knit's one way
// to configure waiting: a ring takes it at construction (NewMPMC(n,
// Park{...})), Select and Event.Wait per call, NewSelector once for its
// Selects, pool.Config as a field, and shm's rings (CreateRing,
// AttachRing, WorkerConfig) as an argument or field. Where a call takes
// one it is an ordinary argument, never optional: pass Park{} for the
// default. The zero Park is the default everywhere; shm sleeps on a
// process-shared futex whatever Backend says.
type Park struct {
	// Spin is the spin budget before sleeping: a positive value spins
	// that long, NoSpin (any negative value) sleeps at once, and zero is
	// the place's default (DefaultSpin).
	Spin time.Duration
	// Backend is where the waiter sleeps (BackendAuto: the Go scheduler).
	Backend Backend
}

// Spin budgets. Every budget in knit (Park.Spin, and through it the
// rings, Event, pool.Config and shm) reads the same way: a
// positive budget spins that long before parking, NoSpin (any negative
// value) parks at once, and zero picks the default of the place:
//
//   - DefaultSpin for a ring's blocked Push or Pop, an Event waiter and
//     Select: a futex round trip on bare metal four times over
//     (BENCHMARKS.md, "Rings");
//   - DefaultWorkerSpin for a pool of one worker waiting for its next
//     task, and for shm's blocking calls waiting for the other process:
//     the budget Knitting (github.com/mimiMonads/knitting) gives a lone
//     worker, which sits on the request's critical path. A pool of two
//     or more workers parks at once, as Knitting's does (pool.Config).
//
// A default spins only where GOMAXPROCS and the CPU count are both four
// or more: with fewer Ps, or fewer CPUs behind them, the goroutine that
// would end the spin most likely needs the P or the CPU the spinner
// holds (BENCHMARKS.md, "Spin budgets on two CPUs"). Under HintNone no
// budget spins. A ring, a pool or shm reads GOMAXPROCS when it is made;
// Event.Wait and Select, which resolve a zero Park on every call, read it
// once every few milliseconds, as it costs the scheduler's lock, so a
// change reaches them within that time.
const (
	NoSpin            time.Duration = -1
	DefaultSpin                     = 20 * time.Microsecond
	DefaultWorkerSpin               = 50 * time.Microsecond
)

// spin is the budget p.Spin stands for.
func (p Park) spin() time.Duration { return spinpolicy.Resolve(p.Spin, DefaultSpin) }

// spinEachWait is spin for a wait that resolves its Park on every call
// (Event.Wait, Select): it reads GOMAXPROCS, and with it the scheduler's
// lock, at most once per procsWindow (spinpolicy.DefaultSpinsCached).
func (p Park) spinEachWait() time.Duration {
	return spinpolicy.ResolveCached(p.Spin, DefaultSpin, archCycles, procsWindow)
}

// procsWindow is how long, in cycle-counter ticks, a wait's reading of
// GOMAXPROCS holds: 10 ms, or 10^7 ticks where the counter's rate is not
// known before calibration (amd64). A spin decision that lags a change by
// that much costs a few spins; a lock per wait costs every wait, more
// with every waiter (BENCHMARKS.md, "Spin budgets on two CPUs").
var procsWindow = func() uint64 {
	if hz := archCounterHz(); hz > 0 {
		return uint64(hz) / 100
	}
	return 1e7
}()

// ringPark is the Park a ring's waiters use, from the constructor's
// argument. A budget that resolves to no spin is stored as NoSpin, so
// the Park reads "never spin" whatever zero means to the code that takes
// it.
func ringPark(p Park) Park {
	if p.Spin = spinpolicy.Resolve(p.Spin, DefaultSpin); p.Spin == 0 {
		p.Spin = NoSpin
	}
	startAsymBarrier()
	return p
}
