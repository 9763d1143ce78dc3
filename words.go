package knit

import (
	"context"
	"iter"
)

// Words is an SPSC ring of uint64 (task-slot indices, offsets into shared
// memory) whose push and pop are hand-written assembly on amd64 and
// arm64, legal because the items hold no pointers, so the garbage
// collector need not see the stores. It has SPSC's contract, layout and
// ends (Producer, Consumer): Close belongs to the producer, and waiting is
// done with Push and Pop. Builds with
// the purego tag, other GOARCHes and the race detector run SPSC[uint64]'s
// Go code instead.
//
// Memory: 8 bytes per slot, plus SPSC's indices and doorbells. The zero
// Words is not a ring; create one with NewWords.
type Words struct {
	r SPSC[uint64]
}

// NewWords returns a Words ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity.
func NewWords(capacity int, opts ...Option) *Words {
	c := roundCapacity("Words", capacity, 8)
	q := &Words{}
	q.r.buf = make([]uint64, c)
	q.r.mask = uint64(c - 1)
	q.r.bells.park = ringPark(opts)
	return q
}

// push and pop are the assembly attempts, ringing the other side on
// success; they make Words a ringCore for the shared blocking loops.
func (q *Words) push(v uint64) status {
	if checkEnds {
		q.r.prodSide.enter("Words", "producer")
		defer q.r.prodSide.leave()
	}
	st := status(wordPush(&q.r, v))
	if st != stOK {
		return wordsCheck(st)
	}
	if !wordsAsm {
		return stOK
	}
	b := &q.r.bells.notEmpty
	b.Notify(1) // the assembly did publish's fence
	if relaxedPublish {
		if t := q.r.prodTail; relaxDue(t-1, t) {
			b.maybeRelax(t)
		}
	}
	return stOK
}

func (q *Words) pop() (uint64, status) {
	if checkEnds {
		q.r.consSide.enter("Words", "consumer")
		defer q.r.consSide.leave()
	}
	v, st := wordPop(&q.r)
	if status(st) != stOK {
		return 0, wordsCheck(status(st))
	}
	if !wordsAsm {
		return v, stOK
	}
	b := &q.r.bells.notFull
	b.Notify(1)
	if relaxedPublish {
		if h := q.r.consHead; relaxDue(h-1, h) {
			b.maybeRelax(h)
		}
	}
	return v, stOK
}

func (q *Words) indices() (tail, head uint64) { return q.r.indices() }

func (q *Words) sides() (push, pop *sideGuard, ring string) {
	return &q.r.prodSide, &q.r.consSide, "Words"
}

func (q *Words) sharedPush() bool { return false }
func (q *Words) sharedPop() bool  { return false }

// wordsCheck passes a failed attempt's status through, panicking on the
// one the assembly returns for a Words no constructor made (its slot
// pointer is nil).
func wordsCheck(st status) status {
	if st == stZero {
		panicZero("Words", "NewWords")
	}
	return st
}

// TryPush adds v if there is room and the ring is open.
func (q *Words) TryPush(v uint64) bool { return q.push(v) == stOK }

// TryPop removes the oldest item if there is one.
func (q *Words) TryPop() (uint64, bool) {
	v, st := q.pop()
	return v, st == stOK
}

// TrySend adds v if there is room and the ring is open, and otherwise
// says which: ErrFull or ErrClosed.
func (q *Words) TrySend(v uint64) error {
	return statusErr[q.push(v)&7]
}

// TryRecv removes the oldest item if there is one, and otherwise says
// why not: ErrEmpty, or ErrClosed once the ring is closed and drained.
func (q *Words) TryRecv() (uint64, error) {
	v, st := q.pop()
	return v, statusErr[st&7]
}

// Push adds v, spinning and then parking while the ring is full.
func (q *Words) Push(ctx context.Context, v uint64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if q.push(v) == stOK {
		return nil
	}
	return pushSlow[uint64](q, &q.r.bells, ctx, v)
}

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (q *Words) Pop(ctx context.Context) (uint64, error) {
	if err := ctxErr(ctx); err != nil {
		var zero uint64
		return zero, err
	}
	if v, st := q.pop(); st == stOK {
		return v, nil
	}
	return popSlow[uint64](q, &q.r.bells, ctx)
}

