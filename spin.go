package knit

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// CacheLineSize is the padding unit knit uses to keep hot words of
// different writers apart: 64 B on amd64, 128 B on arm64 (Apple silicon
// and Neoverse prefetch line pairs), as golang.org/x/sys/cpu sizes its
// CacheLinePad per GOARCH.
const CacheLineSize = int(unsafe.Sizeof(cpu.CacheLinePad{}))

// The cycle counter: RDTSC on amd64, CNTVCT_EL0 on arm64, the monotonic
// clock in ns elsewhere. Budgets given as durations are turned into
// counter ticks once, so the wait loops compare integers and never call
// the clock's slow path.
//
// The counter is calibrated at first use, not at init: measuring it
// against the monotonic clock takes tens of µs on amd64, which every
// program importing knit (or pool, or shm) would pay whether or not it
// ever spins. The first SpinUntil with a budget, budgeted Backoff or
// CPU() pays it instead; arm64 reads the frequency from a register and
// the pure-Go build needs none.

// clockInfo is the calibrated counter; immutable once published.
type clockInfo struct {
	hz         int64   // ticks per second
	ticksPerNs float64 // hz / 1e9
	mono       bool    // the counter could not be trusted: now() reads the monotonic clock
	warning    string  // why mono is set
}

var (
	clockConf atomic.Pointer[clockInfo] // nil until the first use
	clockOnce sync.Once
)

// loadClock returns the calibrated counter, calibrating it on the first
// call. The fast path is one load and a branch, and inlines.
func loadClock() *clockInfo {
	if c := clockConf.Load(); c != nil {
		return c
	}
	return initClock()
}

func initClock() *clockInfo {
	clockOnce.Do(func() { clockConf.Store(calibrateClock()) })
	return clockConf.Load()
}

// calibrationWindow is how long the calibration spends measuring the
// cycle counter against the monotonic clock (and, for CPU(), each
// hint), in three parts. Each end of a part is bracketed tightly enough
// that the frequency comes out finer than a spin budget is honoured (one
// wait chunk; BENCHMARKS.md, "Spin layer"), and the window is paid by the
// first spin.
const calibrationWindow = 30 * time.Microsecond

func calibrateClock() *clockInfo {
	c := &clockInfo{hz: archCounterHz()}
	if c.hz <= 0 {
		c.hz = measureCounterHz()
	}
	if c.hz <= 0 {
		// The counter does not move (or moves backwards): fall back to
		// the monotonic clock, which the pure-Go wait loop understands.
		c.warning = "cycle counter unusable; using the monotonic clock"
		c.mono = true
		c.hz = 1e9
	}
	c.ticksPerNs = float64(c.hz) / 1e9
	return c
}

// measureCounterHz times the counter against the monotonic clock over
// three windows and keeps the median. Each end of a window is a bracketed
// pair of readings (see counterSample), so a preemption between the two
// clocks' reads, which on a loaded VM once cut a budget several-fold
// (BENCHMARKS.md, "Spin layer"), cannot skew the ratio; a preemption
// inside a window is harmless since both clocks keep running.
func measureCounterHz() int64 {
	var hz [3]float64
	for i := range hz {
		c0, t0 := counterSample()
		for time.Since(t0) < calibrationWindow/3 {
			archPause(HintLoop, 16)
		}
		c1, t1 := counterSample()
		if c1 <= c0 || !t1.After(t0) {
			return 0
		}
		hz[i] = float64(c1-c0) / t1.Sub(t0).Seconds()
	}
	slices.Sort(hz[:])
	return int64(hz[1])
}

// counterSample reads the monotonic clock between two counter reads and
// keeps the tightest of five brackets, with the counter at its midpoint.
func counterSample() (uint64, time.Time) {
	var c uint64
	var t time.Time
	best := uint64(math.MaxUint64)
	for range 5 {
		a := archCycles()
		now := time.Now()
		b := archCycles()
		if b >= a && b-a < best {
			best, c, t = b-a, a+(b-a)/2, now
		}
	}
	return c, t
}

// now reads the counter the deadlines are expressed in.
func now() uint64 {
	if loadClock().mono {
		return monoNow()
	}
	return archCycles()
}

var monoBase = time.Now()

func monoNow() uint64 { return uint64(time.Since(monoBase)) }

// ticks turns a duration into counter ticks.
func (c *clockInfo) ticks(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	t := float64(d) * c.ticksPerNs
	if t >= math.MaxUint64/2 {
		return math.MaxUint64 / 2
	}
	return uint64(t)
}

// calibrateHint measures one Pause of hint k in ns: the fastest of
// three windows, since a preemption can only make a window slower.
func calibrateHint(k Hint) float64 {
	if k == HintNone {
		return 0
	}
	const batch = 64
	best := math.Inf(1)
	for range 3 {
		n := 0
		t0 := time.Now()
		var el time.Duration
		for el < calibrationWindow/3 {
			archPause(k, batch)
			n += batch
			el = time.Since(t0)
		}
		best = min(best, float64(el.Nanoseconds())/float64(n))
	}
	return best
}

