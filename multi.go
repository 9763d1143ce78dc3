package knit

import "context"

// MPSC, SPMC and MPMC are one ring, seqRing, with a single or a shared
// side: the grid's calls are seqRing's, written once, and each type only
// says which sides several goroutines may share (and declares the four
// calls that move one item, below).

// MPSC is a bounded multi-producer single-consumer ring: any number of
// goroutines push, one pops; it has both sides of the grid ([Queue]).
// Producers claim slots by CAS on a shared index (a lost CAS backs off:
// it spins where spinning pays and yields below four CPUs, as other
// waits do); the consumer, being alone, stores its index.
// Close is safe from any goroutine.
// Wait for it with its blocking calls or Select; to watch it with an
// Event of your own (TryPush, then Notify), first keep it fenced with
// [KeepFenced], or the Event can miss a push (it publishes with a plain
// store once nobody has waited through its own calls for a while).
// The zero MPSC is not a ring; create one with NewMPSC.
type MPSC[T any] struct{ seqRing[T] }

// SPMC is a bounded single-producer multi-consumer ring: one goroutine
// pushes, any number pop. The producer, being alone, stores its index;
// consumers claim items by CAS on a shared index. Close is a producer
// call (see Producer.Close). A consumer between taking an item and
// freeing its slot holds that slot, so TryPush may report full while a
// pop that began later has already returned.
// Wait for it with its blocking calls or Select; to watch it with an
// Event of your own (TryPush, then Notify), first keep it fenced with
// [KeepFenced], or the Event can miss a push (it publishes with a plain
// store once nobody has waited through its own calls for a while).
// The zero SPMC is not a ring; create one with NewSPMC.
type SPMC[T any] struct{ seqRing[T] }

// MPMC is a bounded multi-producer multi-consumer ring (Vyukov's bounded
// queue, with a sequence per slot): any number of goroutines push and pop
// at once, producers contending on one CAS per push (or per batch),
// consumers on another. Close is safe from any goroutine.
// Wait for it with its blocking calls or Select; to watch it with an
// Event of your own (TryPush, then Notify), first keep it fenced with
// [KeepFenced], or the Event can miss a push (it publishes with a plain
// store once nobody has waited through its own calls for a while).
// The zero MPMC is not a ring; create one with NewMPMC.
type MPMC[T any] struct{ seqRing[T] }

// NewMPSC returns an MPSC ring holding capacity items; park says how
// blocked calls wait (Park{}: the default). It panics if capacity is < 1
// or > MaxCapacity, or if the slots would take more than 1 TiB.
//
// Push reports full at capacity, but the slots are a power of two,
// allocated up front: capacity rounded up, each a T plus an 8-byte
// sequence (rounded to T's alignment), and under 1 KiB of padded indices
// and doorbells. NewMPMC[func()](1<<20, Park{}) asks for 16 MiB of 16-byte
// slots. The memory is zero at creation, which is what a ring needs, so
// the OS supplies its pages only as positions are first used: the
// resident cost grows to the whole array over the ring's first lap. A
// capacity that is not a power of two costs each push one more load (of
// the slot the item capacity places back used), which the power of two
// itself does not (BENCHMARKS.md, "Exact capacity").
func NewMPSC[T any](capacity int, park Park) *MPSC[T] {
	q := &MPSC[T]{}
	q.init("MPSC", capacity, false, true, park)
	return q
}

// NewSPMC returns an SPMC ring, as NewMPSC does.
func NewSPMC[T any](capacity int, park Park) *SPMC[T] {
	q := &SPMC[T]{}
	q.init("SPMC", capacity, true, false, park)
	return q
}

// NewMPMC returns an MPMC ring, as NewMPSC does.
func NewMPMC[T any](capacity int, park Park) *MPMC[T] {
	q := &MPMC[T]{}
	q.init("MPMC", capacity, false, false, park)
	return q
}

// Each type declares the calls that move one item, rather than having them
// promoted from seqRing: for an item passed in memory (one of more than
// one word) the wrapper Go generates for a promoted method copies it twice
// more on the way in, and zeroes the result once more and adds a jump on
// the way out (BENCHMARKS.md, "Peers: one call per claim, and a lost claim
// yields").

// TryPush adds v if there is room: see Producer.TryPush.
func (q *MPSC[T]) TryPush(v T) error { return q.tryPush(&v) }

// TryPop removes the oldest ready item: see Consumer.TryPop.
func (q *MPSC[T]) TryPop() (v T, err error) { err = q.tryPop(&v); return }

// Push adds v, waiting while the ring is full: see Producer.Push.
func (q *MPSC[T]) Push(ctx context.Context, v T) error { return q.pushWait(ctx, &v) }

// Pop removes the oldest item, waiting while the ring is empty: see
// Consumer.Pop.
func (q *MPSC[T]) Pop(ctx context.Context) (v T, err error) { err = q.popWait(ctx, &v); return }

// TryPush adds v if there is room: see Producer.TryPush.
func (q *SPMC[T]) TryPush(v T) error { return q.tryPush(&v) }

// TryPop removes the oldest ready item: see Consumer.TryPop.
func (q *SPMC[T]) TryPop() (v T, err error) { err = q.tryPop(&v); return }

// Push adds v, waiting while the ring is full: see Producer.Push.
func (q *SPMC[T]) Push(ctx context.Context, v T) error { return q.pushWait(ctx, &v) }

// Pop removes the oldest item, waiting while the ring is empty: see
// Consumer.Pop.
func (q *SPMC[T]) Pop(ctx context.Context) (v T, err error) { err = q.popWait(ctx, &v); return }

// TryPush adds v if there is room: see Producer.TryPush.
func (q *MPMC[T]) TryPush(v T) error { return q.tryPush(&v) }

// TryPop removes the oldest ready item: see Consumer.TryPop.
func (q *MPMC[T]) TryPop() (v T, err error) { err = q.tryPop(&v); return }

// Push adds v, waiting while the ring is full: see Producer.Push.
func (q *MPMC[T]) Push(ctx context.Context, v T) error { return q.pushWait(ctx, &v) }

// Pop removes the oldest item, waiting while the ring is empty: see
// Consumer.Pop.
func (q *MPMC[T]) Pop(ctx context.Context) (v T, err error) { err = q.popWait(ctx, &v); return }
