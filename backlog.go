package knit

import (
	"context"
	"sync"
)

// Backlog is an unbounded multi-producer multi-consumer queue: a pool's
// backlog of tasks, which any worker may take. It is a Mailbox whose
// consumer side several goroutines share. Producers push as they push to
// a Mailbox: one atomic add, never waiting, never failing while the
// backlog is open. Consumers take turns on the Mailbox's consumer side
// through a mutex held for one attempt (one item, or one batch) and never
// while waiting, so a blocked Pop still leaves when its ctx ends, and a
// Close wakes every blocked consumer.
//
// Cap is math.MaxInt and memory grows while producers outrun the
// consumers, one segment of 1024 items at a time, as a Mailbox's does;
// drained, it holds two segments and pools the rest for the next burst
// until the garbage collector drops them. The consumers' mutex is the
// price of sharing: where one goroutine drains the queue, a Mailbox is
// the same queue without it, and where a bound is acceptable, an MPMC
// takes no lock (BENCHMARKS.md, "Backlog").
//
// Wait for it with its blocking calls or Select; to watch it with an
// Event of your own (TryPush, then Notify), first keep it fenced with
// [KeepFenced], or the Event can miss a push, as with a Mailbox.
//
// The zero Backlog is not a queue; create one with NewBacklog.
type Backlog[T any] struct {
	mu sync.Mutex // one consumer at a time inside m's consumer side
	m  Mailbox[T]
}

// NewBacklog returns an empty, open Backlog; park says how a blocked
// Pop waits (Park{}: the default).
func NewBacklog[T any](park Park) *Backlog[T] {
	b := &Backlog[T]{}
	b.m.init(park)
	b.m.shared = true
	return b
}

// The ring operations (ringOps) the blocking loops, the batch calls and
// Select use: the producer side is the Mailbox's own, the consumer side
// the Mailbox's one consumer at a time.

func (b *Backlog[T]) push(v T) status              { return b.m.push(v) }
func (b *Backlog[T]) pushN(vs []T) int             { return b.m.pushBatch(vs) }
func (b *Backlog[T]) pushClosed() bool             { return true }
func (b *Backlog[T]) indices() (tail, head uint64) { return b.m.indices() }
func (b *Backlog[T]) sharedPush() bool             { return false }
func (b *Backlog[T]) bellsOf() *ringBells          { return &b.m.bells }
func (b *Backlog[T]) pushOps() ringOps[T]          { return b }

func (b *Backlog[T]) pop() (T, status) {
	b.mu.Lock()
	v, st := b.m.pop()
	b.mu.Unlock()
	return v, st
}

func (b *Backlog[T]) popN(dst []T) int {
	b.mu.Lock()
	n := b.m.popBatch(dst)
	b.mu.Unlock()
	return n
}

// popEmpty: see ringOps; under mu, as the pops are.
func (b *Backlog[T]) popEmpty() status {
	b.mu.Lock()
	st := b.m.popEmpty()
	b.mu.Unlock()
	return st
}

// A consumer that finds the backlog empty yields before it sleeps, as a
// shared side of a ring does (see sharedYields).
func (b *Backlog[T]) sharedPop() bool { return true }

func (b *Backlog[T]) sides() (push, pop *sideGuard, ring string) { return nil, nil, "Backlog" }

// popInFlight: see ringCore and "In flight" (ringwait.go). Producers
// claim slots with an add and publish out of order, and several
// consumers wait, as on an MPMC. The consumers' position first, then the
// producers' (which counts every claimed slot): a claim missed came
// after the waiter registered. A push never waits, so no push is.
func (b *Backlog[T]) popInFlight() bool {
	head := b.m.head.Load()
	tail, _ := b.m.indices()
	return tail != head
}

func (b *Backlog[T]) pushInFlight() bool { return false }

func (b *Backlog[T]) popOps() ringOps[T] { return b }

// TryPop removes the oldest ready item: see Consumer.TryPop.
func (b *Backlog[T]) TryPop() (T, error) {
	v, st := b.pop()
	return v, statusErr[st&7]
}

// Pop removes the oldest item, waiting while the backlog is empty: see
// Consumer.Pop.
func (b *Backlog[T]) Pop(ctx context.Context) (T, error) {
	if err := ctxErr(ctx); err != nil {
		var zero T
		return zero, err
	}
	if v, st := b.pop(); st == stOK {
		return v, nil
	}
	return popSlow[T](b, &b.m.bells, ctx)
}

// TryPopBatch takes up to len(dst) ready items: see Consumer.TryPopBatch.
func (b *Backlog[T]) TryPopBatch(dst []T) (int, error) { return tryPopBatch[T](b, dst) }

// PopBatch waits for an item, then takes what is ready: see
// Consumer.PopBatch.
func (b *Backlog[T]) PopBatch(ctx context.Context, dst []T) (int, error) {
	return popBatch[T](ctx, b, dst)
}

// TryPush adds v: nil, or ErrClosed after Close; never ErrFull.
func (b *Backlog[T]) TryPush(v T) error { return b.m.TryPush(v) }

// Push is TryPush with the done-ctx rule: it never waits.
func (b *Backlog[T]) Push(ctx context.Context, v T) error { return b.m.Push(ctx, v) }

// TryPushBatch adds all of vs, in order, unless the backlog closes
// meanwhile (ErrClosed).
func (b *Backlog[T]) TryPushBatch(vs []T) (int, error) { return b.m.TryPushBatch(vs) }

// PushBatch is TryPushBatch with the done-ctx rule: it never waits.
func (b *Backlog[T]) PushBatch(ctx context.Context, vs []T) (int, error) {
	return b.m.PushBatch(ctx, vs)
}

// Close stops intake and wakes every consumer, which drain what was
// pushed before and then get ErrClosed. Any goroutine may call it; it is
// idempotent.
func (b *Backlog[T]) Close() { b.m.Close() }

// Len is the number of items in the backlog, including any a producer
// has claimed and is still writing (a snapshot).
func (b *Backlog[T]) Len() int { return b.m.Len() }

// Cap is math.MaxInt: a Backlog has no bound.
func (b *Backlog[T]) Cap() int { return b.m.Cap() }
