package knit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit/internal/emul"
)

// Event is an eventcount: a doorbell that a waiter registers at before it
// re-checks its condition, so that a notifier can tell, with one atomic
// load, whether anyone needs telling. Notify with no registered waiter is
// a load and a return: no store, no lock, no syscall. A wake that costs a
// syscall when nobody sleeps is the cost the doorbell exists to avoid.
//
// The zero Event is ready to use. An Event must not be copied after first
// use.
//
// # Protocol
//
// The Event carries no state of its own; the condition lives in the
// caller's memory (a ring index, a closed flag). A waiter:
//
//	for {
//		if cond() {
//			return ...
//		}
//		t := e.Prepare() // register
//		if cond() {      // re-check: the publish may have come before Prepare
//			e.Cancel(t)
//			continue
//		}
//		if err := e.Wait(ctx, t, park); err != nil {
//			return err
//		}
//	}
//
// A notifier makes the condition true with an atomic store (or any
// sync/atomic write) and then calls Notify(1), or NotifyAll to wake
// everyone (Close: set the closed flag, then NotifyAll). Wait may return
// nil without a Notify (the loop re-checks), and Notify may wake more
// waiters than asked for (each re-checks); neither loses anything.
//
// # Why no wakeup is lost
//
// Go's sync/atomic operations are sequentially consistent: all of them
// happen in one total order that every goroutine agrees on. Name the
// waiter's steps W1 (Prepare's increment of waiters, then its load of the
// ticket t = seq) and W2 (the re-check of cond), and the notifier's N1
// (the publishing store) and N2 (Notify's load of waiters). W1 precedes
// W2 and N1 precedes N2 in program order, so in the total order either
// W2 comes after N1, and the re-check sees the publish and the waiter
// does not wait; or N2 comes after W1, and Notify sees waiters != 0. In
// the second case Notify then increments seq (N3). If N3 came before the
// ticket load, the ticket already includes it, and the publish (before
// N3) is before the re-check (after the ticket load): the re-check sees
// it. Otherwise seq != t from N3 on, and that is what every waiting phase
// below tests, atomically with going to sleep:
//
//   - spinning: SpinUntil(&seq, t) returns as soon as seq != t;
//   - futex: the kernel queues the sleeper only if seq == t, under the
//     same lock FutexWake takes;
//   - runtime: the sleeper checks seq == t and queues itself under e.mu,
//     which Notify takes to dequeue.
//
// The sleep counts are the same argument one level down. A waiter about
// to sleep increments fsleep (futex) or rsleep (runtime) and only then
// looks at seq (S1, S2); Notify increments seq and only then loads the
// counts (N3, N4). Either the sleeper sees seq != t and does not sleep, or
// Notify sees the count and wakes, and the wake and the sleep are ordered
// by the kernel's futex bucket lock or by e.mu. So Notify does a wake
// (a syscall, or a goroutine readied) only when some waiter has gone past
// its spin phase; spinners are woken by the change of seq alone.
//
// # Which waiters Notify(n) wakes
//
// Notify(n) wakes up to n sleepers whenever any sleep, even when spinning
// waiters are registered that the change of seq already woke. The cheaper
// choice, letting a woken spinner stand for the wake, loses wakeups: the
// spinner may be about to Cancel (its condition came true by another
// item) or to return ctx.Err(), and the sleeper that should have had the
// item sleeps on. A sleeper woken by Notify returns nil even when its
// context is cancelled at the same moment, so a wake is never swallowed by
// a waiter that goes away: the caller's loop re-checks first, and only the
// next Wait reports the cancellation. The cost is a spare wake now and
// then when spinners and sleepers mix, which is what a sleeper costs
// anyway.
//
// # The word wraps
//
// seq is a 32-bit futex word. A waiter whose ticket is exactly 2^32
// Notifies old when it goes to sleep would sleep through them: it would
// have to stay descheduled between Prepare and its sleep while four
// billion Notifies (each with a waiter registered) went by. Linux's own
// futex-based primitives carry the same bound.
type Event struct {
	// seq is the event word, the one spinners watch and futex sleepers
	// sleep on. Notify increments it, and only when waiters != 0; a
	// Ticket is its value at Prepare.
	seq atomic.Uint32

	// waiters counts registered waiters: +1 in Prepare, -1 in Cancel and
	// at every return from Wait. Notify loads it first; zero ends Notify.
	waiters atomic.Int32

	// fsleep and rsleep count waiters past their spin phase, asleep or
	// about to sleep on the futex (fsleep) or in the runtime queue
	// (rsleep); each is at most waiters. Notify wakes only when one is
	// non-zero.
	fsleep atomic.Int32
	rsleep atomic.Int32

	// wakes counts the wakes Notify and cancellation issued: futex wake
	// syscalls and goroutines readied. For the tests and benchmarks: it
	// is written only on the slow path, beside a syscall or a lock.
	wakes atomic.Uint32

	// mu guards the runtime queue: a FIFO of the rsleep sleepers, each
	// waiting on its own node's channel.
	mu         sync.Mutex
	head, tail *eventNode
}

