package knit

import (
	"context"
	"reflect"
	"sync/atomic"
)

// SPSC is a bounded single-producer single-consumer ring. One goroutine
// pushes and one pops, each through its end (Producer, Consumer): the
// grid's calls are the ends', and the SPSC itself only hands them out. So
// code that holds an end can call only its side, as with a directional
// channel, and one goroutine cannot take both sides by mistake. What the
// types do not enforce: an end is a value, and two goroutines that share
// one lose and duplicate items silently; build with -tags knit_checkends
// to have such sharing panic, and -race reports it too.
//
// Each side publishes with a release store and caches the other's index,
// as rigtorp's SPSCQueue does, so while neither side parks a push or a pop
// executes no locked instruction; each also keeps its own index on a line
// the other side never reads, so a push or pop loads nothing the other
// side has just touched unless its cache of the other's index runs out.
// Wait for an SPSC ring with its ends' calls or with Select (PopCase,
// PushCase). To watch it with an Event of your own instead (TryPush, then
// Notify), first keep it fenced with [KeepFenced], on the ring or either
// end: otherwise a TryPush is not a sync/atomic write and the Event can
// miss it.
//
// Close belongs to the producer: call it from the goroutine that pushes,
// or after that goroutine's last call, as a channel is closed by its
// sender (SPSCProducer.Close says why). Either end's Len and Cap may be
// called from any goroutine.
//
// Memory: Cap slots of T, zero at creation (the OS supplies the pages as
// they are first used), plus 632 bytes of padded indices and doorbells
// (1,080 with arm64's 128-byte lines). The zero SPSC is not a ring; create
// one with NewSPSC.
type SPSC[T any] struct {
	// A push touches the producer's index and the slot, a pop the
	// consumer's index and the slot; each re-reads the other's index only
	// when its cached copy says full (or empty). While one side keeps
	// parking, each publish also fences, the cost of sync/atomic's Store,
	// so that the parker's registration and the publish cannot both be
	// missed: Push and Pop account for this, an outside Event would not.
	spscCore
	buf []T // read-only after construction; its offset is spscCore's size, which Words' assembly relies on
}

// spscCore is an SPSC ring without its slots: non-generic, so that the
// Words assembly takes its field offsets from go_asm.h.
type spscCore struct {
	_ [CacheLineSize]byte // keep the producer's line off whatever precedes the ring

	// Each side reads its own index from a private line and publishes it
	// on a line of its own. The published index is the line the other
	// side polls; were the publisher to load its index from there, each
	// push (pop) would miss on the line the other side had just read;
	// perf annotate put much of push's and pop's time on that load
	// (BENCHMARKS.md, "Rings": "SPSC: private indices").

	// The producer's line: written and read by the producer only.
	prodTail  uint64 // tail as the producer last stored it, closed bit included
	headCache uint64 // the producer's last view of head; head only grows, so a stale copy only under-reports room
	_         [CacheLineSize - 16]byte

	tail atomic.Uint64 // next position to fill, | closedBit once closed; stored by the producer only
	_    [CacheLineSize - 8]byte

	// The consumer's line: written and read by the consumer only.
	consHead  uint64 // head as the consumer last stored it
	tailCache uint64 // the consumer's last view of tail (closed bit cleared); only under-reports items
	_         [CacheLineSize - 16]byte

	head atomic.Uint64 // next position to take; stored by the consumer only
	_    [CacheLineSize - 8]byte

	bells ringBells

	// The single sides' guards: empty, unless built with knit_checkends.
	prodSide, consSide sideGuard

	// Read-only after construction, beside buf.
	mask       uint64 // len(buf)-1: buf's length is a power of two
	last       uint64 // capacity-1: a push has room while tail-head <= last
	clearSlots bool   // T holds pointers: pop clears the slot it took
}

// size sets the ring's bounds for capacity items in slots slots (a
// power of two, at least capacity). A capacity short of the slots costs
// nothing: the full checks compare with last where they would compare
// with mask.
func (q *spscCore) size(capacity, slots int) {
	q.mask = uint64(slots - 1)
	q.last = uint64(capacity - 1)
}