// Pause executes the spin hint in force n times (PAUSE, ISB, YIELD, or a
// short load loop in pure Go). Under HintNone it returns at once.
func Pause(n int) {
	k := loadSpin().kind
	if k == HintNone || n <= 0 {
		return
	}
	// Assembly is not preemptible: keep each call short so a stop-the-world
	// never waits on a long Pause.
	for n > 0 {
		c := min(n, maxPauseBatch)
		archPause(k, uint32(c))
		n -= c
	}
}

// maxPauseBatch bounds one assembly call of Pause: 1024 hints at the PAUSE
// latencies measured (BENCHMARKS.md, "Spin layer"), or at 140 cycles each
// on Skylake-SP, last tens of µs.
const maxPauseBatch = 1024

// waitChunk bounds one assembly wait call, for the same reason: a goroutine
// inside assembly cannot be preempted, so a stop-the-world waits at most
// this long for a spinner.
const waitChunk = 10 * time.Microsecond

// SpinUntil spins with the hint in force until *addr != old or the
// budget runs out, and reports whether the word changed. A budget <= 0 (or
// HintNone) checks the word once. The budget is wall time measured on the
// cycle counter, honoured to within one wait chunk (10 µs) plus, for
// HintWFE, the kernel's event-stream period. The first call that spins
// calibrates the counter on amd64 (BENCHMARKS.md, "Import cost"); elsewhere
// there is nothing to calibrate.
func SpinUntil(addr *atomic.Uint32, old uint32, budget time.Duration) bool {
	if addr.Load() != old {
		return true
	}
	return spinUntil(addr, old, budget)
}

// spinUntil is SpinUntil past its first look at the word, which inlines
// into the caller.
func spinUntil(addr *atomic.Uint32, old uint32, budget time.Duration) bool {
	if budget <= 0 {
		return false
	}
	k := loadSpin().kind
	if k == HintNone {
		return false
	}
	p := (*uint32)(unsafe.Pointer(addr))
	clk := loadClock()
	if clk.mono {
		return spinUntilMonotonic(k, p, old, budget)
	}
	start := archCycles()
	deadline := start + clk.ticks(budget)
	chunk := clk.ticks(waitChunk)
	for {
		end := min(deadline, archCycles()+chunk)
		if archWait(k, p, old, end) {
			return true
		}
		if archCycles() >= deadline {
			return false
		}
	}
}

// spinUntilMonotonic is SpinUntil on the monotonic clock, for when the
// cycle counter could not be calibrated.
func spinUntilMonotonic(k Hint, p *uint32, old uint32, budget time.Duration) bool {
	deadline := time.Now().Add(budget)
	for {
		for range 16 {
			if atomic.LoadUint32(p) != old {
				return true
			}
			archPause(k, 1)
		}
		if !time.Now().Before(deadline) {
			return atomic.LoadUint32(p) != old
		}
	}
}

// Backoff is a spin policy for a loop that waits for another thread, in
// the shape of crossbeam's Backoff: exponentially growing runs of Pause
// hints, then runtime.Gosched, then IsCompleted tells the caller to stop
// spinning and park. Its budget is wall time, not a step count, so a
// Backoff means the same thing on a fast PAUSE and a 140-cycle one.
//
// The zero value is ready to use with no time budget: it completes after
// the step limits alone (about 2^6 hints of spinning, then four yields).
// A Backoff is used by one goroutine; Reset it to reuse.
type Backoff struct {
	// Budget is how long Snooze may spin and yield before IsCompleted
	// reports true. Zero means step limits only.
	Budget time.Duration

	step     uint32
	deadline uint64 // counter ticks; 0 until the first Spin or Snooze
}

const (
	backoffSpinLimit  = 6  // longest run: 2^6 = 64 hints
	backoffYieldLimit = 10 // steps past the spin limit are yields
)

func (b *Backoff) start() {
	if b.deadline == 0 && b.Budget > 0 {
		b.deadline = now() + loadClock().ticks(b.Budget)
	}
}

// Spin backs off in a lock-free retry loop (a failed CAS): it only ever
// spins, growing the run up to the spin limit.
func (b *Backoff) Spin() {
	b.start()
	Pause(1 << min(b.step, backoffSpinLimit))
	if b.step <= backoffSpinLimit {
		b.step++
	}
}

// Snooze backs off while waiting for another thread to make progress:
// spins first, then yields the processor.
func (b *Backoff) Snooze() {
	b.start()
	if b.step <= backoffSpinLimit {
		Pause(1 << b.step)
	} else {
		runtime.Gosched()
	}
	if b.step <= backoffYieldLimit {
		b.step++
	}
}

// IsCompleted reports that spinning has run its course and the caller
// should park. Under HintNone it is always true: every budget reads zero.
func (b *Backoff) IsCompleted() bool {
	if loadSpin().kind == HintNone {
		return true
	}
	if b.Budget > 0 {
		return b.deadline != 0 && now() >= b.deadline
	}
	return b.step > backoffYieldLimit
}

// Reset starts the policy over, keeping the budget.
func (b *Backoff) Reset() { *b = Backoff{Budget: b.Budget} }
