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
	// sides returns the guards of the single sides (nil for a side that
	// several goroutines may share) and the ring's name, for the checked
	// build: a blocked call holds its side for the whole wait.
	sides() (push, pop *sideGuard, ring string)
}

// pushSlow is Push after its fast attempt failed: register on notFull,
// re-check, wait; the Event's protocol (and prepare's, above) makes the
// re-check after prepare the guarantee that a slot freed in between is
// not slept through.
func pushSlow[T any](r ringCore[T], b *ringBells, ctx context.Context, v T) error {
	if checkEnds {
		if g, _, ring := r.sides(); g != nil {
			g.enter(ring, "producer")
			defer g.leave()
		}
	}
	yields := yieldsBefore(r.sharedPush())
	for {
		switch r.push(v) {
		case stOK:
			return nil
		case stClosed:
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if yields > 0 {
			yields--
			runtime.Gosched()
			continue
		}
		_, head := r.indices()
		t, fenced := b.notFull.prepare(head)
		st := r.push(v)
		if st == stFull && !fenced {
			b.notFull.fence()
			st = r.push(v)
		}
		switch st {
		case stOK:
			b.notFull.Cancel(t)
			return nil
		case stClosed:
			b.notFull.Cancel(t)
			return ErrClosed
		}
		if err := b.notFull.Wait(ctx, t, b.park); err != nil {
			return err
		}
	}
}

// popSlow is Pop after its fast attempt failed.
func popSlow[T any](r ringCore[T], b *ringBells, ctx context.Context) (T, error) {
	if checkEnds {
		if _, g, ring := r.sides(); g != nil {
			g.enter(ring, "consumer")
			defer g.leave()
		}
	}
	var zero T
	yields := yieldsBefore(r.sharedPop())
	for {
		v, st := r.pop()
		switch st {
		case stOK:
			return v, nil
		case stDrained:
			return zero, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		if yields > 0 {
			yields--
			runtime.Gosched()
			continue
		}
		tail, _ := r.indices()
		t, fenced := b.notEmpty.prepare(tail &^ closedBit)
		v, st = r.pop()
		if st == stEmpty && !fenced {
			b.notEmpty.fence()
			v, st = r.pop()
		}
		switch st {
		case stOK:
			b.notEmpty.Cancel(t)
			return v, nil
		case stDrained:
			b.notEmpty.Cancel(t)
			return zero, ErrClosed
		}
		if err := b.notEmpty.Wait(ctx, t, b.park); err != nil {
			return zero, err
		}
	}
}
