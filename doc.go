// Package knit moves work between goroutines, OS threads and processes at
// cache-line speed, without cgo: bounded rings whose hot indices sit on
// cache lines of their own, spin-waits in assembly chosen per CPU, and
// parking that makes a system call only when someone is asleep. It is the
// Go counterpart of Knitting (github.com/mimiMonads/knitting), a worker
// pool for JavaScript runtimes.
//
// # Which type to pick
//
// Rings carry values of any type between goroutines. All of them have the
// method set of [Queue]: TryPush and TryPop never block, Push and Pop spin
// briefly and then park until there is room or an item (or ctx ends),
// PushBatch and PopBatch move many items per index update, and Close
// stops intake while the consumers drain what was pushed.
//
//   - [SPSC]: one producer goroutine, one consumer. Hand each side its end
//     ([SPSC.Producer], [SPSC.Consumer]) and the compiler keeps them apart.
//     The fastest ring: no locked instruction on its hot path.
//   - [Words]: an SPSC of uint64 (slot indices, offsets into shared
//     memory) whose push and pop are assembly.
//   - [MPSC]: many producers, one consumer: a worker's inbox, fan-in.
//   - [SPMC]: one producer, many consumers: fan-out to a set of workers.
//   - [MPMC]: many on both sides: a shared job queue.
//
// Waiting, for code that builds its own primitives:
//
//   - [Event]: a doorbell for a condition kept in your own memory. Notify
//     costs one atomic load when nobody waits; [Park] says how a waiter
//     waits, spinning first and then sleeping on a [Backend].
//   - [Backoff] and [SpinUntil]: bounded spinning with the CPU's spin
//     instruction (PAUSE, TPAUSE, MWAITX, ISB), budgets in wall time.
//   - [FutexWait] and [FutexWake]: sleep in the kernel until a 32-bit word
//     changes (futex on Linux, ulock on macOS); [FutexWaitShared] and
//     [FutexWakeShared] work across processes.
//
// Subpackages:
//
//   - [github.com/knit-go/knit/pool]: a worker pool with typed,
//     allocation-free calls and futures, errgroup-style groups and an
//     ordered Map.
//   - [github.com/knit-go/knit/shm]: byte-message rings in memory shared
//     between processes, and child-process workers.
//   - [github.com/knit-go/knit/affinity]: pin a goroutine's thread to CPUs,
//     and the CPU topology (SMT siblings, cache groups, core types).
//
// # Spin budgets
//
// Every spin budget in knit ([WithSpin], [Park].Spin, pool.Config.Spin,
// shm's SetSpin) reads the same way: a positive budget spins that long
// before parking, zero is the default of that place, which never spins
// while GOMAXPROCS is below four, and [NoSpin] parks at once. The spin
// instruction is chosen per CPU at first use; the KNIT_SPIN environment
// variable or [SetSpin] overrides it, and [CPU] reports what was chosen.
//
// # Build tags
//
//   - purego: no assembly; spin-waits are plain load loops.
//   - knit_futex_fallback: park on a table of wait lists in Go instead of
//     the kernel's futex, as systems other than Linux and macOS always do.
//     FutexWaitShared then returns an error wrapping
//     errors.ErrUnsupported.
//   - knit_nolinkname: no go:linkname into the runtime; sleepers park on
//     channels instead of the runtime's semaphore, at about twice the cost
//     of a parked round trip.
package knit