// PushBatch adds as many of vs as fit, in order, with one store of the
// index.
func (q *Words) PushBatch(vs []uint64) int {
	if checkEnds {
		q.r.prodSide.enter("Words", "producer")
		defer q.r.prodSide.leave()
	}
	n := int(wordPushBatch(&q.r, vs))
	if n > 0 && wordsAsm {
		b := &q.r.bells.notEmpty
		b.Notify(n)
		if t := q.r.prodTail; relaxDue(t-uint64(n), t) {
			b.maybeRelax(t)
		}
	} else if n == 0 && len(vs) > 0 && q.r.buf == nil {
		panicZero("Words", "NewWords")
	}
	return n
}

// PopBatch takes up to len(dst) of the oldest items with one store of the
// index.
func (q *Words) PopBatch(dst []uint64) int {
	if checkEnds {
		q.r.consSide.enter("Words", "consumer")
		defer q.r.consSide.leave()
	}
	n := int(wordPopBatch(&q.r, dst))
	if n > 0 && wordsAsm {
		b := &q.r.bells.notFull
		b.Notify(n)
		if h := q.r.consHead; relaxDue(h-uint64(n), h) {
			b.maybeRelax(h)
		}
	} else if n == 0 && len(dst) > 0 && q.r.buf == nil {
		panicZero("Words", "NewWords")
	}
	return n
}

// Close stops intake and wakes every waiter; items already in the ring
// stay poppable. It is a producer call, with SPSC's rule: from the
// goroutine that pushes, or after its last call (see SPSC.Close for why).
func (q *Words) Close() { q.r.close("Words") }

// Len is the number of items in the ring.
func (q *Words) Len() int { return q.r.Len() }

// Cap is the ring's capacity.
func (q *Words) Cap() int { return q.r.Cap() }

// Producer returns the ring's pushing end.
func (q *Words) Producer() WordsProducer { return WordsProducer{q} }

// Consumer returns the ring's popping end.
func (q *Words) Consumer() WordsConsumer { return WordsConsumer{q} }

// WordsProducer is the pushing end of a Words ring.
type WordsProducer struct{ q *Words }

// TryPush adds v if there is room and the ring is open.
func (p WordsProducer) TryPush(v uint64) bool { return p.q.push(v) == stOK }

// TrySend adds v, or says why not: ErrFull or ErrClosed.
func (p WordsProducer) TrySend(v uint64) error { return statusErr[p.q.push(v)&7] }

// Push adds v, waiting while the ring is full.
func (p WordsProducer) Push(ctx context.Context, v uint64) error { return p.q.Push(ctx, v) }

// PushBatch adds as many of vs as fit, in order.
func (p WordsProducer) PushBatch(vs []uint64) int { return p.q.PushBatch(vs) }

// Close stops intake and wakes the consumer, which drains what is left
// and then gets ErrClosed.
func (p WordsProducer) Close() { p.q.Close() }

// Len is the number of items in the ring.
func (p WordsProducer) Len() int { return p.q.Len() }

// Cap is the ring's capacity.
func (p WordsProducer) Cap() int { return p.q.Cap() }

// WordsConsumer is the popping end of a Words ring.
type WordsConsumer struct{ q *Words }

// TryPop removes the oldest item if there is one.
func (c WordsConsumer) TryPop() (uint64, bool) {
	v, st := c.q.pop()
	return v, st == stOK
}

// TryRecv removes the oldest item, or says why not: ErrEmpty, or
// ErrClosed once the ring is closed and drained.
func (c WordsConsumer) TryRecv() (uint64, error) {
	v, st := c.q.pop()
	return v, statusErr[st&7]
}

// Pop removes the oldest item, waiting while the ring is empty; after
// Close it drains, then returns ErrClosed.
func (c WordsConsumer) Pop(ctx context.Context) (uint64, error) { return c.q.Pop(ctx) }

// PopBatch takes up to len(dst) of the oldest items.
func (c WordsConsumer) PopBatch(dst []uint64) int { return c.q.PopBatch(dst) }

