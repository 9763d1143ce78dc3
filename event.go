package knit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit/internal/emul"
	"github.com/knit-go/knit/internal/sched"
)

// Event is a doorbell for a condition that lives in the caller's memory
// (a ring index, a closed flag). A waiter registers before it re-checks
// the condition, so a notifier can tell with one atomic load whether
// anyone needs waking: Notify with nobody registered is that load and
// nothing else, no store, no lock, no syscall.
//
// A waiter calls WaitFor(ctx, cond, park), which runs the loop every
// waiter needs:
//
//	for !cond() {
//		t := e.Prepare()
//		if cond() { // the change may have come before Prepare
//			e.Cancel(t)
//			break
//		}
//		if err := e.Wait(ctx, t, park); err != nil {
//			return err
//		}
//	}
//
// Code that does more between the steps (a pool worker that runs queued
// tasks while it waits, a ring that fences its doorbell) writes the loop
// itself, in this order.
//
// A notifier makes the condition true with a write that its own later
// loads cannot pass, and only then calls Notify(1), or NotifyAll to wake
// everyone (to close: set a closed flag, then NotifyAll), or Handoff to
// hand one waiter work and let it run at once. Notify's first step is a
// load of the waiter count; a write that this load overtakes, while the
// waiter's re-check misses the write, is a lost wakeup (event.go, "Why
// no wakeup is lost"). A sync/atomic write (Store, Add, Swap,
// CompareAndSwap, Or, And) is such a write. So are a knit ring's pushes,
// pops and Close, but only on a ring kept fenced by [KeepFenced]: any
// other ring that nobody waits on through its own calls publishes with a
// plain store on amd64 Linux, and a waiter that called Prepare and then
// found it empty can sleep with the item in it. Wait may return nil
// without a Notify, and Notify may wake more waiters than asked for; the
// loop re-checks, so neither loses anything. A Notify that races a
// cancelled ctx is reported as the wake (nil), never dropped.
//
// A waiter that stays descheduled between Prepare and its sleep while
// 2^32 Notifies go by can sleep through them, the bound every
// futex-based primitive has. The zero Event is ready to use. An Event
// must not be copied after first use.
type Event struct {
	// seq is the event word, the one spinners watch and futex sleepers
	// sleep on; a Ticket is its value at Prepare. Notify increments it
	// when a registered waiter may not be asleep yet (see notify).
	seq atomic.Uint32

	// waiters counts registered waiters: +1 in Prepare, -1 in Cancel
	// and when Wait returns, or by the Notify that dequeued a sleeper
	// (see wakeQueue). Never negative: a Cancel or Wait that would make
	// it so panics. Notify loads it first; zero ends Notify.
	waiters atomic.Int32

	// Waiters past their spin phase on the futex (fsleep) and in the
	// runtime (qsleep: the solo word's sleeper and the wait list's);
	// each at most waiters. Notify wakes only where a count is non-zero.
	fsleep atomic.Int32
	qsleep atomic.Int32

	// wakes counts the wakes Notify and cancellation issued (futex wake
	// syscalls, park words taken, goroutines sent a token) while a test
	// asks for it (testHooks.countWakes): an atomic add on every wake is
	// a cost the doorbell does not need.
	wakes atomic.Uint32

	// solo is the word a runtime sleeper parks on when it finds no
	// other asleep and its ctx cannot be cancelled: the common case of
	// one sleeper, which then takes no lock (see sleepQueue).
	solo parkWord

	// mu guards q, the FIFO of the other qsleep sleepers. Each sleeps
	// on a node of its own (a park word, or a channel where the ctx can
	// be cancelled), so a wake goes to the sleeper Notify dequeued and
	// to no other: a sleeper that arrives later cannot take it, as it
	// could from a semaphore shared by all of them.
	mu sync.Mutex
	q  waitList
}

// Ticket is a waiter's registration, from Prepare. Pass it to exactly
// one Cancel or Wait.
type Ticket uint32

// Backend says where a waiter sleeps once its spin is over.
type Backend uint8

