package knit

import (
	"context"
)

// Words is an SPSC ring of uint64 (task-slot indices, offsets into shared
// memory) whose push and pop are hand-written assembly on amd64 and
// arm64, legal because the items hold no pointers, so the garbage
// collector need not see the stores. It has SPSC's contract, layout and
// ends (Producer, Consumer), which carry the grid: Close belongs to the
// producer, and waiting is done with Push and Pop, or Select. To watch it
// with an Event of your own (TryPush, then Notify), first keep it fenced
// with [KeepFenced], on the ring or either end. Builds with the
// purego tag, other GOARCHes and the race detector run SPSC[uint64]'s Go
// code instead.
//
// Memory: 8 bytes per slot, plus SPSC's indices and doorbells. The zero
// Words is not a ring; create one with NewWords.
type Words struct {
	r SPSC[uint64]
}

// NewWords returns a Words ring holding capacity items (its slot array
// is rounded up to a power of two; Push reports full at capacity); park
// says how blocked calls wait (Park{}: the default). It panics if
// capacity is < 1 or > MaxCapacity.
func NewWords(capacity int, park Park) *Words {
	c := roundCapacity("Words", capacity, 8)
	q := &Words{}
	q.r.buf = make([]uint64, c)
	q.r.size(capacity, c)
	q.r.bells.park = ringPark(park)
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
	t := q.r.prodTail
	if b := &q.r.bells.notEmpty; b.pending(t-1, t) {
		b.ring(t-1, t)
	} // the assembly did publish's steps
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
	h := q.r.consHead
	if b := &q.r.bells.notFull; b.pending(h-1, h) {
		b.ring(h-1, h)
	}
	return v, stOK
}

func (q *Words) indices() (tail, head uint64) { return q.r.indices() }
func (q *Words) popEmpty() status             { return q.r.popEmpty() }

func (q *Words) sides() (push, pop *sideGuard, ring string) {
	return &q.r.prodSide, &q.r.consSide, "Words"
}

func (q *Words) sharedPush() bool { return false }
func (q *Words) sharedPop() bool  { return false }

// One goroutine a side, finishing in order: nothing is ever in flight.
func (q *Words) pushInFlight() bool { return false }
func (q *Words) popInFlight() bool  { return false }

// wordsCheck passes a failed attempt's status through, panicking on the
// one the assembly returns for a Words no constructor made (its slot
// pointer is nil).
func wordsCheck(st status) status {
	if st == stZero {
		panicZero("Words", "NewWords")
	}
	return st
}

// pushN adds as many of vs as fit, in order, with one store of the
// index.
func (q *Words) pushN(vs []uint64) int {
	if checkEnds {
		q.r.prodSide.enter("Words", "producer")
		defer q.r.prodSide.leave()
	}
	n := int(wordPushBatch(&q.r, vs))
	if n > 0 && wordsAsm {
		t := q.r.prodTail
		if b := &q.r.bells.notEmpty; b.pending(t-uint64(n), t) {
			b.ring(t-uint64(n), t)
		} // the assembly published
	} else if n == 0 && len(vs) > 0 && q.r.buf == nil {
		panicZero("Words", "NewWords")
	}
	return n
}

// popN takes up to len(dst) of the oldest items with one store of the
// index.
func (q *Words) popN(dst []uint64) int {
	if checkEnds {
		q.r.consSide.enter("Words", "consumer")
		defer q.r.consSide.leave()
	}
	n := int(wordPopBatch(&q.r, dst))
	if n > 0 && wordsAsm {
		h := q.r.consHead
		if b := &q.r.bells.notFull; b.pending(h-uint64(n), h) {
			b.ring(h-uint64(n), h)
		} // the assembly published
	} else if n == 0 && len(dst) > 0 && q.r.buf == nil {
		panicZero("Words", "NewWords")
	}
	return n
}

// Ends returns the ring's pushing end and its popping end, as
// SPSC.Ends does.
func (q *Words) Ends() (WordsProducer, WordsConsumer) { return WordsProducer{q}, WordsConsumer{q} }

// WordsProducer is the pushing end of a Words ring: the producer's side
// of the grid (see Producer), as SPSCProducer.
type WordsProducer struct{ q *Words }

// TryPush adds v if there is room: see Producer.TryPush.
func (p WordsProducer) TryPush(v uint64) error { return statusErr[p.q.push(v)&7] }

// Push adds v, waiting while the ring is full: see Producer.Push.
func (p WordsProducer) Push(ctx context.Context, v uint64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if p.q.push(v) == stOK {
		return nil
	}
	return pushSlow[uint64](p.q, &p.q.r.bells, ctx, v)
}

// TryPushBatch adds a prefix of vs with one store of the index: see
// Producer.TryPushBatch.
func (p WordsProducer) TryPushBatch(vs []uint64) (int, error) {
	if n := p.q.pushN(vs); n < len(vs) {
		return n, shortPush(p.q.pushClosed())
	}
	return len(vs), nil
}

// PushBatch adds all of vs, waiting for room: see Producer.PushBatch.
func (p WordsProducer) PushBatch(ctx context.Context, vs []uint64) (int, error) {
	return pushBatch[uint64](ctx, p.q, vs)
}

// Close stops intake and wakes the consumer, which drains what is left
// and then gets ErrClosed. It is a producer call, with SPSC's rule (see
// SPSCProducer.Close).
func (p WordsProducer) Close() { p.q.r.close("Words") }

// Len is the number of items in the ring (a snapshot, from any goroutine).
func (p WordsProducer) Len() int { return p.q.r.len() }

// Cap is the ring's capacity.
func (p WordsProducer) Cap() int { return p.q.r.capacity() }

// WordsConsumer is the popping end of a Words ring: the consumer's side of
// the grid (see Consumer), as SPSCConsumer.
type WordsConsumer struct{ q *Words }

// TryPop removes the oldest item: see Consumer.TryPop.
func (c WordsConsumer) TryPop() (uint64, error) {
	v, st := c.q.pop()
	return v, statusErr[st&7]
}

// Pop removes the oldest item, waiting while the ring is empty: see
// Consumer.Pop.
func (c WordsConsumer) Pop(ctx context.Context) (uint64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	if v, st := c.q.pop(); st == stOK {
		return v, nil
	}
	return popSlow[uint64](c.q, &c.q.r.bells, ctx)
}

// TryPopBatch takes up to len(dst) items with one store of the index: see
// Consumer.TryPopBatch.
func (c WordsConsumer) TryPopBatch(dst []uint64) (int, error) {
	if n := c.q.popN(dst); n > 0 || len(dst) == 0 {
		return n, nil
	}
	return 0, statusErr[c.q.popEmpty()&7]
}

// PopBatch waits for an item, then takes what is ready: see
// Consumer.PopBatch.
func (c WordsConsumer) PopBatch(ctx context.Context, dst []uint64) (int, error) {
	return popBatch[uint64](ctx, c.q, dst)
}

// Len is the number of items in the ring (a snapshot, from any goroutine).
func (c WordsConsumer) Len() int { return c.q.r.len() }

// Cap is the ring's capacity.
func (c WordsConsumer) Cap() int { return c.q.r.capacity() }

func (q *Words) bellsOf() *ringBells { return &q.r.bells }

func (p WordsProducer) pushOps() ringOps[uint64] { return p.q }
func (c WordsConsumer) popOps() ringOps[uint64]  { return c.q }

func (q *Words) pushClosed() bool { return q.r.prodTail&closedBit != 0 }