// NewSPSC returns an SPSC ring holding capacity items (its slot array is
// rounded up to a power of two; Push reports full at capacity); park
// says how blocked calls wait (Park{}: the default). It panics if
// capacity is < 1 or > MaxCapacity, or if the slots would take more than
// 1 TiB.
func NewSPSC[T any](capacity int, park Park) *SPSC[T] {
	c := roundCapacity("SPSC", capacity, sizeOf[T]())
	q := &SPSC[T]{buf: make([]T, c)}
	q.size(capacity, c)
	q.clearSlots = holdsPointers(reflect.TypeFor[T]())
	q.bells.park = ringPark(park)
	return q
}

// push is the producer's attempt. The slot is free (head has passed it),
// so nobody reads it until the release store of tail publishes it; the
// consumer's acquire load of tail then sees the slot's contents.
func (q *SPSC[T]) push(v T) status {
	if checkEnds {
		q.prodSide.enter("SPSC", "producer")
		defer q.prodSide.leave()
	}
	t := q.prodTail
	i := t & q.mask
	// One compare covers a stale cached head and the closed bit (which
	// makes t-headCache huge); the other fails only on a zero ring.
	if t-q.headCache > q.last || i >= uint64(len(q.buf)) {
		if st := q.pushMiss(t); st != stOK {
			return st
		}
	}
	q.buf[i] = v
	q.prodTail = t + 1
	// Release: pairs with the consumer's acquire load of tail in pop.
	// TSO keeps the slot store before it on amd64; STLR orders it on
	// arm64.
	b := &q.bells.notEmpty
	publish(&q.tail, t+1, &b.mode)
	if b.pending(t, t+1) {
		b.ring(t, t+1)
	}
	return stOK
}

// pushMiss tells why push's fast check failed: the ring is closed, was
// never made, is full, or only the cached head was stale (stOK).
func (q *SPSC[T]) pushMiss(t uint64) status {
	if t&closedBit != 0 {
		return stClosed
	}
	if len(q.buf) == 0 {
		panicZero("SPSC", "NewSPSC")
	}
	// Acquire: pairs with the consumer's release store of head, so the
	// slot it freed has been read before we overwrite it.
	if q.headCache = q.head.Load(); t-q.headCache > q.last {
		return stFull
	}
	return stOK
}

// pop is the consumer's attempt. The slot is read (and cleared, if T
// holds pointers) before the release store of head hands it back to the
// producer.
func (q *SPSC[T]) pop() (T, status) {
	if checkEnds {
		q.consSide.enter("SPSC", "consumer")
		defer q.consSide.leave()
	}
	h := q.consHead
	i := h & q.mask
	if h == q.tailCache || i >= uint64(len(q.buf)) {
		if st := q.popMiss(h); st != stOK {
			var zero T
			return zero, st
		}
	}
	v := q.buf[i]
	if q.clearSlots {
		var zero T
		q.buf[i] = zero
	}
	q.consHead = h + 1
	// Release: pairs with the producer's acquire load of head in push.
	// A load is never reordered after a later store on amd64 or past an
	// STLR on arm64, so the slot is read before the producer may reuse it.
	b := &q.bells.notFull
	publish(&q.head, h+1, &b.mode)
	if b.pending(h, h+1) {
		b.ring(h, h+1)
	}
	return v, stOK
}

// popMiss tells why pop's fast check failed: the ring is empty, drained,
// was never made, or only the cached tail was stale (stOK).
func (q *SPSC[T]) popMiss(h uint64) status {
	if len(q.buf) == 0 {
		panicZero("SPSC", "NewSPSC")
	}
	// Acquire: pairs with the producer's release store of tail (and of
	// the closed bit), so the slots below it are filled.
	t := q.tail.Load()
	if q.tailCache = t &^ closedBit; h != q.tailCache {
		return stOK
	}
	if t&closedBit != 0 {
		return stDrained
	}
	return stEmpty
}

func (q *spscCore) indices() (tail, head uint64) { return q.tail.Load(), q.head.Load() }

// popEmpty is the consumer's: see ringOps.
func (q *spscCore) popEmpty() status {
	// Acquire, as in popMiss: a closed bit seen here follows every item.
	if t := q.tail.Load(); t&closedBit != 0 && q.consHead == t&^closedBit {
		return stDrained
	}
	return stEmpty
}