const (
	// BackendAuto is BackendRuntime: Wait cannot tell whether its
	// goroutine is locked to its OS thread, the one case the futex wins,
	// and sleeping in the runtime is the cheaper mistake.
	BackendAuto Backend = iota
	// BackendFutex sleeps in the kernel on the Event's word: one syscall
	// to sleep, one to wake. The OS thread blocks and keeps its P until
	// the scheduler takes it back (a sysmon tick at best, and only when
	// other work is waiting: see FutexWait), so it suits goroutines
	// locked to their threads (runtime.LockOSThread), such as pinned
	// workers, for which it is several times faster than the runtime.
	BackendFutex
	// BackendRuntime parks the goroutine in the Go scheduler: no OS
	// thread blocked, no P held, and Notify readies the sleeper on the
	// notifier's P. A wait with a ctx that cannot be cancelled parks on
	// a word of its own, as a channel's receiver does (stack dumps say
	// "waiting"), one that can on a channel ("select").
	//
	// The deferred handoff: a Notify (NotifyAll, or a Handoff that woke
	// no sleeper) that finds a waiter registered leaves a note on the P
	// it runs on, and a waiter on this backend that must sleep soon after
	// (readiedWindow) on the same P first yields that P once, then
	// looks again. The note is the P's, in a table every Event in the
	// process shares (a ring's push and pop ring Events too), not the
	// notifying goroutine's: a waiter yields after any Notify on its P,
	// its own or an unrelated goroutine's. In a request and reply the
	// replier then runs at once and the requester seldom parks; a stale
	// note costs one yield. Nothing turns it off; a knit_nolinkname
	// build has no note (docs/pool-authors.md, "Process-wide effects").
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
// backend. The measurements behind the choice are BenchmarkParkPingPong's
// (BENCHMARKS.md, "Parking"): a plain goroutine parked in the runtime is
// readied onto the notifier's P and no thread wakes, far faster than the
// futex; a locked goroutine parked in the runtime blocks its thread
// anyway and needs its P handed over, several times slower than the
// futex. A futex sleeper that is not locked holds its P until
// sysmon retakes it, which at GOMAXPROCS=1 stalls the program a sysmon
// tick per wait; so Auto takes the runtime, and locked callers ask for
// the futex.
func (b Backend) resolve() Backend {
	if b == BackendFutex {
		return BackendFutex
	}
	return BackendRuntime
}

// WaitFor returns once cond() reports true, waiting on e in between with
// p: the waiter's loop above, written once. cond must read, with
// sync/atomic, state whose writer calls Notify after changing it. It
// returns nil, or ctx.Err() when ctx ends first; a ctx already done
// makes it return ctx.Err() without looking at cond.
func (e *Event) WaitFor(ctx context.Context, cond func() bool, p Park) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	for !cond() {
		t := e.Prepare()
		if cond() {
			e.Cancel(t)
			return nil
		}
		if err := e.Wait(ctx, t, p); err != nil {
			return err
		}
	}
	return nil
}

// Prepare registers the caller as a waiter. The caller then re-checks
// its condition and calls exactly one of Cancel (the condition is true)
// or Wait with the returned ticket.
func (e *Event) Prepare() Ticket {
	e.waiters.Add(1)
	return Ticket(e.seq.Load())
}

// Cancel unregisters a waiter whose condition turned true after Prepare.
// It wakes nobody. A ticket used twice (two Cancels, or a Cancel and a
// Wait) panics, as sync.WaitGroup does on a negative count, where the
// count shows it: when no other waiter is registered.
func (e *Event) Cancel(t Ticket) {
	e.unregister("Cancel")
}

// unregister is a waiter taking itself off waiters. Going below zero
// would mean a Ticket was used twice (or never prepared): the check comes
// before the decrement, so the panic leaves the count as it was and the
// Event stays usable for correct callers after a recover. The CAS is the
// same one locked instruction the add was, and as an RMW it orders the
// same way for Notify's argument.
func (e *Event) unregister(op string) {
	for {
		n := e.waiters.Load()
		if n <= 0 {
			panic(errTicketReused(op))
		}
		if e.waiters.CompareAndSwap(n, n-1) {
			return
		}
	}
}

func errTicketReused(op string) string {
	return "knit: Event." + op + " of a ticket already used: more Cancels and Waits than Prepares"
}

