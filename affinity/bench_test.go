package affinity

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/knit-go/knit/internal/cputime"
)

// spinsBeforeYield bounds a waiter's spinning before runtime.Gosched.
// Without a bound, two spinners pinned to one CPU each wait for the
// other's time slice to end (milliseconds) per hop. 4096 loads took
// about as long as the slowest round trips measured on two CPUs, so the
// cases on two CPUs seldom yield (BENCHMARKS.md, "Affinity").
const spinsBeforeYield = 4096

// BenchmarkRoundTrip measures one round trip between two goroutines that
// hand a counter back and forth through one atomic word, each spinning
// until it is its turn:
//
//   - unpinned: plain goroutines, the baseline;
//   - locked: each locked to its own OS thread (LockOSThread), not pinned,
//     to separate the cost of locking from that of pinning;
//   - pinned-2cpu: pinned to two CPUs sharing a last-level cache when
//     Topology names such a pair, else any two;
//   - pinned-1cpu: both pinned to one CPU, so each hop waits for the other
//     thread to be scheduled: what a careless placement costs.
//
// cpu-ns/op is the process's CPU time per round trip, both sides and the
// runtime together. -count repeats each case back to back. For rounds interleaved across
// cases, which a noisy machine needs, run the test binary in a loop:
//
//	go test -c -o affinity.test ./affinity
//	for i in 1 2 3 4 5; do ./affinity.test -test.run '^$' -test.bench RoundTrip; done
func BenchmarkRoundTrip(b *testing.B) {
	a, c, pinnable := benchCPUs()
	pin := func(cpu int) func() (func(), error) {
		return func() (func(), error) { return Pin(cpu) }
	}
	lock := func() (func(), error) {
		runtime.LockOSThread()
		return runtime.UnlockOSThread, nil
	}
	for _, bc := range []struct {
		name        string
		setupPing   func() (func(), error) // nil: nothing
		setupPong   func() (func(), error)
		needsPin    bool
		needsTwoCPU bool
	}{
		{name: "unpinned"},
		{name: "locked", setupPing: lock, setupPong: lock},
		{name: "pinned-2cpu", setupPing: pin(a), setupPong: pin(c), needsPin: true, needsTwoCPU: true},
		{name: "pinned-1cpu", setupPing: pin(a), setupPong: pin(a), needsPin: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.needsPin && !pinnable {
				b.Skip("no thread affinity here")
			}
			if bc.needsTwoCPU && a == c {
				b.Skip("needs two available CPUs")
			}
			roundTrip(b, bc.setupPing, bc.setupPong)
		})
	}
}

// benchCPUs picks two CPUs for the pinned cases: an LLC neighbour pair if
// Topology names one, else the first and last available.
func benchCPUs() (a, c int, pinnable bool) {
	avail, err := Available()
	if err != nil || avail.Len() == 0 {
		return 0, 0, false
	}
	if release, err := Pin(avail.first()); err != nil {
		return 0, 0, false
	} else {
		release()
	}
	cpus := slices.Collect(avail.All())
	a, c = cpus[0], cpus[len(cpus)-1]
	if l, err := Topology(); err == nil {
		if n, ok := l.LLCNeighbor(a); ok {
			c = n
		}
	}
	return a, c, true
}

// roundTrip runs b.N round trips: ping (this goroutine) stores an odd
// count and waits for pong to store the next even one. It reports the
// process's CPU time per round trip as cpu-ns/op.
func roundTrip(b *testing.B, setupPing, setupPong func() (func(), error)) {
	setup := func(f func() (func(), error)) func() {
		if f == nil {
			return func() {}
		}
		release, err := f()
		if err != nil {
			b.Fatal(err)
		}
		return release
	}
	// The word both sides touch, alone on its cache line (128 bytes
	// covers adjacent-line prefetch and 128-byte lines).
	var line struct {
		_    [128]byte
		turn atomic.Int64
		_    [128]byte
	}
	turn := &line.turn
	n := int64(b.N)
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		release := setup(setupPong)
		defer release()
		close(ready)
		for i := int64(1); i <= n; i++ {
			waitFor(turn, 2*i-1)
			turn.Store(2 * i)
		}
	}()
	release := setup(setupPing)
	defer release()
	<-ready
	b.ResetTimer()
	cpu0 := cputime.Used()
	for i := int64(1); i <= n; i++ {
		turn.Store(2*i - 1)
		waitFor(turn, 2*i)
	}
	cpu := cputime.Used() - cpu0
	b.StopTimer()
	<-done
	// Both sides spin, so about 2 CPU-ns per ns unless they wait for
	// each other's scheduling.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func waitFor(turn *atomic.Int64, want int64) {
	for spins := 0; turn.Load() != want; spins++ {
		if spins == spinsBeforeYield {
			runtime.Gosched()
			spins = 0
		}
	}
}
