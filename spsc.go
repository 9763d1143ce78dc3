package knit

import (
	"context"
	"iter"
	"reflect"
	"sync/atomic"
)

// SPSC is a bounded single-producer single-consumer ring. One goroutine
// pushes and one pops; hand each its end (Producer, Consumer), which has
// only its side's calls, as a directional channel has. What the types do
// not enforce: an end is a value, and two goroutines that share one (or
// share the SPSC itself) lose and duplicate items silently; build with
// -tags knit_checkends to have such sharing panic, and -race reports it
// too.
//
// Each side publishes with a release store and caches the other's index,
// as rigtorp's SPSCQueue does, so while neither side parks a push or a pop
// executes no locked instruction; each also keeps its own index on a line
// the other side never reads, so a push or pop loads nothing the other
// side has just touched unless its cache of the other's index runs out.
// Wait for an SPSC ring with its own calls or with Select (Recv, Send): a
// TryPush is not a sync/atomic store, so an Event of your own cannot
// watch it (the multi-sided rings' can).
//
// Close belongs to the producer: call it from the goroutine that pushes,
// or after that goroutine's last call, as a channel is closed by its
// sender (Close says why). Len and Cap may be called from anywhere.
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
	// push (pop) would miss on the line the other side had just read.
	// perf annotate of a batch-1 stream put 40% of push's samples on
	// that load and 14% of pop's; see "SPSC: private indices" in
	// BENCHMARKS.md.

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
	mask       uint64
	clearSlots bool // T holds pointers: pop clears the slot it took
}

