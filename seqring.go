package knit

import (
	"context"
	"sync/atomic"
)

// seqRing is the bounded ring with a sequence number per slot (Dmitry
// Vyukov's MPMC queue) under MPSC, SPMC and MPMC. Each side claims a
// position by CAS on its index; the slot's sequence then says whose turn
// the slot is, so a claimed slot is written or read without further
// coordination:
//
//	slot.seq == 2*pos          free for the producer of position pos
//	slot.seq == 2*pos+1        holds the item of position pos
//	slot.seq == 2*(pos+cap)    freed by the consumer of pos: free for pos+cap
//
// Vyukov's original uses pos, pos+1 and pos+cap, which collide when
// cap == 1 (a full slot reads as free for the next lap); doubling the
// position keeps "full" odd and "free" even at every capacity.
//
// Why this and not tickets and turns (rigtorp's MPMCQueue, folly's
// MPMCQueue): a ticket ring claims with fetch-add and then waits for the
// slot's turn, so a claimed ticket must be served. That makes TryPush a
// CAS loop anyway, and it makes Close and ctx cancellation unable to
// abandon a claim without wedging the slot for whoever holds the next
// lap's ticket. Claim-by-CAS gives up a claim by simply not making it,
// which is what Push with a deadline and a lossless Close need.
//
// Slots are not padded to a line each: that would cost a line per item,
// and for batch moves neighbouring slots sharing a line is a gain, not
// false sharing.
type seqRing[T any] struct {
	_ [CacheLineSize]byte

	tail atomic.Uint64 // next position to claim for a push, | closedBit
	_    [CacheLineSize - 8]byte

	head atomic.Uint64 // next position to claim for a pop
	_    [CacheLineSize - 8]byte

	// Read-only after construction.
	slots          []seqSlot[T]
	mask           uint64
	singleConsumer bool // MPSC: pops store head instead of CASing it
	bells          doorbells
}

type seqSlot[T any] struct {
	seq atomic.Uint64 // see the table on seqRing
	val T             // owned by whoever claimed the position seq allows
}

func (r *seqRing[T]) init(kind string, capacity int, singleConsumer bool, opts []Option) {
	r.singleConsumer = singleConsumer
	c := roundCapacity(kind, capacity)
	r.slots = make([]seqSlot[T], c)
	for i := range r.slots {
		r.slots[i].seq.Store(2 * uint64(i))
	}
	r.mask = uint64(c - 1)
	r.bells.park = ringPark(opts)
}

// pushMulti claims the tail by CAS. A failed CAS means another producer
// claimed the position (move on) or Close set the bit (stop).
func (r *seqRing[T]) pushMulti(v T) status {
	pos := r.tail.Load()
	for {
		if pos&closedBit != 0 {
			return stClosed
		}
		s := &r.slots[pos&r.mask]
		switch d := int64(s.seq.Load() - 2*pos); {
		case d == 0:
			if r.tail.CompareAndSwap(pos, pos+1) {
				s.val = v
				s.seq.Store(2*pos + 1)
				return stOK
			}
		case d < 0:
			// The slot still holds the item of pos-cap: full.
			return stFull
		}
		pos = r.tail.Load()
	}
}

// popMulti claims the head by CAS.
func (r *seqRing[T]) popMulti() (T, status) {
	var zero T
	pos := r.head.Load()
	for {
		s := &r.slots[pos&r.mask]
		switch d := int64(s.seq.Load() - (2*pos + 1)); {
		case d == 0:
			if r.head.CompareAndSwap(pos, pos+1) {
				v := s.val
				s.val = zero
				s.seq.Store(2 * (pos + r.mask + 1))
				return v, stOK
			}
		case d < 0:
			return zero, r.emptyStatus(pos)
		}
		pos = r.head.Load()
	}
}

// popSingle is popMulti for a ring with one consumer: head is stored, not
// CASed, since nobody else moves it.
func (r *seqRing[T]) popSingle() (T, status) {
	var zero T
	pos := r.head.Load()
	s := &r.slots[pos&r.mask]
	if s.seq.Load() != 2*pos+1 {
		return zero, r.emptyStatus(pos)
	}
	v := s.val
	s.val = zero
	s.seq.Store(2 * (pos + r.mask + 1))
	r.head.Store(pos + 1)
	return v, stOK
}

// emptyStatus tells "nothing ready" from "drained". Once the closed bit is
// set no position can be claimed any more, so a head that reached the
// final tail means every pushed item has been claimed by a consumer. A
// head short of it means a producer claimed a position before Close and
// is still writing it: the caller must wait for that item, not give up.
func (r *seqRing[T]) emptyStatus(pos uint64) status {
	t := r.tail.Load()
	if t&closedBit != 0 && pos >= t&^closedBit {
		return stDrained
	}
	return stEmpty
}

