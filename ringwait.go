package knit

import (
	"context"
	"runtime"
)

// sharedYields: where several goroutines share the blocked side (MPMC's
// both, MPSC's producers, SPMC's consumers), a blocked Push or Pop yields
// its P up to this many times, looking again after each, before it
// registers and sleeps. More goroutines than Ps share a few Ps there, and
// the one that would unblock this one is often runnable on this very P
// or running on another: a yield lets it run, where a sleep costs a park,
// a wake, and on a relaxed bell the barrier that takes it back to fenced.
// Where one goroutine owns the side (SPSC, Words, a Mailbox's consumer, a
// Broadcast) the consumer, alone on its P, would yield for nothing at
// every empty look, so it parks at once (BENCHMARKS.md, "Blocking MPMC,
// after the yield" and "Blocking calls on shared sides: four yields").
const sharedYields = 4

// yieldsBefore is how many times a blocked call yields before it sleeps.
func yieldsBefore(shared bool) int {
	if shared {
		return sharedYields
	}
	return 0
}

// The blocking half of every ring: the loops a Push or Pop runs once its
// fast attempt failed, written once for every kind.

// ringCore is the non-blocking half of a ring.
type ringCore[T any] interface {
	// push is one attempt to add v; on success it has rung notEmpty.
	push(v T) status
	// pop is one attempt to take an item; on success it has rung notFull.
	pop() (T, status)
	// indices loads tail and head, for a waiter's lastPark hint.
	indices() (tail, head uint64)
	// sharedPush and sharedPop report that several goroutines may push,
	// or pop: a blocked one yields before it sleeps (sharedYields).
	sharedPush() bool
	sharedPop() bool
	// pushInFlight and popInFlight report, where several goroutines
	// share the waiting side and the other side frees or publishes
	// positions out of order, that room (an item) is on its way: a
	// position the other side has claimed and not yet finished. See "In
	// flight", below. False wherever the shape cannot arise.
	pushInFlight() bool
	popInFlight() bool
	// sides returns the guards of the single sides (nil for a side that
	// several goroutines may share) and the ring's name, for the checked
	// build: a blocked call holds its side for the whole wait.
	sides() (push, pop *sideGuard, ring string)
}

// # In flight
//
// Where several goroutines claim positions on each side (MPMC, and a
// Backlog's consumers), positions are claimed in order but finished out
// of order: a producer may publish i+1 while i is still being written,
// and a consumer may free the slot of i+1 before that of i. Each publish
// rings one waiter. A consumer woken by i+1's publish finds the head, i,
// not ready; if it slept again, the wake would be spent, i's publish
// would wake one consumer for i, and i+1 would stay in the queue while
// the others sleep (on a full MPMC, the same with producers and freed
// slots). So a blocked call does not sleep while a position is in
// flight at the head it waits on (the other side has claimed it and not
// finished it, which takes it no more than a copy of the item) and
// another waiter is registered on the bell: it takes its registration
// back, yields, and looks again.
//
// Why that loses nothing. A waiter sleeps only after a registered,
// fenced re-check found nothing, in one of two states:
//
//   - nothing in flight: the waiter loads the other side's index after
//     its own (head, then tail, for a consumer), so every claim it did
//     not see came after its registration;
//   - the only waiter registered, with its head in flight: its re-check
//     read that very slot and missed its publish.
//
// Either way the publish it missed sees its registration (bell.go's
// argument) and notifies: a sleeper is woken, or every ticket goes
// stale. In the second state no other waiter can be asleep when that
// publish notifies, but one that slept after finding its side truly
// empty, which means the in-flight position was taken meanwhile: any
// that registered while it was in flight counted this one and yielded.
// So the publish wakes this waiter. A woken waiter runs this loop, and
// sleeps again only in one of those states, so every publish after a
// waiter's sleep ends with its position taken or a waiter awake: no item
// (room) is left while its waiters sleep. A woken call whose ctx ends
// before it took anything passes the wake on when a position is in
// flight, since it may have been the one that Notify meant.
//
// The lone waiter sleeps rather than yields because a yield there is a
// spin: on two Ps, a lone consumer of an MPMC that yielded at every
// claim in flight took the producer's lines at every item and ran at
// twice the time per item (BENCHMARKS.md, "Reliability round 5"). Both
// checks cost nothing while nobody waits: they run only in a registered
// waiter, after its re-check failed.

