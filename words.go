package knit

import "context"

// Words is an SPSC ring of uint64 (task-slot indices, offsets into shared
// memory) whose push and pop paths are hand-written assembly on amd64 and
// arm64: legal because the elements hold no pointers, so the garbage
// collector need not see the stores. It is an SPSC[uint64] with the same
// layout and contract; only TryPush, TryPop, Push, Pop, PushBatch and
// PopBatch take the assembly path (ring_generic.go maps them back to the
// Go code under purego and on other GOARCHes).
type Words struct {
	SPSC[uint64]
}

// NewWords returns a Words ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity.
func NewWords(capacity int, opts ...Option) *Words {
	c := roundCapacity("Words", capacity)
	q := &Words{}
	q.buf = make([]uint64, c)
	q.mask = uint64(c - 1)
	q.bells.park = ringPark(opts)
	return q
}

// push and pop shadow SPSC's, so the shared blocking loops use assembly.
func (q *Words) push(v uint64) status { return status(wordPush(&q.SPSC, v)) }

func (q *Words) pop() (uint64, status) {
	v, st := wordPop(&q.SPSC)
	return v, status(st)
}

// TryPush adds v if there is room and the ring is open.
func (q *Words) TryPush(v uint64) bool {
	if wordPush(&q.SPSC, v) != uint8(stOK) {
		return false
	}
	q.bells.notEmpty.Notify(1)
	return true
}

// TryPop removes the oldest item if there is one.
func (q *Words) TryPop() (uint64, bool) {
	v, st := wordPop(&q.SPSC)
	if st != uint8(stOK) {
		return 0, false
	}
	q.bells.notFull.Notify(1)
	return v, true
}

// Push adds v, spinning and then parking while the ring is full.
func (q *Words) Push(ctx context.Context, v uint64) error {
	if wordPush(&q.SPSC, v) == uint8(stOK) {
		q.bells.notEmpty.Notify(1)
		return nil
	}
	return pushSlow[uint64](q, &q.bells, ctx, v)
}

// Pop removes the oldest item, spinning and then parking while the ring
// is empty; after Close it drains, then returns ErrClosed.
func (q *Words) Pop(ctx context.Context) (uint64, error) {
	if v, st := wordPop(&q.SPSC); st == uint8(stOK) {
		q.bells.notFull.Notify(1)
		return v, nil
	}
	return popSlow[uint64](q, &q.bells, ctx)
}

// PushBatch adds as many of vs as fit, in order, with one CAS.
func (q *Words) PushBatch(vs []uint64) int {
	n := int(wordPushBatch(&q.SPSC, vs))
	if n > 0 {
		q.bells.notEmpty.Notify(n)
	}
	return n
}

// PopBatch takes up to len(dst) of the oldest items with one store.
func (q *Words) PopBatch(dst []uint64) int {
	n := int(wordPopBatch(&q.SPSC, dst))
	if n > 0 {
		q.bells.notFull.Notify(n)
	}
	return n
}