// capacity is the capacity asked for, 0 for a ring no constructor made.
func (q *SPSC[T]) capacity() int {
	if len(q.buf) == 0 {
		return 0
	}
	return int(q.last + 1)
}

func (q *SPSC[T]) sides() (push, pop *sideGuard, ring string) {
	return &q.prodSide, &q.consSide, "SPSC"
}

func (q *spscCore) sharedPush() bool { return false }
func (q *spscCore) sharedPop() bool  { return false }

// One goroutine a side, finishing in order: nothing is ever in flight.
func (q *spscCore) pushInFlight() bool { return false }
func (q *spscCore) popInFlight() bool  { return false }

// pushBatch is push for a prefix of vs, ringing the consumer; the
// orderings are push's.
func (q *SPSC[T]) pushBatch(vs []T) int {
	if checkEnds {
		q.prodSide.enter("SPSC", "producer")
		defer q.prodSide.leave()
	}
	if len(vs) == 0 {
		return 0
	}
	t := q.prodTail
	if t&closedBit != 0 {
		return 0
	}
	room := q.last + 1 - (t - q.headCache)
	if room < uint64(len(vs)) {
		q.headCache = q.head.Load()
		room = q.last + 1 - (t - q.headCache)
	}
	n := min(uint64(len(vs)), room)
	if n == 0 {
		return 0
	}
	if len(q.buf) == 0 {
		panicZero("SPSC", "NewSPSC")
	}
	i := t & q.mask
	k := copy(q.buf[i:], vs[:n])
	copy(q.buf, vs[k:n])
	q.prodTail = t + n
	b := &q.bells.notEmpty
	publish(&q.tail, t+n, &b.mode) // release, as in push
	if b.pending(t, t+n) {
		b.ring(t, t+n)
	}
	return int(n)
}

// popBatch is pop for up to len(dst) items, ringing the producer; the
// orderings are pop's.
func (q *SPSC[T]) popBatch(dst []T) int {
	if checkEnds {
		q.consSide.enter("SPSC", "consumer")
		defer q.consSide.leave()
	}
	if len(dst) == 0 {
		return 0
	}
	h := q.consHead
	avail := q.tailCache - h
	if avail < uint64(len(dst)) {
		q.tailCache = q.tail.Load() &^ closedBit
		avail = q.tailCache - h
	}
	n := min(uint64(len(dst)), avail)
	if n == 0 {
		if len(q.buf) == 0 {
			panicZero("SPSC", "NewSPSC")
		}
		return 0
	}
	i := h & q.mask
	k := copy(dst[:n], q.buf[i:])
	copy(dst[k:n], q.buf)
	if q.clearSlots {
		clear(q.buf[i : i+uint64(k)])
		clear(q.buf[:n-uint64(k)])
	}
	q.consHead = h + n
	b := &q.bells.notFull
	publish(&q.head, h+n, &b.mode) // release, as in pop
	if b.pending(h, h+n) {
		b.ring(h, h+n)
	}
	return int(n)
}

func (q *SPSC[T]) close(ring string) {
	if checkEnds {
		q.prodSide.closing(ring)
		defer q.prodSide.leave()
	}
	t := q.tail.Load()
	if t&closedBit != 0 {
		return
	}
	q.prodTail = t | closedBit
	storeRel(&q.tail, t|closedBit)
	storeLoadFence() // the closed bit before the loads of both bells' waiter counts
	q.bells.closed()
}

// Ends returns the ring's pushing end and its popping end. Give each to
// the one goroutine that uses that side; they are small values, free to
// copy, and every call returns the same two.
//
//	p, c := q.Ends()
//	go produce(p)
//	consume(c)
func (q *SPSC[T]) Ends() (SPSCProducer[T], SPSCConsumer[T]) {
	return SPSCProducer[T]{q}, SPSCConsumer[T]{q}
}

// SPSCProducer is the pushing end of an SPSC ring: the producer's side
// of the grid (see Producer).
type SPSCProducer[T any] struct{ q *SPSC[T] }

// TryPush adds v if there is room: see Producer.TryPush.
func (p SPSCProducer[T]) TryPush(v T) error { return statusErr[p.q.push(v)&7] }