// blockedCall is one blocked Push or Pop, as await drives it; R is what
// a successful attempt hands back (a Pop's item, nothing for a Push). It
// travels as a result, never through a pointer to the caller's frame:
// await calls attempt through its type parameter, so a pointer held by
// the call would escape, and every wait would allocate a copy of it.
type blockedCall[R any] interface {
	// attempt is one non-blocking try: stOK, or the final stClosed or
	// stDrained, ends the wait; stFull or stEmpty goes on waiting.
	attempt() (R, status)
	// position is the index the re-check reads, for the bell's hint.
	position() uint64
	// inFlight: see "In flight", above.
	inFlight() bool
}

// await is the waiter's side of the doorbell, written once for every
// blocked call on one bell (Push, Pop, and a Subscription's wait; Select
// runs the same steps over several bells at once): attempt; yield up to
// yields times; register (W1) and re-check (W4); on a bell that was
// relaxed, fence it and re-check again; take the registration back and
// yield while a position is in flight; else sleep, and attempt again on
// waking. The Event's argument (event.go, "Why no wakeup is lost") and
// prepare's (bell.go) make the re-check after the registration the
// guarantee that an item or room published in between is not slept
// through; "In flight" above makes the wake of one published while
// another was being written reach a waiter that can use it. It returns
// the attempt's final status, or ctx's error once ctx ends.
func await[R any, C blockedCall[R]](ctx context.Context, b *ringBell, park Park, yields int, c C) (R, status, error) {
	woken := false   // a Wait returned nil: a Notify may have meant this call
	waiting := false // the last look found a position in flight beside other waiters
	for {
		if r, st := c.attempt(); st != stFull && st != stEmpty {
			return r, st, nil
		}
		if err := ctx.Err(); err != nil {
			if woken && c.inFlight() {
				b.Notify(1) // pass the wake on: see "In flight"
			}
			var zero R
			return zero, stEmpty, err
		}
		if yields > 0 {
			yields--
			runtime.Gosched()
			continue
		}
		if waiting {
			// Unregistered while the position is in flight: no locked
			// instruction on the bell's line, which the other side's
			// every publish reads, until it is finished.
			if waiting = c.inFlight(); waiting {
				runtime.Gosched()
				continue
			}
		}
		t, fenced := b.prepare(c.position())
		r, st := c.attempt()
		if (st == stFull || st == stEmpty) && !fenced {
			b.fence()
			r, st = c.attempt()
		}
		if st != stFull && st != stEmpty {
			b.Cancel(t)
			return r, st, nil
		}
		if c.inFlight() && b.Waiters() > 1 {
			b.Cancel(t)
			waiting = true
			runtime.Gosched()
			continue
		}
		if err := b.Wait(ctx, t, park); err != nil {
			var zero R
			return zero, stEmpty, err
		}
		woken = true
	}
}

// pushCall and popCall are a ring's blocked Push and Pop.
type pushCall[T any] struct {
	r ringCore[T]
	v T
}

func (c pushCall[T]) attempt() (struct{}, status) { return struct{}{}, c.r.push(c.v) }
func (c pushCall[T]) inFlight() bool              { return c.r.pushInFlight() }
func (c pushCall[T]) position() uint64 {
	_, head := c.r.indices()
	return head
}

type popCall[T any] struct {
	r ringCore[T]
}

func (c popCall[T]) attempt() (T, status) { return c.r.pop() }
func (c popCall[T]) inFlight() bool       { return c.r.popInFlight() }
func (c popCall[T]) position() uint64 {
	tail, _ := c.r.indices()
	return tail &^ closedBit
}

// pushSlow is Push after its fast attempt failed.
func pushSlow[T any](r ringCore[T], b *ringBells, ctx context.Context, v T) error {
	if checkEnds {
		if g, _, ring := r.sides(); g != nil {
			g.enter(ring, "producer")
			defer g.leave()
		}
	}
	_, st, err := await(ctx, &b.notFull, b.park, yieldsBefore(r.sharedPush()), pushCall[T]{r, v})
	if err == nil && st == stClosed {
		err = ErrClosed
	}
	return err
}

// popSlow is Pop after its fast attempt failed.
func popSlow[T any](r ringCore[T], b *ringBells, ctx context.Context) (T, error) {
	if checkEnds {
		if _, g, ring := r.sides(); g != nil {
			g.enter(ring, "consumer")
			defer g.leave()
		}
	}
	v, st, err := await(ctx, &b.notEmpty, b.park, yieldsBefore(r.sharedPop()), popCall[T]{r})
	if err == nil && st == stDrained {
		err = ErrClosed
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}
