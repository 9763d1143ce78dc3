package knit

import (
	"context"
	"sync/atomic"
)

// SPSC is a bounded single-producer single-consumer ring: Lamport's ring
// with each side caching the other's index (rigtorp's SPSCQueue), so in
// steady state a push touches only the producer's line and the slot, and
// a pop only the consumer's line and the slot; the other side's index is
// re-read only when the cached copy says full (or empty).
//
// Contract: at most one goroutine pushes (TryPush, Push, PushBatch) and
// at most one pops (TryPop, Pop, PopBatch) at a time; Close, Len and Cap
// may be called from anywhere.
type SPSC[T any] struct {
	_ [CacheLineSize]byte // keep the producer's line off whatever precedes the ring

	// The producer's line.
	tail      atomic.Uint64 // next position to fill, | closedBit; advanced by the producer's CAS, closed by Close
	headCache uint64        // the producer's last view of head; head only grows, so a stale copy only under-reports room
	_         [CacheLineSize - 16]byte

	// The consumer's line.
	head      atomic.Uint64 // next position to take; stored by the consumer only
	tailCache uint64        // the consumer's last view of tail (closed bit cleared); only under-reports items
	_         [CacheLineSize - 16]byte

	// Read-only after construction.
	buf   []T
	mask  uint64
	bells doorbells
}

// NewSPSC returns an SPSC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity.
func NewSPSC[T any](capacity int, opts ...Option) *SPSC[T] {
	c := roundCapacity("SPSC", capacity)
	q := &SPSC[T]{buf: make([]T, c), mask: uint64(c - 1)}
	q.bells.park = ringPark(opts)
	return q
}

// push is the producer's attempt. The item is written before the CAS that
// publishes it; the slot is free (head has passed it), so nobody reads it
// until the CAS succeeds. Only Close can make the CAS fail, and then the
// slot is cleared again so the ring keeps nothing alive.
func (q *SPSC[T]) push(v T) status {
	t := q.tail.Load()
	if t&closedBit != 0 {
		return stClosed
	}
	if t-q.headCache > q.mask {
		q.headCache = q.head.Load()
		if t-q.headCache > q.mask {
			return stFull
		}
	}
	q.buf[t&q.mask] = v
	if !q.tail.CompareAndSwap(t, t+1) {
		var zero T
		q.buf[t&q.mask] = zero
		return stClosed
	}
	return stOK
}

// pop is the consumer's attempt. The slot is read and cleared before head
// moves past it, so the producer cannot reuse it underneath.
func (q *SPSC[T]) pop() (T, status) {
	var zero T
	h := q.head.Load()
	if h == q.tailCache {
		t := q.tail.Load()
		q.tailCache = t &^ closedBit
		if h == q.tailCache {
			if t&closedBit != 0 {
				return zero, stDrained
			}
			return zero, stEmpty
		}
	}
	v := q.buf[h&q.mask]
	q.buf[h&q.mask] = zero
	q.head.Store(h + 1)
	return v, stOK
}

// pushed rings the consumer. An SPSC push publishes and checks for Close
// in one CAS, so no item lands after Close and one notify is enough.
func (q *SPSC[T]) pushed(n int) { q.bells.notEmpty.Notify(n) }

// TryPush adds v if there is room and the ring is open.
func (q *SPSC[T]) TryPush(v T) bool {
	if q.push(v) != stOK {
		return false
	}
	q.bells.notEmpty.Notify(1)
	return true
}

// TryPop removes the oldest item if there is one.
func (q *SPSC[T]) TryPop() (T, bool) {
	v, st := q.pop()
	if st != stOK {
		return v, false
	}
	q.bells.notFull.Notify(1)
	return v, true
}

// Push adds v, spinning and then parking while the ring is full.
func (q *SPSC[T]) Push(ctx context.Context, v T) error {
	if q.push(v) == stOK {
		q.bells.notEmpty.Notify(1)
		return nil
	}
	return pushSlow[T](q, &q.bells, ctx, v)
}

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (q *SPSC[T]) Pop(ctx context.Context) (T, error) {
	if v, st := q.pop(); st == stOK {
		q.bells.notFull.Notify(1)
		return v, nil
	}
	return popSlow[T](q, &q.bells, ctx)
}

// PushBatch adds as many of vs as fit, in order, with one CAS.
func (q *SPSC[T]) PushBatch(vs []T) int {
	n := q.pushBatch(vs)
	if n > 0 {
		q.bells.notEmpty.Notify(n)
	}
	return n
}

// PopBatch takes up to len(dst) of the oldest items with one store.
func (q *SPSC[T]) PopBatch(dst []T) int {
	n := q.popBatch(dst)
	if n > 0 {
		q.bells.notFull.Notify(n)
	}
	return n
}

func (q *SPSC[T]) pushBatch(vs []T) int {
	if len(vs) == 0 {
		return 0
	}
	t := q.tail.Load()
	if t&closedBit != 0 {
		return 0
	}
	room := q.mask + 1 - (t - q.headCache)
	if room < uint64(len(vs)) {
		q.headCache = q.head.Load()
		room = q.mask + 1 - (t - q.headCache)
	}
	n := min(uint64(len(vs)), room)
	if n == 0 {
		return 0
	}
	for i := range n {
		q.buf[(t+i)&q.mask] = vs[i]
	}
	if !q.tail.CompareAndSwap(t, t+n) {
		var zero T
		for i := range n {
			q.buf[(t+i)&q.mask] = zero
		}
		return 0
	}
	return int(n)
}

func (q *SPSC[T]) popBatch(dst []T) int {
	if len(dst) == 0 {
		return 0
	}
	h := q.head.Load()
	avail := q.tailCache - h
	if avail < uint64(len(dst)) {
		q.tailCache = q.tail.Load() &^ closedBit
		avail = q.tailCache - h
	}
	n := min(uint64(len(dst)), avail)
	if n == 0 {
		return 0
	}
	var zero T
	for i := range n {
		s := &q.buf[(h+i)&q.mask]
		dst[i] = *s
		*s = zero
	}
	q.head.Store(h + n)
	return int(n)
}

// Close stops intake and wakes every waiter; items already in the ring
// stay poppable.
func (q *SPSC[T]) Close() {
	q.tail.Or(closedBit)
	q.bells.closeBells()
}

// Len is the number of items in the ring.
func (q *SPSC[T]) Len() int { return ringLen(q.tail.Load(), q.head.Load(), len(q.buf)) }

// Cap is the ring's capacity.
func (q *SPSC[T]) Cap() int { return len(q.buf) }