// Ticket is a waiter's registration: the event word when it registered.
// Pass it to exactly one Cancel or Wait.
type Ticket uint32

// Backend says where a waiter sleeps once its spin phase is over.
type Backend uint8

const (
	// BackendAuto is BackendRuntime: Wait cannot see whether its
	// goroutine is locked to its thread, the one situation where the
	// futex wins. See Backend.resolve for the measurements.
	BackendAuto Backend = iota
	// BackendFutex sleeps in the kernel on the Event's word (FutexWait):
	// one syscall to sleep, one to wake, no scheduler in between. The OS
	// thread blocks, and the P stays with it until sysmon retakes it (one
	// tick, at least 20 µs, and only when other work is waiting), so it
	// is for goroutines locked to their threads (runtime.LockOSThread),
	// such as pinned workers.
	BackendFutex
	// BackendRuntime parks the goroutine in the Go scheduler on a channel:
	// no OS thread blocked, no P held; Notify readies it onto the
	// notifier's P.
	BackendRuntime

	numBackends
)

var backendNames = [numBackends]string{"auto", "futex", "runtime"}

func (b Backend) String() string {
	if b < numBackends {
		return backendNames[b]
	}
	return fmt.Sprintf("Backend(%d)", uint8(b))
}

// resolve turns BackendAuto (and any unknown value) into a concrete
// backend: BackendRuntime, in every situation Wait can observe.
//
// Why: the backend that wins depends on one thing, whether the waiting
// goroutine is locked to its thread. BenchmarkParkPingPong, parked round
// trips with no spin, medians of 5 interleaved runs, two runs, on the
// 2-vCPU VM (shared with other builds, load average 6-7; ratios within a
// run are the result, the absolute times drift):
//
//	                      plain goroutines         locked threads
//	BackendRuntime        0.94-1.0 µs, 0.7-1.0 CPU  57 µs, 42-62 CPU
//	BackendFutex          7.9-8.5 µs, 7.0-9.0 CPU   11-17 µs, 9-18 CPU
//	raw futex (the limit)                           11-14 µs, 10-12 CPU
//	unbuffered channel    0.41-0.63 µs, 0.35-0.52   51-83 µs, 50-92 CPU
//	sync.Cond             0.57-0.58 µs, 0.39-0.48   64-106 µs, 64-110 CPU
//
// (CPU is process CPU-µs per round trip.) A plain goroutine parked in
// the runtime is readied onto the notifier's own P and runs there when
// the notifier blocks: no thread wakes, 8x faster than a futex. A locked
// goroutine parked in the runtime blocks its thread and needs its P
// handed over by the scheduler, a second thread wake and a P hand-off
// per turn: 3-5x slower than sleeping in the futex directly, which is
// level with the bare futex ping-pong (0.98-1.22x in three runs; this
// box's run-to-run noise is wider than that spread). Go offers no way to ask whether the calling goroutine is
// locked, so Auto cannot tell the two apart, and it takes the side whose
// mistake is cheaper and safer: a futex sleeper that is not locked also
// holds its P until sysmon retakes it, which with GOMAXPROCS=1 stalls the
// whole program for a sysmon tick per wait. Locked, pinned callers (the
// pool's workers) ask for BackendFutex.
func (b Backend) resolve() Backend {
	if b == BackendFutex {
		return BackendFutex
	}
	return BackendRuntime
}