// Wait sleeps until a Notify issued after the Prepare that returned t
// and returns nil, or until ctx is done and returns ctx.Err(). It may
// return nil with no Notify; the caller re-checks its condition. It
// unregisters the waiter either way, so the ticket is spent. It spins
// for p.Spin first, then sleeps on p.Backend.
//
// A ctx already done when Wait is called makes it unregister and return
// ctx.Err() without waiting, even after a Notify: a waiter that never
// slept takes no wake from another, so nothing is lost.
//
// With a ctx whose Done is nil (context.Background) Wait does not
// allocate. With a cancellable ctx it returns promptly once the ctx is
// done; on BackendFutex it then allocates a context.AfterFunc. Waiting
// on a spent ticket panics, as Cancel says.
func (e *Event) Wait(ctx context.Context, t Ticket, p Park) error {
	tk := uint32(t)
	if e.waiters.Load() <= 0 {
		// The caller's own registration is missing: nothing takes a
		// waiter off the count before its Wait, so the ticket was
		// spent. Sleeping now could be for ever.
		panic(errTicketReused("Wait"))
	}
	if err := ctxErr(ctx); err != nil {
		// A done ctx does nothing, as everywhere in knit. No wake is
		// lost: Notify counts only sleepers as woken, and this waiter
		// never slept.
		e.unregister("Wait")
		return err
	}
	if e.seq.Load() != tk {
		e.unregister("Wait")
		return nil
	}
	done := ctx.Done()
	if spin := p.spinEachWait(); spin > 0 && SpinUntil(&e.seq, tk, spin) {
		e.unregister("Wait")
		return nil
	}
	eventRaceHook()
	if haveLinkname && deferredHandoff() && p.Backend.resolve() == BackendRuntime && takeReadied() {
		// The deferred handoff (see readied): a Notify on this P just
		// woke a goroutine, most likely the one that will make our
		// condition true. Let it run first; like a spin, this phase is
		// registered but not asleep, and re-checks the word after.
		sched.Yield()
		if e.seq.Load() != tk {
			e.unregister("Wait")
			return nil
		}
	}
	var err error
	handedOff := false
	if p.Backend.resolve() == BackendFutex {
		err = e.sleepFutex(ctx, done, tk)
	} else {
		err, handedOff = e.sleepQueue(ctx, done, tk)
	}
	if !handedOff {
		e.unregister("Wait")
	}
	return err
}

// Notify wakes up to n waiters registered before it; n <= 0 does nothing.
// With no waiter registered it is inlined into the caller as one atomic
// load (two on a GOARCH that an x86 host may be emulating): no store, no
// lock, no syscall.
func (e *Event) Notify(n int) {
	if uint64(e.waiters.Load())|emul.Pending() != 0 {
		e.notify(n, false)
	}
}

// Why no wakeup is lost.
//
// Go's sync/atomic operations are sequentially consistent: they all
// happen in one total order every goroutine agrees on. Name the waiter's
// steps W1 (Prepare's increment of waiters, then its load of the ticket
// t = seq) and W2 (the re-check of its condition), and the notifier's N1
// (the store that makes the condition true) and N2 (Notify's load of
// waiters). W1 precedes W2 and N1 precedes N2 in program order, so in
// the total order either W2 comes after N1, the re-check sees the store
// and the waiter does not wait; or N2 comes after W1, and Notify sees
// waiters != 0. Notify then increments seq (N3). If N3 came before the
// ticket load, the ticket includes it, and N1 (before N3) is before the
// re-check (after the ticket load): the re-check sees it. Otherwise
// seq != t from N3 on, and that is what every waiting phase tests, in a
// way that cannot miss a change made after it looked:
//
//   - spinning: SpinUntil(&seq, t) returns as soon as seq != t;
//   - yielding (the deferred handoff): Wait loads seq after the yield;
//   - futex: the kernel queues the sleeper only if seq == t, under the
//     lock FutexWake takes;
//   - wait list: the sleep count, below.
//
// A waiter about to sleep increments its sleep count (fsleep or qsleep)
// and only then loads seq (S1, S2); Notify increments seq and only then
// loads the counts (N3, N4). In the total order either S2 sees seq != t
// and the waiter does not sleep, or N4 sees the count and Notify wakes:
// a futex wake, or a wake addressed to each waiter it takes off the
// list (under mu, which the sleeper held while it checked seq and queued
// itself). So Notify issues a wake only when some waiter has gone past
// its spin; spinners are woken by the change of seq alone.
//
// Which waiters Notify(n) wakes: up to n sleepers whenever any sleep,
// even when spinning waiters are registered that the change of seq
// already woke. Letting a woken spinner stand for the wake loses wakes:
// the spinner may be about to Cancel (its condition came true by another
// item) or to return ctx.Err(), and the sleeper that should have had the
// item sleeps on. For the same reason a sleeper woken by Notify returns
// nil even when its ctx is cancelled at the same moment: the caller's
// loop re-checks, and only the next Wait reports the cancellation. The
// cost is a spare wake now and then when spinners and sleepers mix.
//
// TestLitmusSBDoorbell (litmus_test.go) runs W1, W2 against N1, N2 on
// two locked threads and fails on a re-check that missed N1 while N2
// missed W1; CI runs it on native arm64 and Apple silicon.

