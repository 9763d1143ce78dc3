package pool

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/affinity"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// Config configures a Pool. The zero Config is valid: runtime.GOMAXPROCS(0)
// workers (as many as run in parallel, the parallelism an errgroup
// without a limit gets), Knitting's timer policy, bounded queues of
// DefaultQueueSize, work stealing on, no pinning, panics logged.
//
// New panics, naming the field, on a value outside the ranges below: a
// bad Config is a programming error, like a negative length to make.
type Config struct {
	// Workers is the number of worker goroutines: 0 means
	// runtime.GOMAXPROCS(0) at New (at most MaxWorkers); otherwise 1 to
	// MaxWorkers. A pool of one worker gets Knitting's single-worker
	// timer policy (see Park). Pool.Resize changes the count later, and
	// the policy with it.
	Workers int

	// Park says how an idle worker waits for its next task. Every value
	// is valid.
	//
	// Park.Spin is how long the worker polls the queues before it parks,
	// read as every spin budget in knit is (knit.DefaultSpin's doc states
	// the rule, and when a default spins at all). 0 selects the default
	// timer policy, Knitting's: a pool of one worker spins
	// knit.DefaultWorkerSpin, since its worker sits on the request's
	// critical path, and a pool of two or more parks at once, leaving the
	// CPU to the host or to an awake peer. A negative value (knit.NoSpin)
	// never spins; a positive value spins that long at every pool size.
	//
	// Park.Backend is where a parked worker sleeps (knit.BackendAuto: the
	// Go scheduler); knit.BackendFutex suits pinned workers on a machine
	// with cores to spare (see knit.Backend). A parked worker sleeps
	// until a doorbell rings it, with no polling timeout.
	Park knit.Park

	// QueueSize is the capacity of each worker's queue, exactly: 0 means
	// DefaultQueueSize; otherwise 1 to 1<<30 (the rings' bound). Go,
	// Call and Submit block while the queues are full, TryGo fails. Each
	// slot costs 24 bytes on 64-bit targets (see DefaultQueueSize); the
	// slots are the size rounded up to a power of two. With a QueueSize
	// of 8 or more, a Task's calls travel in streams of min(QueueSize, 128) calls, each stream one queue entry
	// (see Task.Call): up to two streams per task are in flight beyond
	// the queue's own entries.
	QueueSize int

	// Pinning says which CPUs the workers' threads are pinned to.
	Pinning Pinning

	// NoSteal turns work stealing off: each worker runs only what was
	// queued on it. Stealing is on by default.
	NoSteal bool

	// PanicHandler receives the value and stack of a panic in a task
	// started with Go or GoContext (a Call's or Submit's panic goes to
	// its Future instead, a group task's or Map element's to their Wait
	// or Map). It runs on the worker; nil logs the panic and its stack
	// with the log package. A panic in the handler itself is not
	// recovered.
	PanicHandler func(value any, stack []byte)
}

// Pinning selects the CPUs that workers are pinned to. The zero value
// pins nothing. A pinned worker locks its goroutine to an OS thread and
// restricts that thread to one CPU; it undoes both before it exits.
//
// Pinning is best effort: where the OS refuses (darwin, a CPU outside the
// process's affinity mask) the worker runs unpinned. Stats.Pinned says how
// many workers are pinned.
type Pinning struct {
	// Spread pins worker i to the i-th of one CPU per physical core, cores
	// sharing a last-level cache first (affinity.Layout.PhysicalCores),
	// wrapping around when there are more workers than cores.
	Spread bool

	// CPUs pins worker i to the i-th CPU of the set in ascending order,
	// wrapping around. Ignored when Spread is set.
	CPUs affinity.CPUSet
}

// MaxWorkers is the largest Config.Workers New accepts. Each worker is a
// goroutine with its own queue and a few cache lines of counters, and a
// publish may scan a bit per worker; far past the CPU count more workers
// only add memory and scans.
const MaxWorkers = 1 << 16

// maxQueueSize is the largest Config.QueueSize: the rings' capacity bound.
const maxQueueSize = 1 << 30

// DefaultQueueSize is the per-worker queue capacity of a zero Config.
// 1024 tasks hold back a producer that outruns its workers by a few
// milliseconds of trivial tasks, and cost 24 KiB per worker on 64-bit
// targets (a 16-byte interface and an 8-byte sequence per slot).
const DefaultQueueSize = 1024

// spinFor is the spin budget of a pool of n workers under cfg: knit's
// rule for a budget (spinpolicy.Resolve; knit.DefaultSpin's doc states
// it, including when a default spins at all), with knit.DefaultWorkerSpin
// as the default of a single worker and no spin as that of a larger
// pool. A spinning worker yields its P as it spins (worker.spinForWork
// says why).
func (cfg *Config) spinFor(n int) time.Duration {
	def := time.Duration(0)
	if n == 1 {
		def = knit.DefaultWorkerSpin
	}
	return spinpolicy.Resolve(cfg.Park.Spin, def)
}

// workers returns the worker count cfg asks for, and panics, naming the
// field, on a value outside the documented ranges.
func (cfg *Config) workers() int {
	switch n := cfg.Workers; {
	case n == 0:
		return min(runtime.GOMAXPROCS(0), MaxWorkers)
	case n < 0 || n > MaxWorkers:
		panic(fmt.Sprintf("pool: New: Config.Workers is %d; want 0 (GOMAXPROCS) or 1 to %d (MaxWorkers)", n, MaxWorkers))
	default:
		return n
	}
}

// queueSize returns the per-worker queue capacity cfg asks for, and
// panics, naming the field, on a value outside the documented range.
func (cfg *Config) queueSize() int {
	switch n := cfg.QueueSize; {
	case n == 0:
		return DefaultQueueSize
	case n < 0 || n > maxQueueSize:
		panic(fmt.Sprintf("pool: New: Config.QueueSize is %d; want 0 (DefaultQueueSize) or 1 to 1<<30", n))
	default:
		return n
	}
}

// cpus returns the CPUs that worker ids are pinned to, id i to
// cpus[i%len(cpus)], or nil to pin none.
func (pin *Pinning) cpus() []int {
	var list []int
	switch {
	case pin.Spread:
		if t, err := affinity.Topology(); err == nil {
			list = t.PhysicalCores()
		}
	case pin.CPUs.Len() > 0:
		list = slices.Collect(pin.CPUs.All())
	}
	if len(list) == 0 {
		return nil
	}
	return list
}
