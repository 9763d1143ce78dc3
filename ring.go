package knit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Queue is the method set every knit ring has (SPSC, MPSC, SPMC, MPMC),
// for code that takes any of them. Which sides may be shared between
// goroutines is the ring's contract, not the interface's: a single side
// used by two goroutines at once is a data race.
type Queue[T any] interface {
	// TryPush adds v if there is room and the ring is open; it never blocks.
	TryPush(v T) bool
	// TryPop removes the oldest item if there is one; it never blocks.
	// On the multi-producer rings "there is one" means published: see
	// seqRing.TryPop for the window in which it reports empty early.
	TryPop() (T, bool)
	// Push adds v, waiting while the ring is full: it spins for the ring's
	// budget, then parks. It returns ErrClosed once the ring is closed
	// (v is then not kept) or ctx.Err() when ctx ends first.
	Push(ctx context.Context, v T) error
	// Pop removes the oldest item, waiting while the ring is empty. After
	// Close it keeps returning what was pushed before, then ErrClosed.
	Pop(ctx context.Context) (T, error)
	// PushBatch adds a prefix of vs, as long as fits, in order, moving the
	// shared index once; it returns how many went in and never blocks.
	PushBatch(vs []T) int
	// PopBatch fills a prefix of dst with the oldest items and returns
	// how many; it never blocks.
	PopBatch(dst []T) int
	// Close stops intake and wakes every waiter. It is idempotent.
	Close()
	// Len is the number of items in the ring (a snapshot).
	Len() int
	// Cap is the ring's capacity: the requested one rounded up to a power
	// of two.
	Cap() int
}

var (
	_ Queue[int] = (*SPSC[int])(nil)
	_ Queue[int] = (*MPSC[int])(nil)
	_ Queue[int] = (*SPMC[int])(nil)
	_ Queue[int] = (*MPMC[int])(nil)
)

// ErrClosed is returned by blocking operations on a closed ring.
var ErrClosed = errors.New("knit: ring closed")

// MaxCapacity is the largest capacity a ring accepts.
const MaxCapacity = 1 << 30

// closedBit marks a ring closed inside its tail (enqueue) index, so that a
// push and Close are ordered by the same word: a push publishes with a CAS
// that fails once the bit is set, so no item can be published after a
// consumer saw "closed and empty" and returned ErrClosed. Positions count
// up from 0 and never reach 2^62 (seqRing doubles them in its sequences).
const closedBit = 1 << 63

// roundCapacity validates and rounds a requested capacity. A bad capacity
// is a programmer error, like a negative size to make, so it panics.
func roundCapacity(kind string, n int) int {
	if n < 1 || n > MaxCapacity {
		panic(fmt.Sprintf("knit: %s capacity %d out of range [1, %d]", kind, n, MaxCapacity))
	}
	c := 1
	for c < n {
		c <<= 1
	}
	return c
}

// Option configures how a ring's blocking operations wait.
type Option func(*Park)

// WithSpin sets how long a blocked Push or Pop spins on the ring's
// doorbell before it parks. Zero parks at once.
func WithSpin(d time.Duration) Option {
	return func(p *Park) { p.Spin = max(d, 0) }
}

// WithBackend sets how a blocked Push or Pop parks.
func WithBackend(b Backend) Option {
	return func(p *Park) { p.Backend = b }
}

// DefaultRingSpin is the spin budget of a blocked Push or Pop before it
// parks, on machines with at least four CPUs; below that it is zero.
//
// Why: a blocked side spins in the hope that its partner, running on
// another core, publishes within the budget, which saves the park and the
// wake (a futex round trip costs 10-20 µs on this VM, 5 µs on bare
// metal). On a machine with fewer than four CPUs the partner is likely to
// need the very core the spinner holds (seed 003: spin-before-park lost
// every round on 2 cores, -20% throughput, +30% CPU), so waiters park at
// once. Measured here (knitbench rings, bursts of 16 with the consumer
// parking between them, 2 vCPUs): CPU-µs per item 2.16 at spin 0, 2.63 at
// 5 µs, 4.08 at 20 µs, 5.51 at 50 µs, against 2.64 for a channel, with no
// gain in latency. The 20 µs figure for larger machines covers a futex
// round trip on bare metal (about 5 µs) four times over; it is not yet
// measured on one (see BENCHMARKS.md, "Rings").
const DefaultRingSpin = 20 * time.Microsecond

func ringPark(opts []Option) Park {
	p := Park{}
	if runtime.NumCPU() >= 4 {
		p.Spin = DefaultRingSpin
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// status is what a non-blocking attempt found.
type status uint8

const (
	stOK      status = iota
	stFull           // push: no room
	stEmpty          // pop: nothing ready now (an item may be in flight)
	stClosed         // push: ring closed
	stDrained        // pop: closed and every pushed item has been taken
)

// doorbells are a ring's two wait queues, each on its own cache lines so
// that a notifier checking one does not pull the other's line.
type doorbells struct {
	notEmpty Event // consumers park here; producers ring it after publishing
	_        [CacheLineSize]byte
	notFull  Event // producers park here; consumers ring it after freeing a slot
	_        [CacheLineSize]byte
	park     Park // read-only after construction
}

// ringCore is the non-blocking half of a ring; the blocking loops below
// are shared by all four kinds.
type ringCore[T any] interface {
	push(v T) status
	pop() (T, status)
	// pushed rings notEmpty after n items were published.
	pushed(n int)
}

// pushSlow is Push after its fast attempt failed: register on notFull,
// re-check, wait; the Event's protocol makes the re-check after Prepare
// the guarantee that a slot freed in between is not slept through.
func pushSlow[T any](r ringCore[T], b *doorbells, ctx context.Context, v T) error {
	for {
		switch r.push(v) {
		case stOK:
			r.pushed(1)
			return nil
		case stClosed:
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t := b.notFull.Prepare()
		switch r.push(v) {
		case stOK:
			b.notFull.Cancel(t)
			r.pushed(1)
			return nil
		case stClosed:
			b.notFull.Cancel(t)
			return ErrClosed
		}
		if err := b.notFull.Wait(ctx, t, b.park); err != nil {
			return err
		}
	}
}

// popSlow is Pop after its fast attempt failed.
func popSlow[T any](r ringCore[T], b *doorbells, ctx context.Context) (T, error) {
	var zero T
	for {
		v, st := r.pop()
		switch st {
		case stOK:
			b.notFull.Notify(1)
			return v, nil
		case stDrained:
			return zero, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		t := b.notEmpty.Prepare()
		v, st = r.pop()
		switch st {
		case stOK:
			b.notEmpty.Cancel(t)
			b.notFull.Notify(1)
			return v, nil
		case stDrained:
			b.notEmpty.Cancel(t)
			return zero, ErrClosed
		}
		if err := b.notEmpty.Wait(ctx, t, b.park); err != nil {
			return zero, err
		}
	}
}

// closeBells wakes everyone after the closed bit is set: producers to
// return ErrClosed, consumers to drain and then return ErrClosed.
func (b *doorbells) closeBells() {
	b.notEmpty.NotifyAll()
	b.notFull.NotifyAll()
}

// ringLen turns the two indices into a length; the loads are not one
// snapshot, so the result is clamped into [0, cap].
func ringLen(tail, head uint64, capacity int) int {
	n := int64(tail&^closedBit) - int64(head)
	return int(min(max(n, 0), int64(capacity)))
}
