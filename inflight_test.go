package knit

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The in-flight shapes: K goroutines blocked on one side of a ring, K on
// the other arriving at once, each moving one item and leaving. Positions
// are claimed in order and published out of order (a producer may publish
// i+1 while i is still being written, a consumer may free i+1 before i),
// so a waiter can be woken into a head or a tail that is not ready yet.
// A round in which a waiter stays asleep while its item or its room is
// there is a lost wakeup; the round's deadline turns it into a failure.

// inflightRounds is the number of rounds a shape runs: KNIT_INFLIGHT_ROUNDS
// when set (the done-when figures of issue 48 use 10^6), else a count
// that takes a second or two.
func inflightRounds(t *testing.T, def int) int {
	if s := os.Getenv("KNIT_INFLIGHT_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KNIT_INFLIGHT_ROUNDS=%q: want a positive count", s)
		}
		return n
	}
	if testing.Short() || raceEnabled {
		return def / 10
	}
	return def
}

// bigItem is 64 KiB: a producer takes microseconds to write it, which
// holds a claimed position open long enough for the next one to pass it.
type bigItem [8192]uint64

// inflightQueue is the part of a ring a shape drives: blocking calls and
// Len, for the stuck round's message.
type inflightQueue[T any] interface {
	Push(ctx context.Context, v T) error
	Pop(ctx context.Context) (T, error)
	Len() int
}

// inflightDeadline bounds a round. A round of the fixed code takes
// microseconds; a lost wake leaves it waiting for a push that never comes.
const inflightDeadline = 5 * time.Second

// runRound starts k blocked goroutines (block), waits until they are
// registered on bell, then starts n arriving ones (arrive) at once, and
// fails if any goroutine has not returned by the deadline.
func runRound(t *testing.T, round, k, n int, bell *ringBell, block, arrive func(i int) error, state func() string) bool {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, k+n)
	wg.Add(k + n)
	for i := range k {
		go func() {
			defer wg.Done()
			if err := block(i); err != nil {
				errs <- err
			}
		}()
	}
	// Wait until every blocked goroutine has registered (or at least
	// tried: one that found room or an item never registers).
	for spins := 0; bell.Waiters() < k && spins < 1000; spins++ {
		runtime.Gosched()
	}
	start := make(chan struct{})
	for i := range n {
		go func() {
			defer wg.Done()
			<-start
			if err := arrive(i); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(inflightDeadline):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("round %d: stuck for %v with %s (a wake lost to a position still in flight)\n%s", round, inflightDeadline, state(), buf)
		return false
	}
	close(errs)
	for err := range errs {
		t.Errorf("round %d: %v", round, err)
		return false
	}
	return true
}

// popsInFlight: k consumers blocked in Pop, k producers pushing one item
// each at once.
func popsInFlight[T any](t *testing.T, q inflightQueue[T], bell *ringBell, k, rounds int, item func(i int) T) {
	ctx := context.Background()
	for r := range rounds {
		ok := runRound(t, r, k, k, bell,
			func(int) error { _, err := q.Pop(ctx); return err },
			func(i int) error { return q.Push(ctx, item(i)) },
			func() string { return fmt.Sprintf("Len %d, %d waiters", q.Len(), bell.Waiters()) })
		if !ok {
			return
		}
	}
}