// NewSPSC returns an SPSC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity, or if the
// slots would take more than 1 TiB.
func NewSPSC[T any](capacity int, opts ...Option) *SPSC[T] {
	c := roundCapacity("SPSC", capacity, sizeOf[T]())
	q := &SPSC[T]{buf: make([]T, c)}
	q.mask = uint64(c - 1)
	q.clearSlots = holdsPointers(reflect.TypeFor[T]())
	q.bells.park = ringPark(opts)
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
	if t-q.headCache > q.mask || i >= uint64(len(q.buf)) {
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
	b.Notify(1)
	if relaxDue(t, t+1) {
		b.maybeRelax(t + 1)
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
	if q.headCache = q.head.Load(); t-q.headCache > q.mask {
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
	b.Notify(1)
	if relaxDue(h, h+1) {
		b.maybeRelax(h + 1)
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

func (q *SPSC[T]) sides() (push, pop *sideGuard, ring string) {
	return &q.prodSide, &q.consSide, "SPSC"
}

func (q *spscCore) sharedPush() bool { return false }
func (q *spscCore) sharedPop() bool  { return false }

// TryPush adds v if there is room and the ring is open.
func (q *SPSC[T]) TryPush(v T) bool { return q.push(v) == stOK }

// TryPop removes the oldest item if there is one.
func (q *SPSC[T]) TryPop() (T, bool) {
	v, st := q.pop()
	return v, st == stOK
}

// TrySend adds v if there is room and the ring is open, and otherwise
// says which: ErrFull or ErrClosed.
func (q *SPSC[T]) TrySend(v T) error {
	return statusErr[q.push(v)&7]
}

// TryRecv removes the oldest item if there is one, and otherwise says
// why not: ErrEmpty, or ErrClosed once the ring is closed and drained.
func (q *SPSC[T]) TryRecv() (T, error) {
	v, st := q.pop()
	return v, statusErr[st&7]
}

// Push adds v, spinning and then parking while the ring is full.
func (q *SPSC[T]) Push(ctx context.Context, v T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if q.push(v) == stOK {
		return nil
	}
	return pushSlow[T](q, &q.bells, ctx, v)
}

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (q *SPSC[T]) Pop(ctx context.Context) (T, error) {
	if err := ctxErr(ctx); err != nil {
		var zero T
		return zero, err
	}
	if v, st := q.pop(); st == stOK {
		return v, nil
	}
	return popSlow[T](q, &q.bells, ctx)
}

// PushBatch adds as many of vs as fit, in order, with one store of the
// index.
func (q *SPSC[T]) PushBatch(vs []T) int { return q.pushBatch(vs) }

// PopBatch takes up to len(dst) of the oldest items with one store of the
// index.
func (q *SPSC[T]) PopBatch(dst []T) int { return q.popBatch(dst) }

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
	room := q.mask + 1 - (t - q.headCache)
	if room < uint64(len(vs)) {
		q.headCache = q.head.Load()
		room = q.mask + 1 - (t - q.headCache)
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
	b := &q.bells.notEmpty
	q.prodTail = t + n
	publish(&q.tail, t+n, &b.mode) // release, as in push
	b.Notify(int(n))
	if relaxDue(t, t+n) {
		b.maybeRelax(t + n)
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
	b := &q.bells.notFull
	q.consHead = h + n
	publish(&q.head, h+n, &b.mode) // release, as in pop
	b.Notify(int(n))
	if relaxDue(h, h+n) {
		b.maybeRelax(h + n)
	}
	return int(n)
}

// Close stops intake and wakes every waiter; items already in the ring
// stay poppable. It is a producer call: make it from the goroutine that
// pushes, or from another one only after the producer's last call (a
// WaitGroup's Wait after the producer is done, say), as a channel is
// closed by its sender.
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
func (q *SPSC[T]) Close() { q.close("SPSC") }

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

// Len is the number of items in the ring.
func (q *SPSC[T]) Len() int { return ringLen(q.tail.Load(), q.head.Load(), len(q.buf)) }

// Cap is the ring's capacity.
func (q *SPSC[T]) Cap() int { return len(q.buf) }

// Producer returns the ring's pushing end. Give it to the one goroutine
// that pushes; it is a small value, free to copy.
func (q *SPSC[T]) Producer() SPSCProducer[T] { return SPSCProducer[T]{q} }

// Consumer returns the ring's popping end. Give it to the one goroutine
// that pops; it is a small value, free to copy.
func (q *SPSC[T]) Consumer() SPSCConsumer[T] { return SPSCConsumer[T]{q} }

// SPSCProducer is the pushing end of an SPSC ring: its methods are the
// ring's, restricted to what the producer may call.
type SPSCProducer[T any] struct{ q *SPSC[T] }

// TryPush adds v if there is room and the ring is open.
func (p SPSCProducer[T]) TryPush(v T) bool { return p.q.push(v) == stOK }

// TrySend adds v, or says why not: ErrFull or ErrClosed.
func (p SPSCProducer[T]) TrySend(v T) error { return statusErr[p.q.push(v)&7] }

// Push adds v, waiting while the ring is full.
func (p SPSCProducer[T]) Push(ctx context.Context, v T) error { return p.q.Push(ctx, v) }

// PushBatch adds as many of vs as fit, in order.
func (p SPSCProducer[T]) PushBatch(vs []T) int { return p.q.PushBatch(vs) }

// Close stops intake and wakes the consumer, which drains what is left
// and then gets ErrClosed.
func (p SPSCProducer[T]) Close() { p.q.Close() }

// Len is the number of items in the ring.
func (p SPSCProducer[T]) Len() int { return p.q.Len() }

// Cap is the ring's capacity.
func (p SPSCProducer[T]) Cap() int { return p.q.Cap() }

// SPSCConsumer is the popping end of an SPSC ring.
type SPSCConsumer[T any] struct{ q *SPSC[T] }

// TryPop removes the oldest item if there is one.
func (c SPSCConsumer[T]) TryPop() (T, bool) {
	v, st := c.q.pop()
	return v, st == stOK
}

// TryRecv removes the oldest item, or says why not: ErrEmpty, or
// ErrClosed once the ring is closed and drained.
func (c SPSCConsumer[T]) TryRecv() (T, error) {
	v, st := c.q.pop()
	return v, statusErr[st&7]
}

// Pop removes the oldest item, waiting while the ring is empty; after
// Close it drains, then returns ErrClosed.
func (c SPSCConsumer[T]) Pop(ctx context.Context) (T, error) { return c.q.Pop(ctx) }

// PopBatch takes up to len(dst) of the oldest items.
func (c SPSCConsumer[T]) PopBatch(dst []T) int { return c.q.PopBatch(dst) }

// Len is the number of items in the ring.
func (c SPSCConsumer[T]) Len() int { return c.q.Len() }

// Cap is the ring's capacity.
func (c SPSCConsumer[T]) Cap() int { return c.q.Cap() }

// TrySendBatch adds a prefix of vs, as much as fits, in order, and says
// why it stopped short: nil when all of vs went in, else ErrFull, or
// ErrClosed once the ring is closed. It never blocks.
func (q *SPSC[T]) TrySendBatch(vs []T) (int, error) { return trySendBatch[T](q, vs) }

// SendBatch adds all of vs, in order, waiting while the ring is full as
// Push does. It returns len(vs) and nil, or how many went in and
// ErrClosed or ctx.Err() when it stopped early. A ctx already done adds
// nothing.
func (q *SPSC[T]) SendBatch(ctx context.Context, vs []T) (int, error) {
	return sendBatch[T](ctx, q, vs)
}

// TryRecvBatch fills a prefix of dst with the oldest items and returns
// how many; when it took none it says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. It never blocks.
func (q *SPSC[T]) TryRecvBatch(dst []T) (int, error) { return tryRecvBatch[T](q, dst) }

// RecvBatch waits as Pop does until an item is ready, then takes up to
// len(dst) of the oldest items and returns how many; or 0 and ErrClosed
// once the ring is closed and drained, or ctx.Err(). A ctx already done
// takes nothing.
func (q *SPSC[T]) RecvBatch(ctx context.Context, dst []T) (int, error) {
	return recvBatch[T](ctx, q, dst)
}

// All ranges over the items as Pop takes them: the ring's counterpart of
// ranging over a channel. The range ends when the ring is closed and
// drained, or when ctx ends: after the loop, a nil ctx.Err() means closed
// and drained. Leaving the loop early leaves the rest in the ring.
func (q *SPSC[T]) All(ctx context.Context) iter.Seq[T] { return all[T](ctx, q) }

// TrySendBatch adds a prefix of vs, as much as fits, in order, and says
// why it stopped short: nil when all of vs went in, else ErrFull, or
// ErrClosed once the ring is closed. It never blocks.
func (p SPSCProducer[T]) TrySendBatch(vs []T) (int, error) { return trySendBatch[T](p.q, vs) }

// SendBatch adds all of vs, in order, waiting while the ring is full as
// Push does. It returns len(vs) and nil, or how many went in and
// ErrClosed or ctx.Err() when it stopped early. A ctx already done adds
// nothing.
func (p SPSCProducer[T]) SendBatch(ctx context.Context, vs []T) (int, error) {
	return sendBatch[T](ctx, p.q, vs)
}

// TryRecvBatch fills a prefix of dst with the oldest items and returns
// how many; when it took none it says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. It never blocks.
func (c SPSCConsumer[T]) TryRecvBatch(dst []T) (int, error) { return tryRecvBatch[T](c.q, dst) }

// RecvBatch waits as Pop does until an item is ready, then takes up to
// len(dst) of the oldest items and returns how many; or 0 and ErrClosed
// once the ring is closed and drained, or ctx.Err(). A ctx already done
// takes nothing.
func (c SPSCConsumer[T]) RecvBatch(ctx context.Context, dst []T) (int, error) {
	return recvBatch[T](ctx, c.q, dst)
}

// All ranges over the items as Pop takes them: the ring's counterpart of
// ranging over a channel. The range ends when the ring is closed and
// drained, or when ctx ends: after the loop, a nil ctx.Err() means closed
// and drained. Leaving the loop early leaves the rest in the ring.
func (c SPSCConsumer[T]) All(ctx context.Context) iter.Seq[T] { return all[T](ctx, c.q) }

func (q *SPSC[T]) pushN(vs []T) int    { return q.pushBatch(vs) }
func (q *SPSC[T]) popN(dst []T) int    { return q.popBatch(dst) }
func (q *SPSC[T]) bellsOf() *ringBells { return &q.bells }

func (q *SPSC[T]) recvOps() ringOps[T]        { return q }
func (q *SPSC[T]) sendOps() ringOps[T]        { return q }
func (p SPSCProducer[T]) sendOps() ringOps[T] { return p.q }
func (c SPSCConsumer[T]) recvOps() ringOps[T] { return c.q }
