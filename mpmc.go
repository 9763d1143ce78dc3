package knit

import (
	"context"
	"iter"
)

// MPMC is a bounded multi-producer multi-consumer ring (Vyukov's
// bounded queue, with a sequence per slot): any number of goroutines push
// and pop at once. Producers contend on one CAS per push (or per batch),
// consumers on another, and a failed CAS backs off with the spin hint.
//
// Every publish is a sync/atomic store (XCHG on amd64, STLR on arm64),
// ordered before any load that follows it, so code may wait for the ring
// through an Event of its own: TryPush, then Notify.
//
// Memory: Cap slots of T plus an 8-byte sequence each (rounded to T's
// alignment), zero at creation (the OS supplies the pages as they are
// first used), plus under 1 KiB of padded indices and doorbells. The zero
// MPMC is not a ring; create one with NewMPMC.
type MPMC[T any] struct {
	r seqRing[T]
}

// NewMPMC returns an MPMC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity, or if the
// slots would take more than 1 TiB.
func NewMPMC[T any](capacity int, opts ...Option) *MPMC[T] {
	q := &MPMC[T]{}
	q.r.init("MPMC", capacity, false, false, opts)
	return q
}

// TryPush adds v if there is room and the ring is open.
// With several consumers, one between taking an item and freeing its
// slot holds that slot: TryPush may then report full while a pop that
// began later has already returned.
func (q *MPMC[T]) TryPush(v T) bool { return q.r.tryPush(v) }

// TryPop removes the oldest ready item if there is one.
// With several producers, one that has claimed a slot but not yet filled
// it holds back the items behind it: TryPop may then report empty while
// a push that began later has already returned. Pop waits for them.
func (q *MPMC[T]) TryPop() (T, bool) { return q.r.tryPop() }

// TrySend adds v if there is room and the ring is open, and otherwise
// says which: ErrFull or ErrClosed.
func (q *MPMC[T]) TrySend(v T) error { return q.r.trySend(v) }

// TryRecv removes the oldest ready item if there is one, and otherwise
// says why not: ErrEmpty, or ErrClosed once the ring is closed and
// drained.
func (q *MPMC[T]) TryRecv() (T, error) { return q.r.tryRecv() }

// Push adds v, spinning and then parking while the ring is full.
func (q *MPMC[T]) Push(ctx context.Context, v T) error { return q.r.pushWait(ctx, v) }

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (q *MPMC[T]) Pop(ctx context.Context) (T, error) { return q.r.popWait(ctx) }

// PushBatch adds as many of vs as fit, in order, with one CAS.
func (q *MPMC[T]) PushBatch(vs []T) int { return q.r.pushMany(vs) }

// PopBatch takes up to len(dst) of the oldest ready items, with one CAS.
func (q *MPMC[T]) PopBatch(dst []T) int { return q.r.popMany(dst) }

// Close stops intake and wakes every waiter; items already pushed stay
// poppable. Any goroutine may call it.
func (q *MPMC[T]) Close() { q.r.close() }

// Len is the number of items in the ring, including any a producer has claimed and is still writing.
func (q *MPMC[T]) Len() int { return q.r.len() }

// Cap is the ring's capacity.
func (q *MPMC[T]) Cap() int { return len(q.r.slots) }

// TrySendBatch adds a prefix of vs, as much as fits, in order, and says
// why it stopped short: nil when all of vs went in, else ErrFull, or
// ErrClosed once the ring is closed. It never blocks.
func (q *MPMC[T]) TrySendBatch(vs []T) (int, error) { return trySendBatch[T](&q.r, vs) }

// SendBatch adds all of vs, in order, waiting while the ring is full as
// Push does. It returns len(vs) and nil, or how many went in and
// ErrClosed or ctx.Err() when it stopped early. A ctx already done adds
// nothing.
func (q *MPMC[T]) SendBatch(ctx context.Context, vs []T) (int, error) {
	return sendBatch[T](ctx, &q.r, vs)
}

// TryRecvBatch fills a prefix of dst with the oldest items and returns
// how many; when it took none it says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. It never blocks.
func (q *MPMC[T]) TryRecvBatch(dst []T) (int, error) { return tryRecvBatch[T](&q.r, dst) }

// RecvBatch waits as Pop does until an item is ready, then takes up to
// len(dst) of the oldest items and returns how many; or 0 and ErrClosed
// once the ring is closed and drained, or ctx.Err(). A ctx already done
// takes nothing.
func (q *MPMC[T]) RecvBatch(ctx context.Context, dst []T) (int, error) {
	return recvBatch[T](ctx, &q.r, dst)
}

// All ranges over the items as Pop takes them: the ring's counterpart of
// ranging over a channel. The range ends when the ring is closed and
// drained, or when ctx ends: after the loop, a nil ctx.Err() means closed
// and drained. Leaving the loop early leaves the rest in the ring.
func (q *MPMC[T]) All(ctx context.Context) iter.Seq[T] { return all[T](ctx, &q.r) }

func (q *MPMC[T]) recvOps() ringOps[T] { return &q.r }
func (q *MPMC[T]) sendOps() ringOps[T] { return &q.r }
