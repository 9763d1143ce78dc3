package knit

import (
	"context"
	"iter"
)

// SPMC is a bounded single-producer multi-consumer ring: one goroutine
// pushes, any number pop. The producer, being alone, publishes without a
// CAS, storing its index; consumers claim items by CAS on
// a shared index (a failed CAS backs off with the spin hint).
//
// Every publish is a sync/atomic store (XCHG on amd64, STLR on arm64),
// ordered before any load that follows it, so code may wait for the ring
// through an Event of its own: TryPush, then Notify.
//
// Memory: Cap slots of T plus an 8-byte sequence each (rounded to T's
// alignment), zero at creation (the OS supplies the pages as they are
// first used), plus under 1 KiB of padded indices and doorbells. The zero
// SPMC is not a ring; create one with NewSPMC.
type SPMC[T any] struct {
	r seqRing[T]
}

// NewSPMC returns an SPMC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity, or if the
// slots would take more than 1 TiB.
func NewSPMC[T any](capacity int, opts ...Option) *SPMC[T] {
	q := &SPMC[T]{}
	q.r.init("SPMC", capacity, true, false, opts)
	return q
}

// TryPush adds v if there is room and the ring is open.
// With several consumers, one between taking an item and freeing its
// slot holds that slot: TryPush may then report full while a pop that
// began later has already returned.
func (q *SPMC[T]) TryPush(v T) bool { return q.r.tryPush(v) }

// TryPop removes the oldest ready item if there is one.
func (q *SPMC[T]) TryPop() (T, bool) { return q.r.tryPop() }

// TrySend adds v if there is room and the ring is open, and otherwise
// says which: ErrFull or ErrClosed.
func (q *SPMC[T]) TrySend(v T) error { return q.r.trySend(v) }

// TryRecv removes the oldest ready item if there is one, and otherwise
// says why not: ErrEmpty, or ErrClosed once the ring is closed and
// drained.
func (q *SPMC[T]) TryRecv() (T, error) { return q.r.tryRecv() }

// Push adds v, spinning and then parking while the ring is full.
func (q *SPMC[T]) Push(ctx context.Context, v T) error { return q.r.pushWait(ctx, v) }

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (q *SPMC[T]) Pop(ctx context.Context) (T, error) { return q.r.popWait(ctx) }

// PushBatch adds as many of vs as fit, in order, with one store of the index.
func (q *SPMC[T]) PushBatch(vs []T) int { return q.r.pushMany(vs) }

// PopBatch takes up to len(dst) of the oldest ready items, with one CAS.
func (q *SPMC[T]) PopBatch(dst []T) int { return q.r.popMany(dst) }

// Close stops intake and wakes every waiter; items already pushed stay
// poppable. It is a producer call, with SPSC's rule: from the goroutine
// that pushes, or after its last call, as a channel is closed by its
// sender. The producer stores tail, closed bit and all, without a CAS,
// so a Close racing a push can be undone (SPSC.Close says more); the
// consumers may not close it. MPMC's Close is safe from any goroutine.
func (q *SPMC[T]) Close() { q.r.close() }

// Len is the number of items in the ring.
func (q *SPMC[T]) Len() int { return q.r.len() }

// Cap is the ring's capacity.
func (q *SPMC[T]) Cap() int { return len(q.r.slots) }

// TrySendBatch adds a prefix of vs, as much as fits, in order, and says
// why it stopped short: nil when all of vs went in, else ErrFull, or
// ErrClosed once the ring is closed. It never blocks.
func (q *SPMC[T]) TrySendBatch(vs []T) (int, error) { return trySendBatch[T](&q.r, vs) }

// SendBatch adds all of vs, in order, waiting while the ring is full as
// Push does. It returns len(vs) and nil, or how many went in and
// ErrClosed or ctx.Err() when it stopped early. A ctx already done adds
// nothing.
func (q *SPMC[T]) SendBatch(ctx context.Context, vs []T) (int, error) {
	return sendBatch[T](ctx, &q.r, vs)
}

// TryRecvBatch fills a prefix of dst with the oldest items and returns
// how many; when it took none it says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. It never blocks.
func (q *SPMC[T]) TryRecvBatch(dst []T) (int, error) { return tryRecvBatch[T](&q.r, dst) }

// RecvBatch waits as Pop does until an item is ready, then takes up to
// len(dst) of the oldest items and returns how many; or 0 and ErrClosed
// once the ring is closed and drained, or ctx.Err(). A ctx already done
// takes nothing.
func (q *SPMC[T]) RecvBatch(ctx context.Context, dst []T) (int, error) {
	return recvBatch[T](ctx, &q.r, dst)
}

// All ranges over the items as Pop takes them: the ring's counterpart of
// ranging over a channel. The range ends when the ring is closed and
// drained, or when ctx ends: after the loop, a nil ctx.Err() means closed
// and drained. Leaving the loop early leaves the rest in the ring.
func (q *SPMC[T]) All(ctx context.Context) iter.Seq[T] { return all[T](ctx, &q.r) }

func (q *SPMC[T]) recvOps() ringOps[T] { return &q.r }
func (q *SPMC[T]) sendOps() ringOps[T] { return &q.r }