// Park says how a waiter waits: spin for Spin, watching the Event's word
// with SpinUntil (the CPU's spin instruction), then sleep on Backend. The
// zero value parks at once on BackendAuto.
//
// A spin pays only when the partner that will ring runs on another core
// at the same time. BenchmarkParkSpin on the 2-vCPU VM (two runs of 5)
// found no budget of 5, 20 or 50 µs that beat parking at once back to
// back: a 5 µs spin took the round trip from 0.8-0.9 µs to 4-13 µs on
// plain goroutines and from 9 µs to 12-18 µs on locked threads, and
// every budget cost more CPU per request (up to 98 CPU-µs against 0.9).
// At a low rate (a request every ~200 µs) the spin could not help, since
// the next request comes after the budget, and only added its CPU. A
// plain goroutine that spins keeps its P, and the partner its Notify
// readied onto that P cannot run until the spin ends (seed 003's lesson:
// the spinner displaces the work that would deliver). Hence Spin is zero
// by default, and worth setting only for pinned threads on machines with
// idle cores; measure there.
type Park struct {
	Spin    time.Duration
	Backend Backend
}

// Prepare registers the caller as a waiter. The caller must then re-check
// its condition and call exactly one of Cancel (the condition is true) or
// Wait with the returned ticket.
func (e *Event) Prepare() Ticket {
	e.waiters.Add(1)
	return Ticket(e.seq.Load())
}

// Cancel unregisters a waiter whose condition turned true after Prepare.
// It never wakes anyone: Notify wakes sleepers regardless of who else is
// registered, so no Notify was aimed at this waiter alone.
func (e *Event) Cancel(t Ticket) {
	e.waiters.Add(-1)
}

// Wait sleeps until a Notify issued after the Prepare that returned t, and
// returns nil; or until ctx is done, and returns ctx.Err(). It may return
// nil without a Notify; the caller re-checks its condition. It always
// unregisters the waiter. It spins for p.Spin first, then parks on
// p.Backend.
//
// With a ctx whose Done is nil (context.Background) Wait does not
// allocate. With a cancellable ctx it returns promptly on cancellation;
// BackendFutex then allocates a context.AfterFunc registration.
func (e *Event) Wait(ctx context.Context, t Ticket, p Park) error {
	tk := uint32(t)
	if e.seq.Load() != tk {
		e.waiters.Add(-1)
		return nil
	}
	done := ctx.Done()
	if done != nil {
		if err := ctx.Err(); err != nil {
			e.waiters.Add(-1)
			if e.seq.Load() != tk {
				return nil // notified before the cancellation: report the wake
			}
			return err
		}
	}
	if p.Spin > 0 && SpinUntil(&e.seq, tk, p.Spin) {
		e.waiters.Add(-1)
		return nil
	}
	eventRaceHook()
	if p.Backend.resolve() == BackendFutex {
		err := e.sleepFutex(ctx, done, tk)
		e.waiters.Add(-1)
		return err
	}
	err, handedOff := e.sleepRuntime(ctx, done, tk)
	if !handedOff {
		e.waiters.Add(-1)
	}
	return err
}

// Notify wakes up to n waiters registered before it; n <= 0 does nothing.
// With no registered waiter it is inlined into the caller as one atomic
// load and the load of a read-only flag (see emulatedStoreLoad): no
// store, no lock, no syscall.
func (e *Event) Notify(n int) {
	if e.waiters.Load() != 0 || emulatedStoreLoad {
		e.notify(n)
	}
}