// pushBatch claims the longest free prefix of len(vs) positions with one
// CAS. A slot free for its position stays free until that position is
// claimed, so checking the slots before the CAS is enough.
func (r *seqRing[T]) pushBatch(vs []T) int {
	for {
		pos := r.tail.Load()
		if pos&closedBit != 0 || len(vs) == 0 {
			return 0
		}
		n := uint64(0)
		for n < uint64(len(vs)) && n <= r.mask && r.slots[(pos+n)&r.mask].seq.Load() == 2*(pos+n) {
			n++
		}
		if n == 0 {
			// A slot ahead of pos means another producer claimed pos
			// since the load: the ring is not full, the index is stale.
			if int64(r.slots[pos&r.mask].seq.Load()-2*pos) > 0 {
				continue
			}
			return 0
		}
		if !r.tail.CompareAndSwap(pos, pos+n) {
			continue
		}
		for i := range n {
			s := &r.slots[(pos+i)&r.mask]
			s.val = vs[i]
			s.seq.Store(2*(pos+i) + 1)
		}
		return int(n)
	}
}

// popBatch claims the longest ready prefix of len(dst) positions with one
// CAS, or, with a single consumer, one store after the reads.
func (r *seqRing[T]) popBatch(dst []T) int {
	var zero T
	for {
		pos := r.head.Load()
		n := uint64(0)
		for n < uint64(len(dst)) && r.slots[(pos+n)&r.mask].seq.Load() == 2*(pos+n)+1 {
			n++
		}
		if n == 0 {
			// A slot ahead of pos means another consumer took pos since
			// the load: the ring is not empty, the index is stale.
			if int64(r.slots[pos&r.mask].seq.Load()-(2*pos+1)) > 0 {
				continue
			}
			return 0
		}
		if !r.singleConsumer && !r.head.CompareAndSwap(pos, pos+n) {
			continue
		}
		for i := range n {
			s := &r.slots[(pos+i)&r.mask]
			dst[i] = s.val
			s.val = zero
			s.seq.Store(2 * (pos + i + r.mask + 1))
		}
		if r.singleConsumer {
			r.head.Store(pos + n)
		}
		return int(n)
	}
}

func (r *seqRing[T]) push(v T) status { return r.pushMulti(v) }

func (r *seqRing[T]) pop() (T, status) {
	if r.singleConsumer {
		return r.popSingle()
	}
	return r.popMulti()
}

// pushed rings notEmpty after a publish. A producer claims its position
// before Close and may publish after it; consumers that already saw
// "closed, but an item is still in flight" sleep waiting for exactly that
// publish, and any of them may be the one that must then report drained.
// So a publish on a closed ring wakes them all; on an open ring one per
// item, and the Close itself rang everyone once.
func (r *seqRing[T]) pushed(n int) {
	if r.tail.Load()&closedBit != 0 {
		r.bells.notEmpty.NotifyAll()
		return
	}
	r.bells.notEmpty.Notify(n)
}

// The exported methods below are promoted into MPSC, SPMC and MPMC.

// TryPush adds v if there is room and the ring is open. With several
// consumers, a consumer between taking an item and freeing its slot holds
// that slot, so TryPush may report full while a pop that began later has
// already returned.
func (r *seqRing[T]) TryPush(v T) bool {
	if r.pushMulti(v) != stOK {
		return false
	}
	r.pushed(1)
	return true
}

// TryPop removes the oldest ready item if there is one. "Ready" matters
// with several producers: a producer that has claimed a position but not
// yet written it holds back the items behind it, so TryPop may report
// empty while a push that began later has already returned. Pop waits for
// the held-back item instead.
func (r *seqRing[T]) TryPop() (T, bool) {
	v, st := r.pop()
	if st != stOK {
		return v, false
	}
	r.bells.notFull.Notify(1)
	return v, true
}

// Push adds v, spinning and then parking while the ring is full.
func (r *seqRing[T]) Push(ctx context.Context, v T) error {
	if r.pushMulti(v) == stOK {
		r.pushed(1)
		return nil
	}
	return pushSlow[T](r, &r.bells, ctx, v)
}

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (r *seqRing[T]) Pop(ctx context.Context) (T, error) {
	if v, st := r.pop(); st == stOK {
		r.bells.notFull.Notify(1)
		return v, nil
	}
	return popSlow[T](r, &r.bells, ctx)
}

// PushBatch adds as many of vs as fit, in order, with one CAS.
func (r *seqRing[T]) PushBatch(vs []T) int {
	n := r.pushBatch(vs)
	if n > 0 {
		r.pushed(n)
	}
	return n
}

// PopBatch takes up to len(dst) of the oldest ready items with one CAS.
func (r *seqRing[T]) PopBatch(dst []T) int {
	n := r.popBatch(dst)
	if n > 0 {
		r.bells.notFull.Notify(n)
	}
	return n
}

// Close stops intake and wakes every waiter; items already pushed stay
// poppable.
func (r *seqRing[T]) Close() {
	r.tail.Or(closedBit)
	r.bells.closeBells()
}

// Len is the number of items in the ring, including any a producer has
// claimed and is still writing.
func (r *seqRing[T]) Len() int { return ringLen(r.tail.Load(), r.head.Load(), len(r.slots)) }

// Cap is the ring's capacity.
func (r *seqRing[T]) Cap() int { return len(r.slots) }
