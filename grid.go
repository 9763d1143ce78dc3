package knit

import (
	"context"
	"iter"
)

// The grid's calls (see Producer and Consumer) over any ring, written
// once: each ring's methods forward here, or to pushSlow and popSlow.

// ringOps is what the calls in this file, and Select, need of a ring:
// its single attempts (ringCore), its batch attempts, which ring the
// other side as push and pop do, and its doorbells for waiting. Every
// ring implements it: SPSC and Words themselves, the multi-sided rings
// through their seqRing.
type ringOps[T any] interface {
	ringCore[T]
	pushN(vs []T) int
	popN(dst []T) int
	// pushClosed reports, after a pushN that stopped short, whether the
	// ring was closed (else it was full); read without a shared line
	// where the producer keeps its own copy of the tail.
	pushClosed() bool
	// popEmpty says, after a popN by the same consumer that took
	// nothing, why: stDrained once the ring is closed and drained, else
	// stEmpty, even where an item has come since (the batch found the
	// ring empty at its look). It takes nothing, so a batch that took
	// nothing never turns into one that took a single item while more
	// were ready.
	popEmpty() status
	bellsOf() *ringBells
}

var (
	_ ringOps[int]    = (*SPSC[int])(nil)
	_ ringOps[int]    = (*seqRing[int])(nil)
	_ ringOps[uint64] = (*Words)(nil)
	_ ringOps[int]    = (*Mailbox[int])(nil)
	_ ringOps[int]    = (*Backlog[int])(nil)
	_ ringOps[int]    = (*Broadcast[int])(nil)
	_ ringOps[int]    = (*Subscription[int])(nil)
)

// tryPushBatch pushes the longest prefix of vs that fits, with one claim
// of the index, and says why it stopped short: ErrFull or ErrClosed. The
// SPSC and Words ends make the same two calls on their ring directly,
// without the interface.
func tryPushBatch[T any](r ringOps[T], vs []T) (int, error) {
	if n := r.pushN(vs); n < len(vs) {
		return n, shortPush(r.pushClosed())
	}
	return len(vs), nil
}

// shortPush is the error of a batch push that stopped short.
func shortPush(closed bool) error {
	if closed {
		return ErrClosed
	}
	return ErrFull
}

// tryPopBatch pops up to len(dst) ready items with one claim of the
// index and, when it found none, says why: ErrEmpty, or ErrClosed once
// the ring is closed and drained. The SPSC and Words ends make the same
// calls on their ring directly.
func tryPopBatch[T any](r ringOps[T], dst []T) (int, error) {
	if n := r.popN(dst); n > 0 || len(dst) == 0 {
		return n, nil
	}
	return 0, statusErr[r.popEmpty()&7]
}

// pushBatch pushes all of vs, waiting for room as Push does: the first
// item that does not fit goes in through Push's wait, and the rest follow
// in batches.
func pushBatch[T any](ctx context.Context, r ringOps[T], vs []T) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	n := 0
	for {
		k, err := tryPushBatch(r, vs[n:])
		if n += k; err != ErrFull {
			return n, err
		}
		if err := pushSlow(r, r.bellsOf(), ctx, vs[n]); err != nil {
			return n, err
		}
		if n++; n == len(vs) {
			return n, nil
		}
	}
}

// popBatch pops at least one item, waiting as Pop does, and then as many
// more as are ready, up to len(dst).
func popBatch[T any](ctx context.Context, r ringOps[T], dst []T) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	n, err := tryPopBatch(r, dst)
	if err != ErrEmpty {
		return n, err
	}
	v, err := popSlow(r, r.bellsOf(), ctx)
	if err != nil {
		return 0, err
	}
	dst[0] = v
	return 1 + r.popN(dst[1:]), nil
}

// all is every consumer side's All: a Pop loop, with Pop's ctx rule.
func all[T any](ctx context.Context, r ringOps[T]) iter.Seq[T] {
	return func(yield func(T) bool) {
		for ctxErr(ctx) == nil {
			v, st := r.pop()
			if st != stOK {
				if st == stDrained {
					return
				}
				var err error
				if v, err = popSlow(r, r.bellsOf(), ctx); err != nil {
					return
				}
			}
			if !yield(v) {
				return
			}
		}
	}
}
