// Package knit moves work between goroutines, OS threads and processes at
// cache-line speed, without cgo: bounded rings whose hot indices sit on
// cache lines of their own, spin-waits in assembly chosen per CPU, and
// parking that makes a system call only when someone is asleep. It is the
// Go counterpart of Knitting (github.com/mimiMonads/knitting), a worker
// pool for JavaScript runtimes.
//
// # Which type to pick
//
// Rings carry values of any type between goroutines. Every ring and
// every end offers its side's part of one grid of calls, stated once on
// [Producer] and [Consumer]: TryPush and TryPop never wait and say full,
// empty or closed; Push and Pop spin briefly and then park until there is
// room or an item (or ctx ends); TryPushBatch, PushBatch, TryPopBatch and
// PopBatch move many items per index update; [All] ranges over a ring as
// over a channel; and Close stops intake while the consumers drain what
// was pushed. [Queue] is both sides, for code that takes any ring.
// [Select] waits on several rings of any kind and element type, and on
// channels, at once, as Go's select does on channels.
//
//   - [SPSC]: one producer goroutine, one consumer. Each side is an end
//     ([SPSC.Ends] returns both) that has only its side's calls;
//     the SPSC itself only hands them out. The types do not stop two
//     goroutines from sharing one end, which loses items; the
//     knit_checkends build catches it. The fastest ring: once it streams
//     with nobody waiting, no locked instruction on its hot path (bell.go).
//   - [Words]: an SPSC of uint64 (slot indices, offsets into shared
//     memory) whose push and pop are assembly.
//   - [MPSC]: many producers, one consumer: a worker's inbox, fan-in.
//   - [SPMC]: one producer, many consumers: fan-out to a set of workers.
//   - [MPMC]: many on both sides: a shared job queue.
//   - [Mailbox]: an unbounded MPSC queue, an actor's inbox: a push never
//     waits while it is open. It has both sides of the grid; Cap is
//     math.MaxInt.
//   - [Backlog]: a Mailbox whose consumer side several goroutines
//     share: an unbounded job queue, a pool's backlog.
//   - [Broadcast]: one producer, and subscriptions that each see every
//     item (the disruptor's ring): fan-out to every consumer, and
//     pipelines of stages with [Broadcast.SubscribeAfter]. The producer
//     waits for the slowest subscription.
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
// # A done context
//
// A call whose ctx is already done does nothing and returns ctx.Err():
// Push stores nothing, Pop, PopBatch, a range over All and Select take
// nothing, Event.Wait does not wait, pool's Submit, GoContext,
// Future.Wait, Map and the rest neither queue nor take, and shm's Send
// and Recv neither send nor take. A pipeline started on an expired ctx moves nothing.
// (Shutdown, which bounds Close by its ctx, closes the pool either way.)
// The check is a compare with context.Background and TODO, and a call of
// ctx.Err otherwise (BENCHMARKS.md, "Done contexts").
//
// # Waiting
//
// One value says how a blocked call waits: [Park], a spin budget and a
// [Backend]. Rings take it at construction (NewMPMC(n, Park{...})),
// [Select] and [Event.Wait] per call, [NewSelector] once for its
// Selects, pool.Config and shm's rings as a field or argument; it is
// an ordinary argument wherever a call takes one, and the zero Park,
// Park{}, is the default everywhere. Every spin budget
// reads as [DefaultSpin] states: a positive budget spins that long
// before parking, zero is the default of that place (no spin on a
// machine with fewer than four Ps or CPUs), and [NoSpin] parks at once.
// The spin instruction, a [Hint], is chosen per CPU at first use; the
// KNIT_HINT environment variable or [SetHint] overrides it, and [CPU]
// reports what was chosen.
//
// # Build tags
//
//   - purego: no assembly; spin-waits are plain load loops.
//   - knit_futex_fallback: park on a table of wait lists in Go instead of
//     the kernel's futex, as systems other than Linux and macOS always do.
//     FutexWaitShared then returns an error wrapping
//     errors.ErrUnsupported.
//   - knit_nolinkname: no go:linkname into the runtime; sleepers park on
//     channels instead of the runtime's park and ready, at about twice
//     the cost of a parked round trip.
//   - knit_checkends: each single side (both sides of SPSC and Words,
//     MPSC's and Mailbox's consumer, SPMC's and Broadcast's producer, each
//     Subscription) panics when two goroutines are
//     inside its calls at once, the sharing that loses items. A side
//     handed from one goroutine to another with synchronisation passes;
//     a handoff without it is a data race, which -race reports. Each
//     call reads the goroutine's id (a load from the runtime's g on
//     amd64 and arm64; a stack trace, microseconds, under purego and
//     elsewhere) and makes a compare-and-swap on entry, an atomic store
//     on exit and a defer: an SPSC TryPush and TryPop take two to three
//     times as long as unchecked (BENCHMARKS.md).
package knit
