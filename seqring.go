package knit

import (
	"context"
	"reflect"
	"runtime"
	"sync/atomic"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// seqRing is the bounded ring with a sequence number per slot (Dmitry
// Vyukov's MPMC queue) under MPSC, SPMC and MPMC. A side with several
// goroutines claims a position by CAS on its index; the slot's sequence
// then says whose turn the slot is, so a claimed slot is written or read
// without further coordination. A side with one goroutine stores its
// index instead: the sequence alone decides.
//
// Sequences are relative to the slot's lap, L(pos) = 2*(pos &^ mask), so
// that zeroed memory is a ring ready for positions 0..cap-1 and a new ring
// needs no initialisation pass (a ring of 2^30 slots is then as cheap to
// create as the allocation, whose pages the OS hands out as they are
// touched):
//
//	slot.seq == L(pos)            free for the producer of position pos
//	slot.seq == L(pos)+1          holds the item of position pos
//	slot.seq == L(pos)+2*cap      freed by the consumer of pos: L(pos+cap)
//
// Vyukov's original uses pos, pos+1 and pos+cap, which collide when
// cap == 1 (a full slot reads as free for the next lap); doubling keeps
// "full" odd and "free" even at every capacity.
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
// false sharing. Spreading the slots of larger items a line apart, as
// xsync's MPMCQueue pads its own, was measured and bought nothing
// (BENCHMARKS.md, "Peers: xsync in every cell").
type seqRing[T any] struct {
	_ [CacheLineSize]byte

	// next position to claim (several producers: CAS) or fill (one
	// producer: stored by it), | closedBit once closed
	tail atomic.Uint64
	_    [CacheLineSize - 8]byte

	// next position to claim (several consumers: CAS) or take (one
	// consumer: stored by it)
	head atomic.Uint64
	_    [CacheLineSize - 8]byte

	bells ringBells

	// The single side's guard (SPMC's producer, MPSC's consumer): empty,
	// unless built with knit_checkends.
	side sideGuard

	// closed is 1 from just before Close sets the closed bit: a copy of
	// that bit on this read-mostly line, written once, for pushed to read
	// after every push and emptyStatus after every pop that found nothing.
	// Reading tail there instead cost a cache miss each under contention:
	// the producers' CASes keep taking tail's line.
	closed atomic.Uint32

	// Read-only after construction.
	slots          []seqSlot[T]
	mask           uint64 // len(slots)-1: slots' length is a power of two
	last           uint64 // capacity-1; below mask, pushes also check admits
	singleProducer bool   // SPMC: the producer stores tail and owns Close
	singleConsumer bool   // MPSC: the consumer stores head
	spinOnLoss     bool   // a lost CAS spins rather than yields: see casLost
	clearSlots     bool   // T holds pointers: a pop clears the slot it took
}

// seqSlot is one slot: the item first, so that a zero-size T adds no
// padding after the sequence.
type seqSlot[T any] struct {
	val T             // owned by whoever the sequence says it is
	seq atomic.Uint64 // see the table on seqRing
}

// clear drops the item a pop took, for the collector.
func (s *seqSlot[T]) clear() {
	var zero T
	s.val = zero
}

// casLost backs off after a CAS on an index lost to another goroutine of
// the same side. Where spinning pays (spinpolicy.DefaultSpins when the
// ring was made) it spins, in Backoff's growing runs of the spin hint.
// Below that it yields the P, as a try loop does after a failed try: on
// two CPUs a retry after a short spin takes the index's line back from
// the CPU whose goroutine just won it, and contended rings moved an item
// per line transfer; a yield, which leaves the line where it is, measured
// faster in every contended shape there (BENCHMARKS.md, "Peers: one call
// per claim, and a lost claim yields").
func (r *seqRing[T]) casLost(bo *Backoff) {
	switch {
	case !seqBackoff():
	case r.spinOnLoss:
		bo.Spin()
	default:
		runtime.Gosched()
	}
}

func (r *seqRing[T]) init(kind string, capacity int, singleProducer, singleConsumer bool, park Park) {
	c := roundCapacity(kind, capacity, sizeOf[seqSlot[T]]())
	r.slots = make([]seqSlot[T], c)
	r.mask = uint64(c - 1)
	r.last = uint64(capacity - 1)
	r.singleProducer, r.singleConsumer = singleProducer, singleConsumer
	r.spinOnLoss = spinpolicy.DefaultSpins()
	r.clearSlots = holdsPointers(reflect.TypeFor[T]())
	r.bells.park = ringPark(park)
}

// lap is L(pos), the sequence of a slot free for pos.
func (r *seqRing[T]) lap(pos uint64) uint64 { return 2 * (pos &^ r.mask) }

// admits reports whether position pos is within the capacity asked for:
// the item of pos-capacity has been taken (its consumer has freed the
// slot, which then never reads as less). With capacity a power of two
// that slot is pos's own, whose check the caller makes anyway, and
// admits is a compare of two fields, inlined; below one, admitsShort
// makes the bound's one extra load, of a line that pos's consumer-side
// neighbours last wrote.
func (r *seqRing[T]) admits(pos uint64) bool { return r.last == r.mask || r.admitsShort(pos) }

func (r *seqRing[T]) admitsShort(pos uint64) bool {
	if pos <= r.last {
		return true
	}
	q := pos - r.last - 1
	return int64(r.slot(q).seq.Load()-(r.lap(q)+2*(r.mask+1))) >= 0
}

// slot returns pos's slot. Its check stands in for the bounds check the
// index needs anyway, and fails only on a ring no constructor made.
func (r *seqRing[T]) slot(pos uint64) *seqSlot[T] {
	i := pos & r.mask
	if i >= uint64(len(r.slots)) {
		panicZero("MPSC, SPMC or MPMC", "NewMPSC, NewSPMC or NewMPMC")
	}
	return &r.slots[i]
}

// push and pop are one attempt each, ringing the other side on success.
// The item travels by pointer from the grid's call down to the slot, and
// from the slot up: an item of more than one word is an array or a struct
// that Go's register ABI passes in memory, and each layer passing it by
// value would copy it again (BENCHMARKS.md, "Peers: xsync in every cell").
func (r *seqRing[T]) push(v T) status { return r.pushFrom(&v) }

func (r *seqRing[T]) pop() (v T, st status) {
	st = r.popTo(&v)
	return v, st
}

// pushFrom and popTo make a shared side's first attempt themselves, so
// that a claim won at once, the common case, is a single call below the
// grid's; pushMulti and popMulti, which repeat it, run only after a lost
// CAS, a stale index, or a full ring (BENCHMARKS.md, "Peers: one call per
// claim, and a lost claim yields"). An empty ring answers from here too:
// a try loop's misses are most of its pops.
func (r *seqRing[T]) pushFrom(v *T) status {
	var st status
	var pos uint64
	if r.singleProducer {
		if checkEnds {
			r.side.enter("SPMC", "producer")
			defer r.side.leave()
		}
		st, pos = r.pushSingle(v)
	} else {
		// Orders as in pushMulti.
		pos = r.tail.Load()
		s, lap := r.slot(pos), r.lap(pos)
		switch {
		case pos&closedBit != 0 || s.seq.Load() != lap || !r.admits(pos):
			st, pos = r.pushMulti(v, false)
		case r.tail.CompareAndSwap(pos, pos+1):
			s.val = *v
			publish(&s.seq, lap+1, &r.bells.notEmpty.mode)
			st = stOK
		default:
			st, pos = r.pushMulti(v, true)
		}
	}
	if st == stOK && r.pushPending(pos, pos+1) {
		r.pushed(pos, pos+1)
	}
	return st
}

func (r *seqRing[T]) popTo(v *T) status {
	var st status
	var pos uint64
	if r.singleConsumer {
		if checkEnds {
			r.side.enter("MPSC", "consumer")
			defer r.side.leave()
		}
		st, pos = r.popSingle(v)
	} else {
		// Orders as in popMulti.
		pos = r.head.Load()
		s, lap := r.slot(pos), r.lap(pos)
		switch d := int64(s.seq.Load() - (lap + 1)); {
		case d < 0:
			return r.emptyStatus(pos)
		case d > 0:
			st, pos = r.popMulti(v, false)
		case r.head.CompareAndSwap(pos, pos+1):
			*v = s.val
			if r.clearSlots {
				s.clear()
			}
			publish(&s.seq, lap+2*(r.mask+1), &r.bells.notFull.mode)
			st = stOK
		default:
			st, pos = r.popMulti(v, true)
		}
	}
	if b := &r.bells.notFull; st == stOK && b.pending(pos, pos+1) {
		b.ring(pos, pos+1)
	}
	return st
}

// pushMulti claims the tail by CAS. A failed CAS means another producer
// claimed the position (move on) or Close set the bit (stop). lost says
// that the caller's own attempt lost its CAS, so the retry backs off
// first. On success it returns the position it filled, for the bell.
func (r *seqRing[T]) pushMulti(v *T, lost bool) (status, uint64) {
	var bo Backoff
	if lost {
		r.casLost(&bo)
	}
	pos := r.tail.Load()
	for {
		if pos&closedBit != 0 {
			return stClosed, 0
		}
		s := r.slot(pos)
		// Acquire: pairs with the release store of the consumer that
		// freed the slot, so its read of the old item is done.
		switch d := int64(s.seq.Load() - r.lap(pos)); {
		case d == 0:
			if !r.admits(pos) {
				return stFull, 0
			}
			if r.tail.CompareAndSwap(pos, pos+1) {
				s.val = *v
				// Release: pairs with the consumers' acquire load of
				// seq; the item is written before it on both arches.
				publish(&s.seq, r.lap(pos)+1, &r.bells.notEmpty.mode)
				return stOK, pos
			}
			r.casLost(&bo)
		case d < 0:
			// The slot still holds the item of pos-cap: full.
			return stFull, 0
		}
		pos = r.tail.Load()
	}
}

// pushSingle is the one producer's push: no CAS, since nobody else moves
// tail. Close is the producer's too, so the closed bit cannot appear
// between the load of tail and the store.
func (r *seqRing[T]) pushSingle(v *T) (status, uint64) {
	pos := r.tail.Load() // our own store
	if pos&closedBit != 0 {
		return stClosed, 0
	}
	s := r.slot(pos)
	// Acquire: pairs with the release store of the consumer that freed
	// the slot. Anything but "free" is the item of pos-cap, still held.
	if s.seq.Load() != r.lap(pos) || !r.admits(pos) {
		return stFull, 0
	}
	s.val = *v
	// Release: pairs with the consumers' acquire load of seq.
	storeRel(&s.seq, r.lap(pos)+1)
	// Release: tail is read by Len and, once closed, by consumers telling
	// drained from empty; it follows the sequence, so a consumer that
	// sees the final tail sees every item below it.
	publish(&r.tail, pos+1, &r.bells.notEmpty.mode)
	return stOK, pos
}

// popMulti claims the head by CAS and returns the position it took; lost
// is pushMulti's.
func (r *seqRing[T]) popMulti(dst *T, lost bool) (status, uint64) {
	var bo Backoff
	if lost {
		r.casLost(&bo)
	}
	pos := r.head.Load()
	for {
		s := r.slot(pos)
		// Acquire: pairs with the producer's release store of seq.
		switch d := int64(s.seq.Load() - (r.lap(pos) + 1)); {
		case d == 0:
			if r.head.CompareAndSwap(pos, pos+1) {
				*dst = s.val
				if r.clearSlots {
					s.clear()
				}
				// Release: pairs with the producers' acquire load of
				// seq; the item is read before the slot reads as free
				// (no load passes a later store on amd64 or an STLR on
				// arm64).
				publish(&s.seq, r.lap(pos)+2*(r.mask+1), &r.bells.notFull.mode)
				return stOK, pos
			}
			r.casLost(&bo)
		case d < 0:
			return r.emptyStatus(pos), 0
		}
		pos = r.head.Load()
	}
}

// popSingle is the one consumer's pop: head is stored, not CASed, since
// nobody else moves it.
func (r *seqRing[T]) popSingle(dst *T) (status, uint64) {
	pos := r.head.Load() // our own store
	s := r.slot(pos)
	if s.seq.Load() != r.lap(pos)+1 { // acquire, as in popMulti
		return r.emptyStatus(pos), 0
	}
	*dst = s.val
	if r.clearSlots {
		s.clear()
	}
	storeRel(&s.seq, r.lap(pos)+2*(r.mask+1))      // release, as in popMulti
	publish(&r.head, pos+1, &r.bells.notFull.mode) // for Len; fences after both
	return stOK, pos
}

// emptyStatus tells "nothing ready" from "drained". Once the closed bit is
// set no position can be claimed any more, so a head that reached the
// final tail means every pushed item has been claimed by a consumer. A
// head short of it means a producer claimed a position before Close and
// is still writing it: the caller must wait for that item, not give up.
//
// While the ring is open it answers from closed, on a read-mostly line,
// and leaves tail alone: a failed pop on an empty ring is most of a try
// loop's pops, and tail's line is the one producers keep taking with
// their CASes. Close stores closed before it sets the bit, so a pop that
// reads 0 there saw an open ring at its look at the slot.
func (r *seqRing[T]) emptyStatus(pos uint64) status {
	if r.closed.Load() == 0 {
		return stEmpty
	}
	t := r.tail.Load()
	if t&closedBit != 0 && pos >= t&^closedBit {
		return stDrained
	}
	return stEmpty
}

// pushBatch claims the longest free prefix of len(vs) positions, with one
// CAS when there are several producers. A slot free for its position
// stays free until that position is claimed, so checking the slots before
// the claim is enough. It returns how many it pushed and the first
// position they took.
func (r *seqRing[T]) pushBatch(vs []T) (int, uint64) {
	var bo Backoff
	for {
		pos := r.tail.Load()
		if pos&closedBit != 0 || len(vs) == 0 {
			return 0, 0
		}
		n := uint64(0)
		for n < uint64(len(vs)) && n <= r.last && r.slot(pos+n).seq.Load() == r.lap(pos+n) && r.admits(pos+n) {
			n++
		}
		if n == 0 {
			// A slot ahead of pos means another producer claimed pos
			// since the load: the ring is not full, the index is stale.
			if !r.singleProducer && int64(r.slot(pos).seq.Load()-r.lap(pos)) > 0 {
				continue
			}
			return 0, 0
		}
		if !r.singleProducer && !r.tail.CompareAndSwap(pos, pos+n) {
			r.casLost(&bo)
			continue
		}
		for i := range n {
			s := r.slot(pos + i)
			s.val = vs[i]
			if i < n-1 || r.singleProducer {
				storeRel(&s.seq, r.lap(pos+i)+1)
			} else {
				publish(&s.seq, r.lap(pos+i)+1, &r.bells.notEmpty.mode)
			}
		}
		if r.singleProducer {
			publish(&r.tail, pos+n, &r.bells.notEmpty.mode)
		}
		return int(n), pos
	}
}

// popBatch claims the longest ready prefix of len(dst) positions, with one
// CAS when there are several consumers; it returns the count and the
// first position, as pushBatch does.
func (r *seqRing[T]) popBatch(dst []T) (int, uint64) {
	var bo Backoff
	for {
		pos := r.head.Load()
		n := uint64(0)
		for n < uint64(len(dst)) && r.slot(pos+n).seq.Load() == r.lap(pos+n)+1 {
			n++
		}
		if n == 0 {
			// A slot ahead of pos means another consumer took pos since
			// the load: the ring is not empty, the index is stale.
			if !r.singleConsumer && int64(r.slot(pos).seq.Load()-(r.lap(pos)+1)) > 0 {
				continue
			}
			return 0, 0
		}
		if !r.singleConsumer && !r.head.CompareAndSwap(pos, pos+n) {
			r.casLost(&bo)
			continue
		}
		for i := range n {
			s := r.slot(pos + i)
			dst[i] = s.val
			if r.clearSlots {
				s.clear()
			}
			if i < n-1 || r.singleConsumer {
				storeRel(&s.seq, r.lap(pos+i)+2*(r.mask+1))
			} else {
				publish(&s.seq, r.lap(pos+i)+2*(r.mask+1), &r.bells.notFull.mode)
			}
		}
		if r.singleConsumer {
			publish(&r.head, pos+n, &r.bells.notFull.mode)
		}
		return int(n), pos
	}
}

// pushed rings notEmpty after positions (from, to] were published, and
// notFull's ring follows their freeing: the doorbell sequence of
// bell.go, so these bells go relaxed once no waiter has registered for a
// while, and a publish is then a release store (MOV on amd64) rather than
// an XCHG, which drains the store buffer, the item's own lines included
// (BENCHMARKS.md, "Rings: relaxed bells on the multi-sided rings"). Code
// that waits for these rings through an Event of its own must therefore
// keep the ring fenced (KeepFenced, watch.go), as the pool does; the
// rings' own calls and Select need nothing.
//
// A producer claims its position before Close and may publish after it;
// consumers that already saw "closed, but an item is still in flight"
// sleep waiting for exactly that publish, and any of them may be the one
// that must then report drained. So a publish on a closed ring wakes them
// all; on an open ring one per item, and the Close itself rang everyone
// once. pushed reads closed after its publish and after the publish's
// second look at the bell's mode (P1 in bell.go); Close stores closed
// before its NotifyAll. A consumer asleep after that NotifyAll registered
// after it, on a bell it made fenced. If this publish saw the bell fenced,
// its store and this load are ordered (XCHG, or MOV and a fence), and in
// the single order of locked operations either the load sees the flag or
// the store came before Close's NotifyAll and the woken consumers found
// the item. If it saw the bell relaxed, it saw it before the consumer's
// switch, whose barrier then made the item visible to the consumer's
// re-check; or after a reset that followed the consumer's registration,
// which followed Close, so the load of closed, after that look, sees the
// flag. (A flag seen before the bit is set only costs a NotifyAll.)
//
// pushPending and the bells' pending are the loads every push and pop
// makes, written into pushFrom, popTo and the batches so that they inline
// there (a call, to pushed or ring, is what the inliner cannot afford);
// pushed and ring run out of line, only when there is someone to wake or
// a relax check is due.
func (r *seqRing[T]) pushPending(from, to uint64) bool {
	return r.closed.Load() != 0 || r.bells.notEmpty.pending(from, to)
}

func (r *seqRing[T]) pushed(from, to uint64) {
	b := &r.bells.notEmpty
	if r.closed.Load() != 0 {
		b.NotifyAll()
		return
	}
	if b.pending(from, to) {
		b.ring(from, to)
	}
}

func (r *seqRing[T]) indices() (tail, head uint64) { return r.tail.Load(), r.head.Load() }

// popEmpty: see ringOps. A head that other consumers moved since the
// batch's look only makes drained likelier, and drained is final.
func (r *seqRing[T]) popEmpty() status { return r.emptyStatus(r.head.Load()) }

func (r *seqRing[T]) sharedPush() bool { return !r.singleProducer }
func (r *seqRing[T]) sharedPop() bool  { return !r.singleConsumer }

func (r *seqRing[T]) sides() (push, pop *sideGuard, ring string) {
	switch {
	case r.singleProducer:
		return &r.side, nil, "SPMC"
	case r.singleConsumer:
		return nil, &r.side, "MPSC"
	}
	return nil, nil, "MPMC"
}

// The grid (see Producer and Consumer), promoted to MPSC, SPMC and MPMC,
// but for the four calls that take or return one item: each type declares
// those itself (multi.go), on top of tryPush, tryPop, pushWait and
// popWait, which pass the item by pointer.

func (r *seqRing[T]) tryPush(v *T) error { return statusErr[r.pushFrom(v)&7] }

func (r *seqRing[T]) tryPop(dst *T) error { return statusErr[r.popTo(dst)&7] }

func (r *seqRing[T]) pushWait(ctx context.Context, v *T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if r.pushFrom(v) == stOK {
		return nil
	}
	return pushSlow[T](r, &r.bells, ctx, *v)
}

func (r *seqRing[T]) popWait(ctx context.Context, dst *T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if r.popTo(dst) == stOK {
		return nil
	}
	v, err := popSlow[T](r, &r.bells, ctx)
	*dst = v
	return err
}

// TryPushBatch adds the prefix of vs that fits, with one claim of the
// index: see Producer.TryPushBatch.
func (r *seqRing[T]) TryPushBatch(vs []T) (int, error) { return tryPushBatch[T](r, vs) }

// PushBatch adds all of vs, waiting for room: see Producer.PushBatch.
func (r *seqRing[T]) PushBatch(ctx context.Context, vs []T) (int, error) {
	return pushBatch[T](ctx, r, vs)
}

// TryPopBatch takes up to len(dst) ready items, with one claim of the
// index: see Consumer.TryPopBatch.
func (r *seqRing[T]) TryPopBatch(dst []T) (int, error) { return tryPopBatch[T](r, dst) }

// PopBatch waits for an item, then takes what is ready: see
// Consumer.PopBatch.
func (r *seqRing[T]) PopBatch(ctx context.Context, dst []T) (int, error) {
	return popBatch[T](ctx, r, dst)
}

// Close stops intake and wakes every waiter: see Producer.Close. On an
// SPMC it is a producer call; MPSC's and MPMC's is safe from any
// goroutine.
func (r *seqRing[T]) Close() { r.close() }

// Len is the number of items in the ring, including any a producer has
// claimed and is still writing.
func (r *seqRing[T]) Len() int { return ringLen(r.tail.Load(), r.head.Load(), r.capacity()) }

// Cap is the ring's capacity.
func (r *seqRing[T]) Cap() int { return r.capacity() }

// capacity is the capacity asked for, 0 for a ring no constructor made.
func (r *seqRing[T]) capacity() int {
	if len(r.slots) == 0 {
		return 0
	}
	return int(r.last + 1)
}

func (r *seqRing[T]) pushN(vs []T) int {
	if checkEnds && r.singleProducer {
		r.side.enter("SPMC", "producer")
		defer r.side.leave()
	}
	n, pos := r.pushBatch(vs)
	if n > 0 && r.pushPending(pos, pos+uint64(n)) {
		r.pushed(pos, pos+uint64(n))
	}
	return n
}

func (r *seqRing[T]) popN(dst []T) int {
	if checkEnds && r.singleConsumer {
		r.side.enter("MPSC", "consumer")
		defer r.side.leave()
	}
	n, pos := r.popBatch(dst)
	if b := &r.bells.notFull; n > 0 && b.pending(pos, pos+uint64(n)) {
		b.ring(pos, pos+uint64(n))
	}
	return n
}

// close sets the closed bit and wakes everyone. With several producers
// the bit is set by a locked OR on tail, which producers CAS, so a claim
// either precedes it (and its item is still delivered) or fails. With one
// producer Close is the producer's, and the bit is stored like a push.
func (r *seqRing[T]) close() {
	if checkEnds && r.singleProducer {
		r.side.closing("SPMC")
		defer r.side.leave()
	}
	r.closed.Store(1) // before the bit: see pushed and emptyStatus
	if r.singleProducer {
		t := r.tail.Load()
		if t&closedBit != 0 {
			return
		}
		storeRel(&r.tail, t|closedBit)
		storeLoadFence() // the closed bit before the loads of the waiter counts
	} else {
		r.tail.Or(closedBit)
	}
	r.bells.closed()
}

func (r *seqRing[T]) bellsOf() *ringBells { return &r.bells }
func (r *seqRing[T]) pushOps() ringOps[T] { return r }
func (r *seqRing[T]) popOps() ringOps[T]  { return r }

func (r *seqRing[T]) pushClosed() bool { return r.tail.Load()&closedBit != 0 }

// pushInFlight and popInFlight: see ringCore, and "In flight" in
// ringwait.go. Only MPMC has several waiters on a side whose other side
// finishes out of order: an SPMC's producer or an MPSC's consumer is the
// one waiter every Notify wakes, and an SPMC's one producer publishes, as
// an MPSC's one consumer frees, in order. Each loads its own side's index
// first, so that a claim by the other side it missed came after its
// registration; a stale pair only errs towards "in flight", a yield.
func (r *seqRing[T]) pushInFlight() bool {
	if r.singleProducer || r.singleConsumer {
		return false
	}
	tail := r.tail.Load() &^ closedBit
	head := r.head.Load()
	// The slot tail needs is the one of tail-capacity: in flight once
	// a consumer has claimed that position (head passed it).
	return int64(tail-head) < int64(r.capacity())
}

func (r *seqRing[T]) popInFlight() bool {
	if r.singleProducer || r.singleConsumer {
		return false
	}
	head := r.head.Load()
	tail := r.tail.Load() &^ closedBit
	return tail != head
}