// pushesInFlight: a ring filled to capacity, k producers blocked in
// Push, k consumers popping one item each at once; then the ring is
// drained for the next round.
func pushesInFlight[T any](t *testing.T, q inflightQueue[T], capacity int, bell *ringBell, k, rounds int, item func(i int) T) {
	ctx := context.Background()
	for r := range rounds {
		for i := range capacity {
			if err := q.Push(ctx, item(i)); err != nil {
				t.Fatal(err)
			}
		}
		ok := runRound(t, r, k, k, bell,
			func(i int) error { return q.Push(ctx, item(i)) },
			func(int) error { _, err := q.Pop(ctx); return err },
			func() string { return fmt.Sprintf("Len %d of %d, %d waiters", q.Len(), capacity, bell.Waiters()) })
		if !ok {
			return
		}
		for range capacity {
			if _, err := q.Pop(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// oneConsumerInFlight: one consumer blocked in Pop takes the items of k
// producers pushing one each at once (MPSC and Mailbox, where producers
// publish out of order but one consumer is every wake's waiter).
func oneConsumerInFlight[T any](t *testing.T, q inflightQueue[T], bell *ringBell, k, rounds int, item func(i int) T) {
	ctx := context.Background()
	for r := range rounds {
		ok := runRound(t, r, 1, k, bell,
			func(int) error {
				for range k {
					if _, err := q.Pop(ctx); err != nil {
						return err
					}
				}
				return nil
			},
			func(i int) error { return q.Push(ctx, item(i)) },
			func() string { return fmt.Sprintf("Len %d, %d waiters", q.Len(), bell.Waiters()) })
		if !ok {
			return
		}
	}
}

// selectQueue pops through Select, the shape of a worker that waits on
// its queue beside other cases.
type selectQueue[T any] struct {
	q interface {
		inflightQueue[T]
		Consumer[T]
	}
}

func (s selectQueue[T]) Push(ctx context.Context, v T) error { return s.q.Push(ctx, v) }
func (s selectQueue[T]) Len() int                            { return s.q.Len() }
func (s selectQueue[T]) Pop(ctx context.Context) (T, error) {
	var v T
	_, err := Select(ctx, Park{}, PopCase[T](s.q, &v))
	return v, err
}

// selectPushQueue pushes through Select.
type selectPushQueue[T any] struct {
	q interface {
		inflightQueue[T]
		Producer[T]
	}
}

func (s selectPushQueue[T]) Pop(ctx context.Context) (T, error) { return s.q.Pop(ctx) }
func (s selectPushQueue[T]) Len() int                           { return s.q.Len() }
func (s selectPushQueue[T]) Push(ctx context.Context, v T) error {
	_, err := Select(ctx, Park{}, PushCase[T](s.q, &v))
	return err
}

func bigAt(i int) bigItem { var b bigItem; b[0] = uint64(i); b[len(b)-1] = uint64(i); return b }
func ptrAt(i int) *int    { return &i }

// TestRingInFlightWakes runs the in-flight shapes on MPMC (both sides,
// at a power-of-two capacity and an exact one) and Backlog (its
// consumers), directly and through Select, and on the one consumer of an
// MPSC and a Mailbox, with 64 KiB items and with pointers, at 4 and 8
// goroutines a side. Before the fix, 64 KiB items at GOMAXPROCS 4 beside
// two busy loops stuck a round in every shape within 2,000 rounds
// (KNIT_INFLIGHT_ROUNDS sets the count).
func TestRingInFlightWakes(t *testing.T) {
	limit := 20 * time.Minute
	if os.Getenv("KNIT_INFLIGHT_ROUNDS") != "" {
		limit = 6 * time.Hour // a long hunt by hand: each round keeps its own deadline
	}
	defer watchdog(t, limit)()
	for _, k := range []int{4, 8} {
		inflightShapes(t, "big", k, inflightRounds(t, 500), bigAt)
		inflightShapes(t, "ptr", k, inflightRounds(t, 5000), ptrAt)
	}
}

func inflightShapes[T any](t *testing.T, item string, k, rounds int, at func(int) T) {
	run := func(shape string, f func(t *testing.T)) {
		t.Run(fmt.Sprintf("%s/%s/k%d", item, shape, k), f)
	}
	run("MPMC/pop", func(t *testing.T) {
		q := NewMPMC[T](k, Park{})
		popsInFlight[T](t, q, &q.bells.notEmpty, k, rounds, at)
	})
	run("MPMC/pop/select", func(t *testing.T) {
		q := NewMPMC[T](k, Park{})
		popsInFlight[T](t, selectQueue[T]{q}, &q.bells.notEmpty, k, rounds, at)
	})
	run("MPMC/push", func(t *testing.T) {
		q := NewMPMC[T](k, Park{})
		pushesInFlight[T](t, q, k, &q.bells.notFull, k, rounds, at)
	})
	run("MPMC/push/exact", func(t *testing.T) {
		q := NewMPMC[T](k-1, Park{}) // not a power of two: admits decides full
		pushesInFlight[T](t, q, k-1, &q.bells.notFull, k, rounds, at)
	})
	run("MPMC/push/select", func(t *testing.T) {
		q := NewMPMC[T](k, Park{})
		pushesInFlight[T](t, selectPushQueue[T]{q}, k, &q.bells.notFull, k, rounds, at)
	})
	run("Backlog/pop", func(t *testing.T) {
		q := NewBacklog[T](Park{})
		popsInFlight[T](t, q, &q.m.bells.notEmpty, k, rounds, at)
	})
	run("Backlog/pop/select", func(t *testing.T) {
		q := NewBacklog[T](Park{})
		popsInFlight[T](t, selectQueue[T]{q}, &q.m.bells.notEmpty, k, rounds, at)
	})
	run("MPSC/pop", func(t *testing.T) {
		q := NewMPSC[T](k, Park{})
		oneConsumerInFlight[T](t, q, &q.bells.notEmpty, k, rounds, at)
	})
	run("Mailbox/pop", func(t *testing.T) {
		q := NewMailbox[T](Park{})
		oneConsumerInFlight[T](t, q, &q.bells.notEmpty, k, rounds, at)
	})
}