// emulatedStoreLoad is set under qemu-user emulation on an x86 host,
// where the caller's publishing store and Notify's load of waiters (a
// Dekker pairing) can be reordered and wakeups were lost (see
// internal/emul). Under emulation Notify issues a host barrier and loads
// waiters again. On real hardware the flag is false and costs Notify a
// second load, of a read-only word, and a predictable branch.
var emulatedStoreLoad = emul.StoreLoadBroken

// notify is Notify with a waiter registered (or under emulation).
func (e *Event) notify(n int) {
	if emulatedStoreLoad {
		emul.StoreLoadFence()
		if e.waiters.Load() == 0 {
			return
		}
	}
	if n <= 0 {
		return
	}
	n = min(n, math.MaxInt32)
	e.seq.Add(1) // wakes every spinner, and turns every ticket stale
	eventRaceHook()
	if e.fsleep.Load() != 0 {
		e.wakes.Add(1)
		n -= FutexWake(&e.seq, n)
	}
	if n > 0 && e.rsleep.Load() != 0 {
		e.wakeRuntime(n)
	}
}

// NotifyAll wakes every registered waiter.
func (e *Event) NotifyAll() { e.Notify(math.MaxInt32) }

// Waiters reports how many waiters are registered now: Prepared and not
// yet Cancelled or returned from Wait.
func (e *Event) Waiters() int { return int(e.waiters.Load()) }

// sleepFutex is Wait's futex phase. A cancellable ctx gets an AfterFunc
// that kicks the word: a FutexWake alone could land between the ctx check
// and the kernel's value check and be slept through, while a changed word
// cannot.
func (e *Event) sleepFutex(ctx context.Context, done <-chan struct{}, t uint32) error {
	var c *futexCancel
	if done != nil {
		c = e.armCancel(ctx)
	}
	e.fsleep.Add(1)
	eventRaceHook()
	var err error
	for e.seq.Load() == t {
		if done != nil {
			if err = ctx.Err(); err != nil {
				// A Notify that came before the cancellation moved
				// the word first: report the wake, not the ctx (the
				// caller's loop sees the ctx on its next check).
				if e.seq.Load() != t {
					err = nil
				}
				break
			}
		}
		// Returns at once if seq moved since the load above; a
		// spurious return (a signal, another sleeper's kick) goes
		// round the loop.
		if werr := FutexWait(&e.seq, t, 0); werr != nil {
			panic("knit: Event: " + werr.Error())
		}
	}
	e.fsleep.Add(-1)
	if c != nil {
		c.disarm()
	}
	return err
}

// futexCancel is a futex sleeper's cancellation hook, allocated only for
// a cancellable ctx (so Wait with context.Background stays allocation
// free).
type futexCancel struct {
	e    *Event
	left atomic.Bool // the sleeper is out of its loop: no kick needed
	stop func() bool
}

func (e *Event) armCancel(ctx context.Context) *futexCancel {
	c := &futexCancel{e: e}
	c.stop = context.AfterFunc(ctx, c.fire)
	return c
}

// fire kicks even if the word has moved since the sleeper's ticket: a
// Notify(1) may have woken another sleeper and left this one in the
// kernel on a stale ticket. It skips the kick once the sleeper has left,
// when it would only wake the others for nothing.
func (c *futexCancel) fire() {
	if !c.left.Load() {
		c.e.kick()
	}
}

func (c *futexCancel) disarm() {
	c.left.Store(true)
	c.stop()
}

// kick wakes every futex sleeper for a cancellation. It changes the word,
// so the other waiters return a spurious nil and re-check.
func (e *Event) kick() {
	e.seq.Add(1)
	if e.fsleep.Load() != 0 {
		e.wakes.Add(1)
		FutexWake(&e.seq, math.MaxInt32)
	}
}

// eventNode is one goroutine asleep in the runtime queue. It is linked
// into e's list while queued is true (both guarded by e.mu); whoever
// unlinks it sends exactly one token on ch afterwards, outside the lock.
type eventNode struct {
	next, prev *eventNode
	queued     bool
	ch         chan struct{} // buffered 1, so the waker never blocks
}