// Len is the number of items in the ring.
func (c WordsConsumer) Len() int { return c.q.Len() }

// Cap is the ring's capacity.
func (c WordsConsumer) Cap() int { return c.q.Cap() }

// TrySendBatch adds a prefix of vs, as much as fits, in order, and says
// why it stopped short: nil when all of vs went in, else ErrFull, or
// ErrClosed once the ring is closed. It never blocks.
func (q *Words) TrySendBatch(vs []uint64) (int, error) { return trySendBatch[uint64](q, vs) }

// SendBatch adds all of vs, in order, waiting while the ring is full as
// Push does. It returns len(vs) and nil, or how many went in and
// ErrClosed or ctx.Err() when it stopped early. A ctx already done adds
// nothing.
func (q *Words) SendBatch(ctx context.Context, vs []uint64) (int, error) {
	return sendBatch[uint64](ctx, q, vs)
}

// TryRecvBatch fills a prefix of dst with the oldest items and returns
// how many; when it took none it says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. It never blocks.
func (q *Words) TryRecvBatch(dst []uint64) (int, error) { return tryRecvBatch[uint64](q, dst) }

// RecvBatch waits as Pop does until an item is ready, then takes up to
// len(dst) of the oldest items and returns how many; or 0 and ErrClosed
// once the ring is closed and drained, or ctx.Err(). A ctx already done
// takes nothing.
func (q *Words) RecvBatch(ctx context.Context, dst []uint64) (int, error) {
	return recvBatch[uint64](ctx, q, dst)
}

// All ranges over the items as Pop takes them: the ring's counterpart of
// ranging over a channel. The range ends when the ring is closed and
// drained, or when ctx ends: after the loop, a nil ctx.Err() means closed
// and drained. Leaving the loop early leaves the rest in the ring.
func (q *Words) All(ctx context.Context) iter.Seq[uint64] { return all[uint64](ctx, q) }

// TrySendBatch adds a prefix of vs, as much as fits, in order, and says
// why it stopped short: nil when all of vs went in, else ErrFull, or
// ErrClosed once the ring is closed. It never blocks.
func (p WordsProducer) TrySendBatch(vs []uint64) (int, error) { return trySendBatch[uint64](p.q, vs) }

// SendBatch adds all of vs, in order, waiting while the ring is full as
// Push does. It returns len(vs) and nil, or how many went in and
// ErrClosed or ctx.Err() when it stopped early. A ctx already done adds
// nothing.
func (p WordsProducer) SendBatch(ctx context.Context, vs []uint64) (int, error) {
	return sendBatch[uint64](ctx, p.q, vs)
}

// TryRecvBatch fills a prefix of dst with the oldest items and returns
// how many; when it took none it says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. It never blocks.
func (c WordsConsumer) TryRecvBatch(dst []uint64) (int, error) { return tryRecvBatch[uint64](c.q, dst) }

// RecvBatch waits as Pop does until an item is ready, then takes up to
// len(dst) of the oldest items and returns how many; or 0 and ErrClosed
// once the ring is closed and drained, or ctx.Err(). A ctx already done
// takes nothing.
func (c WordsConsumer) RecvBatch(ctx context.Context, dst []uint64) (int, error) {
	return recvBatch[uint64](ctx, c.q, dst)
}

// All ranges over the items as Pop takes them: the ring's counterpart of
// ranging over a channel. The range ends when the ring is closed and
// drained, or when ctx ends: after the loop, a nil ctx.Err() means closed
// and drained. Leaving the loop early leaves the rest in the ring.
func (c WordsConsumer) All(ctx context.Context) iter.Seq[uint64] { return all[uint64](ctx, c.q) }

func (q *Words) pushN(vs []uint64) int { return q.PushBatch(vs) }
func (q *Words) popN(dst []uint64) int { return q.PopBatch(dst) }
func (q *Words) bellsOf() *ringBells   { return &q.r.bells }

func (q *Words) recvOps() ringOps[uint64]        { return q }
func (q *Words) sendOps() ringOps[uint64]        { return q }
func (p WordsProducer) sendOps() ringOps[uint64] { return p.q }
func (c WordsConsumer) recvOps() ringOps[uint64] { return c.q }
