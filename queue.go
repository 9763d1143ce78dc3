package knit

import (
	"context"
	"iter"
)

// # The grid
//
// Every ring and every end offers its side's part of one grid of calls,
// and nothing else: a call never blocks (Try...) or waits (with a ctx),
// moves one item or a batch, and tells closed apart from full or empty
// in every result.
//
//	             one item                 a batch
//	never waits  TryPush(v) error         TryPushBatch(vs) (int, error)
//	waits        Push(ctx, v) error       PushBatch(ctx, vs) (int, error)
//	never waits  TryPop() (T, error)      TryPopBatch(dst) (int, error)
//	waits        Pop(ctx) (T, error)      PopBatch(ctx, dst) (int, error)
//
// The producer side adds Close, and both sides Len and Cap; [All] ranges
// over any consumer side. [Producer] and [Consumer] state each call's
// contract once; the methods of every ring point here. MPSC, SPMC, MPMC,
// Mailbox and Backlog have both sides ([Queue]); an SPSC or Words ring
// hands out one end per side ([SPSC.Ends]), and a Broadcast is a
// producer whose Subscriptions are consumers.
//
// Errors: ErrFull and ErrEmpty only from the Try calls, ErrClosed from a
// push on a closed ring and from a pop on a closed ring that is drained,
// and ctx.Err() from a waiting call whose ctx ends first. A call whose
// ctx is already done does nothing and returns ctx.Err().

// Producer is the pushing side of the grid: every ring but a
// Subscription, and the producer ends of SPSC and Words. Which
// goroutines may share it is the ring's contract: a single-producer side
// used by two goroutines at once loses items.
type Producer[T any] interface {
	// TryPush adds v if there is room, without waiting: nil, ErrFull, or
	// ErrClosed once the ring is closed (v is then not kept).
	TryPush(v T) error
	// Push adds v, waiting while the ring is full: it spins for the
	// ring's budget (see Park), then parks. It returns ErrClosed once the
	// ring is closed, or ctx.Err() when ctx ends first; v is then not kept.
	Push(ctx context.Context, v T) error
	// TryPushBatch adds the longest prefix of vs that fits, in order, with
	// one move of the shared index, without waiting (at most Cap items go
	// in at once). It returns how many went in, and nil when all did, else
	// ErrFull or ErrClosed.
	TryPushBatch(vs []T) (int, error)
	// PushBatch adds all of vs, in order, waiting for room as Push does.
	// It stops early only on ErrClosed or ctx.Err(), and says how many
	// went in.
	PushBatch(ctx context.Context, vs []T) (int, error)
	// Close stops intake and wakes every waiter; items already in the
	// ring stay poppable, and consumers drain them before they see
	// ErrClosed. It is idempotent. On a single-producer ring (SPSC,
	// Words, SPMC, Broadcast) it is a producer call: from the goroutine
	// that pushes, or after its last call, as a channel is closed by its
	// sender (SPSCProducer.Close says why).
	Close()
	// Len is the number of items in the ring (a snapshot).
	Len() int
	// Cap is how many items the ring holds: the capacity asked for
	// (pushes report full there, whatever the slot array's size);
	// math.MaxInt for a Mailbox or a Backlog.
	Cap() int
}

// Consumer is the popping side of the grid: every ring but a Broadcast,
// a Broadcast's Subscriptions, and the consumer ends of SPSC and Words.
type Consumer[T any] interface {
	// TryPop removes the oldest ready item, without waiting: ErrEmpty
	// when there is none, ErrClosed once the ring is closed and drained.
	// On a ring with several producers "ready" means published: a
	// producer between claiming a slot and filling it holds back the
	// items behind it, which Pop waits for where TryPop reports empty.
	TryPop() (T, error)
	// Pop removes the oldest item, waiting while the ring is empty. After
	// Close it keeps returning what was pushed before, then ErrClosed.
	Pop(ctx context.Context) (T, error)
	// TryPopBatch fills a prefix of dst with the oldest ready items, with
	// one move of the shared index, without waiting, and returns how
	// many. When it took none it says why: ErrEmpty, or ErrClosed once the
	// ring is closed and drained.
	TryPopBatch(dst []T) (int, error)
	// PopBatch waits as Pop does for at least one item, then takes as
	// many as are ready, up to len(dst).
	PopBatch(ctx context.Context, dst []T) (int, error)
	// Len is the number of items in the ring (a snapshot).
	Len() int
	// Cap is how many items the ring holds.
	Cap() int
}

// All ranges over the items c pops, as Pop takes them, until c is closed
// and drained or ctx ends (then ctx.Err() != nil): the loop a range over
// a channel is.
//
//	for job := range knit.All(ctx, jobs) { // jobs: any ring, Subscription or consumer end
//		handle(job)
//	}
//
// On a knit ring or end each step is that ring's Pop; any other Consumer
// is ranged over with its Pop, until Pop returns an error. Breaking out
// of the loop leaves the remaining items in c. On a single-consumer ring
// the ranging goroutine is the consumer.
func All[T any](ctx context.Context, c Consumer[T]) iter.Seq[T] {
	if o, ok := c.(interface{ popOps() ringOps[T] }); ok {
		return all[T](ctx, o.popOps())
	}
	return func(yield func(T) bool) {
		for {
			v, err := c.Pop(ctx)
			if err != nil || !yield(v) {
				return
			}
		}
	}
}

// Queue is a ring with both sides: MPSC, SPMC, MPMC, Mailbox and Backlog.
// Code that takes any knit ring takes a Queue, or the side it uses,
// Producer or Consumer; the interfaces have exported methods only, so a
// caller's own queue, or a test double, implements them too.
type Queue[T any] interface {
	Producer[T]
	Consumer[T]
}

var (
	_ Queue[int]       = (*MPSC[int])(nil)
	_ Queue[int]       = (*SPMC[int])(nil)
	_ Queue[int]       = (*MPMC[int])(nil)
	_ Queue[int]       = (*Mailbox[int])(nil)
	_ Queue[int]       = (*Backlog[int])(nil)
	_ Producer[int]    = SPSCProducer[int]{}
	_ Consumer[int]    = SPSCConsumer[int]{}
	_ Producer[uint64] = WordsProducer{}
	_ Consumer[uint64] = WordsConsumer{}
	_ Producer[int]    = (*Broadcast[int])(nil)
	_ Consumer[int]    = (*Subscription[int])(nil)
)