// Push adds v, waiting while the ring is full: see Producer.Push.
func (p SPSCProducer[T]) Push(ctx context.Context, v T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if p.q.push(v) == stOK {
		return nil
	}
	return pushSlow[T](p.q, &p.q.bells, ctx, v)
}

// TryPushBatch adds a prefix of vs with one store of the index: see
// Producer.TryPushBatch.
func (p SPSCProducer[T]) TryPushBatch(vs []T) (int, error) {
	if n := p.q.pushBatch(vs); n < len(vs) {
		return n, shortPush(p.q.pushClosed())
	}
	return len(vs), nil
}

// PushBatch adds all of vs, waiting for room: see Producer.PushBatch.
func (p SPSCProducer[T]) PushBatch(ctx context.Context, vs []T) (int, error) {
	return pushBatch[T](ctx, p.q, vs)
}

// Close stops intake and wakes the consumer, which drains what is left
// and then gets ErrClosed. It is a producer call: make it from the
// goroutine that pushes, or from another one only after the producer's
// last call (a WaitGroup's Wait after the producer is done, say), as a
// channel is closed by its sender.
//
// Why not from anywhere: the closed bit lives in the tail the producer
// stores without a locked instruction, so a Close that runs while the
// producer is pushing can be undone by the producer's next store, and a
// consumer then waits for a Close that never took. Closing safely against
// a running producer would need a store-load handshake on every push, the
// fence its release store exists to avoid. Where a consumer or a third
// goroutine must stop a running producer, use MPSC or MPMC, whose Close
// is safe from any goroutine, or tell the producer to close. Built with
// -tags knit_checkends, a Close that races the producer panics, in Close
// or at the producer's next call, whether or not the two overlapped.
func (p SPSCProducer[T]) Close() { p.q.close("SPSC") }

// Len is the number of items in the ring (a snapshot, from any goroutine).
func (p SPSCProducer[T]) Len() int { return p.q.len() }

// Cap is the ring's capacity.
func (p SPSCProducer[T]) Cap() int { return p.q.capacity() }

// SPSCConsumer is the popping end of an SPSC ring: the consumer's side of
// the grid (see Consumer).
type SPSCConsumer[T any] struct{ q *SPSC[T] }

// TryPop removes the oldest item: see Consumer.TryPop.
func (c SPSCConsumer[T]) TryPop() (T, error) {
	v, st := c.q.pop()
	return v, statusErr[st&7]
}

// Pop removes the oldest item, waiting while the ring is empty: see
// Consumer.Pop.
func (c SPSCConsumer[T]) Pop(ctx context.Context) (T, error) {
	if err := ctxErr(ctx); err != nil {
		var zero T
		return zero, err
	}
	if v, st := c.q.pop(); st == stOK {
		return v, nil
	}
	return popSlow[T](c.q, &c.q.bells, ctx)
}

// TryPopBatch takes up to len(dst) items with one store of the index: see
// Consumer.TryPopBatch.
func (c SPSCConsumer[T]) TryPopBatch(dst []T) (int, error) {
	if n := c.q.popBatch(dst); n > 0 || len(dst) == 0 {
		return n, nil
	}
	return 0, statusErr[c.q.popEmpty()&7]
}

// PopBatch waits for an item, then takes what is ready: see
// Consumer.PopBatch.
func (c SPSCConsumer[T]) PopBatch(ctx context.Context, dst []T) (int, error) {
	return popBatch[T](ctx, c.q, dst)
}

// Len is the number of items in the ring (a snapshot, from any goroutine).
func (c SPSCConsumer[T]) Len() int { return c.q.len() }

// Cap is the ring's capacity.
func (c SPSCConsumer[T]) Cap() int { return c.q.capacity() }

func (q *SPSC[T]) len() int            { return ringLen(q.tail.Load(), q.head.Load(), q.capacity()) }
func (q *SPSC[T]) pushN(vs []T) int    { return q.pushBatch(vs) }
func (q *SPSC[T]) popN(dst []T) int    { return q.popBatch(dst) }
func (q *SPSC[T]) bellsOf() *ringBells { return &q.bells }

func (p SPSCProducer[T]) pushOps() ringOps[T] { return p.q }
func (c SPSCConsumer[T]) popOps() ringOps[T]  { return c.q }

func (q *SPSC[T]) pushClosed() bool { return q.prodTail&closedBit != 0 }