// eventNodes recycles nodes, so a runtime sleep does not allocate in the
// steady state. A node goes back only with its channel empty.
var eventNodes = sync.Pool{New: func() any {
	return &eventNode{ch: make(chan struct{}, 1)}
}}

// sleepRuntime is Wait's runtime phase. handedOff reports that a Notify
// dequeued this sleeper and has already taken it off rsleep and waiters
// (see wakeRuntime), so the caller must not decrement waiters again.
func (e *Event) sleepRuntime(ctx context.Context, done <-chan struct{}, t uint32) (err error, handedOff bool) {
	nd := eventNodes.Get().(*eventNode)
	e.rsleep.Add(1)
	eventRaceHook()
	e.mu.Lock()
	if e.seq.Load() != t {
		e.mu.Unlock()
		e.rsleep.Add(-1)
		eventNodes.Put(nd)
		return nil, false
	}
	e.push(nd)
	e.mu.Unlock()
	eventRaceHook()

	handedOff = true
	if done == nil {
		<-nd.ch
	} else {
		select {
		case <-nd.ch:
		case <-done:
			e.mu.Lock()
			if nd.queued {
				e.remove(nd)
				e.mu.Unlock()
				err, handedOff = ctx.Err(), false
				e.rsleep.Add(-1)
			} else {
				// A Notify dequeued us first: its token is on the way,
				// and the wake is ours to report (nil), not to drop.
				e.mu.Unlock()
				<-nd.ch
			}
		}
	}
	eventNodes.Put(nd)
	return err, handedOff
}

// wakeRuntime readies up to n runtime sleepers, oldest first.
func (e *Event) wakeRuntime(n int) {
	var first, last *eventNode
	k := 0
	e.mu.Lock()
	for ; k < n && e.head != nil; k++ {
		nd := e.head
		e.remove(nd)
		if last == nil {
			first = nd
		} else {
			last.next = nd
		}
		last = nd
	}
	e.mu.Unlock()
	if k > 0 {
		// Take the woken off the counts now rather than when they run:
		// a readied goroutine may sit in the run queue for a while, and
		// until the counts drop every Notify would take this slow path
		// (a seq increment and the lock) for nobody. A woken waiter
		// re-checks its condition before it can wait again, so it needs
		// no registration in between. (Measured: an SPSC stream made 1.8
		// slow Notifies per item for 0.002 real wakes per item before.)
		e.rsleep.Add(-int32(k))
		e.waiters.Add(-int32(k))
	}
	for nd := first; nd != nil; {
		// Read next before the send: the woken goroutine recycles nd.
		next := nd.next
		nd.ch <- struct{}{}
		nd = next
	}
	if k > 0 {
		e.wakes.Add(uint32(k))
	}
}

// eventTestYield, when set by a test, is called at the points of the
// protocol where another goroutine's step could slip in (between a
// count and the check it guards), to widen those windows from
// nanoseconds to a reschedule. Nil outside tests; set only while no
// Event is in use.
var eventTestYield func()

func eventRaceHook() {
	if eventTestYield != nil {
		eventTestYield()
	}
}

// push appends nd to the runtime queue; e.mu must be held.
func (e *Event) push(nd *eventNode) {
	nd.queued = true
	nd.next = nil
	nd.prev = e.tail
	if e.tail != nil {
		e.tail.next = nd
	} else {
		e.head = nd
	}
	e.tail = nd
}

// remove unlinks nd from the runtime queue; e.mu must be held.
func (e *Event) remove(nd *eventNode) {
	if nd.prev != nil {
		nd.prev.next = nd.next
	} else {
		e.head = nd.next
	}
	if nd.next != nil {
		nd.next.prev = nd.prev
	} else {
		e.tail = nd.prev
	}
	nd.next, nd.prev, nd.queued = nil, nil, false
}