// notify is Notify with a waiter registered (or an emulated GOARCH). It
// returns how many runtime sleepers it woke. handoff is Handoff's: when
// it woke a sleeper, the yield that follows is the handoff a note would
// stand for, so notify takes back this P's note instead of leaving one.
func (e *Event) notify(n int, handoff bool) (woken int) {
	if !emul.Native() && emul.StoreLoadBroken() {
		// qemu-user on an x86 host lets the caller's store (N1) pass
		// the load of waiters (N2): fence and load again.
		emul.StoreLoadFence()
		if e.waiters.Load() == 0 {
			return 0
		}
	}
	if n <= 0 {
		return 0
	}
	e.seq.Add(1) // wakes every spinner, and turns every ticket stale
	eventRaceHook()
	if e.fsleep.Load() != 0 {
		e.countWakes(1)
		n -= FutexWake(&e.seq, n)
	}
	if n > 0 && e.qsleep.Load() != 0 {
		woken = e.wakeQueue(n)
	}
	if haveLinkname {
		if handoff && woken > 0 {
			clearReadied()
		} else {
			markReadied()
		}
	}
	return woken
}

// Handoff is Notify(1) for handing work to one goroutine that waits for
// it, as a pool hands a task to a parked worker. If the Notify woke a
// goroutine asleep in the Go scheduler, the caller then yields its P to
// it, as a runtime semaphore released with handoff does: the woken
// goroutine runs at once instead of when the caller next blocks, and the
// caller runs again after it (behind whatever else that P has
// runnable). With nobody registered, Handoff is Notify's one load.
//
// Handoff or Notify: use Handoff when the caller's next step is to wait
// for the goroutine it woke, or for something that goroutine frees (a
// submitter whose next Submit needs an idle worker, a putter whose next
// put needs the slot emptied, a request that waits for its reply); use
// Notify when the caller goes on with work the woken goroutine does not
// gate (a producer filling a ring of many slots, a batch). [Slot]
// applies the first rule to every taker it wakes from a park, at every
// GOMAXPROCS; the measurements behind it, at GOMAXPROCS 1 and 2 and
// with tasks that sleep, are BenchmarkSlotRule's (docs/pool-authors.md,
// "Handoff or Notify"), and the floors BENCHMARKS.md's "Handoff and
// Call+Wait: the floors in the same run".
func (e *Event) Handoff() {
	// notify leaves no note on this P when it woke a sleeper (and takes
	// back one an earlier Notify left): the woken goroutine's next Wait
	// on this P then sleeps rather than yields, and the next Handoff
	// finds it asleep and yields to it again.
	if uint64(e.waiters.Load())|emul.Pending() != 0 && e.notify(1, true) > 0 {
		sched.Yield()
	}
}

// NotifyAll wakes every registered waiter.
func (e *Event) NotifyAll() { e.Notify(math.MaxInt32) }

// Waiters reports how many waiters are registered now: Prepared and not
// yet Cancelled or returned from Wait.
func (e *Event) Waiters() int { return int(e.waiters.Load()) }

// sleepers is how many waiters are past their spin phase, for the tests.
func (e *Event) sleepers() int32 {
	return e.fsleep.Load() + e.qsleep.Load()
}

func (e *Event) countWakes(k int32) {
	if countingWakes() {
		e.wakes.Add(uint32(k))
	}
}

// sleepQueue is Wait's runtime phase. A sleeper that finds no other
// asleep, with a ctx that cannot be cancelled, parks on the Event's solo
// word: no lock, no node. Any other queues a node of its own on the wait
// list and blocks on it: on the node's park word when ctx cannot be
// cancelled (a park cannot be given up), on the node's channel otherwise
// and wherever the runtime's park is not linked. handedOff reports that
// the Notify that woke this sleeper has taken it off qsleep and waiters
// already.
func (e *Event) sleepQueue(ctx context.Context, done <-chan struct{}, t uint32) (err error, handedOff bool) {
	parks := done == nil && parkLinked()
	n := e.qsleep.Add(1) // S1
	eventRaceHook()
	if parks && n == 1 && e.solo.claim() {
		eventRaceHook()
		if e.seq.Load() != t { // S2
			if e.solo.unclaim() {
				e.qsleep.Add(-1)
				return nil, false
			}
			// A Notify took the word between the claim and S2: it
			// counted this sleeper as the one it woke.
			e.solo.release()
			return nil, true
		}
		e.solo.sleep()
		e.solo.release()
		return nil, true
	}
	e.mu.Lock()
	if e.seq.Load() != t { // S2
		e.mu.Unlock()
		e.qsleep.Add(-1)
		return nil, false
	}
	w := getWaiter(nil)
	if w.parks = parks; parks {
		w.word.claim()
	}
	w.onSema = done == nil && raceBuild && haveLinkname && !waitListOnly()
	e.q.push(w)
	e.mu.Unlock()
	eventRaceHook()
	if done == nil {
		w.sleep()
		w.put()
		return nil, true
	}
	if sleepUntil(w, &e.mu, &e.q, done) {
		// A Notify dequeued us before the cancellation was acted on:
		// the wake is ours to report (nil), not to drop.
		return nil, true
	}
	e.qsleep.Add(-1)
	return ctx.Err(), false
}

// parkLinked reports whether runtime sleepers may park on park words:
// the runtime's park is linked, the build has no race detector (see
// parkWordUnlock), and no test has asked for channels.
func parkLinked() bool { return haveLinkname && !raceBuild && !waitListOnly() }

// enqueue is sleepQueue for a Select's node w, which sleeps elsewhere: it
// queues w unless seq has moved since the ticket t (S1, S2 as in
// sleepQueue), and reports whether it did. Not queued, the waiter is
// still registered; queued, dequeue takes it off again.
func (e *Event) enqueue(w *waiter, t Ticket) bool {
	e.qsleep.Add(1) // S1
	e.mu.Lock()
	if e.seq.Load() != uint32(t) { // S2
		e.mu.Unlock()
		e.qsleep.Add(-1)
		return false
	}
	e.q.push(w)
	e.mu.Unlock()
	return true
}

// dequeue takes an enqueued node off the wait list and unregisters its
// waiter, unless a Notify took it first. handedOff reports that one did:
// that Notify counted the node as the sleeper it woke, and took it off
// qsleep and waiters itself.
func (e *Event) dequeue(w *waiter) (handedOff bool) {
	e.mu.Lock()
	if !w.queued {
		e.mu.Unlock()
		return true
	}
	e.q.remove(w)
	e.mu.Unlock()
	e.qsleep.Add(-1)
	e.unregister("Select")
	return false
}

// wakeQueue readies up to n runtime sleepers: the solo sleeper, then
// the wait list's, oldest first. The solo sleeper came when no other was
// asleep, so it is the oldest but for a race between two arrivals.
func (e *Event) wakeQueue(n int) (woken int) {
	if g, ok := e.solo.take(); ok {
		// Counted off before the ready, as the list's are below.
		e.qsleep.Add(-1)
		e.waiters.Add(-1)
		e.countWakes(1)
		ready(g)
		woken = 1
		if n--; n == 0 || e.qsleep.Load() == 0 {
			return woken
		}
	}
	e.mu.Lock()
	chain, k := e.q.take(n, nil)
	e.mu.Unlock()
	if k == 0 {
		return woken
	}
	// Take the woken off the counts now rather than when they run: a
	// readied goroutine may sit in the run queue for a while, and until
	// the counts drop every Notify would take this slow path (a seq
	// increment and the lock) for nobody. A woken waiter re-checks its
	// condition before it can wait again, so it needs no registration in
	// between. (Measured: an SPSC stream made 1.8 slow Notifies per item
	// for 0.002 real wakes per item before.)
	e.qsleep.Add(-int32(k))
	e.waiters.Add(-int32(k))
	e.countWakes(int32(k))
	wakeAll(chain)
	return woken + k
}

// sleepFutex is Wait's futex phase. A cancellable ctx gets an AfterFunc
// that kicks the word: a FutexWake alone could land between the ctx check
// and the kernel's value check and be slept through, while a changed word
// cannot.
func (e *Event) sleepFutex(ctx context.Context, done <-chan struct{}, t uint32) error {
	var c *futexCancel
	if done != nil {
		c = e.armCancel(ctx)
	}
	e.fsleep.Add(1) // S1
	eventRaceHook()
	var err error
	for e.seq.Load() == t { // S2
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
