package knit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSelectPark: a Select waits as its Park says. With a spin budget or
// none, on BackendRuntime, BackendFutex and BackendAuto, a Select asleep
// on two rings wakes for a push on either, and for its ctx; the wake of
// a Select on BackendFutex comes through its futex word, and that of one
// on the runtime never touches the word. The package's Select takes the
// Park too. One with a channel case sleeps in the runtime whatever
// Backend says.
func TestSelectPark(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	if NewSelector(Park{Backend: BackendFutex}, PopCase(NewMPMC[int](1, Park{}), nil), RecvCase(make(chan int), nil)).futex {
		t.Fatal("a Select with a channel case sleeps on the futex: it could not wait on the channel")
	}
	for _, p := range []Park{
		{Spin: NoSpin, Backend: BackendRuntime},
		{Spin: NoSpin, Backend: BackendFutex},
		{Spin: 20 * time.Microsecond, Backend: BackendRuntime},
		{Spin: 20 * time.Microsecond, Backend: BackendFutex},
		{Spin: NoSpin},
		{},
	} {
		t.Run(fmt.Sprintf("spin=%v/%v", p.Spin, p.Backend), func(t *testing.T) {
			a := NewMPMC[int](4, Park{})
			bp, bc := NewSPSC[int](4, Park{}).Ends()
			var va, vb int
			sel := NewSelector(p, PopCase(a, &va), PopCase(bc, &vb))
			futex := p.Backend == BackendFutex
			if sel.futex != futex {
				t.Fatalf("Selector sleeps on the futex: %v, want %v", sel.futex, futex)
			}
			type result struct {
				i   int
				err error
			}
			res := make(chan result, 1)
			for round := range 6 {
				go func() {
					i, err := sel.Select(context.Background())
					res <- result{i, err}
				}()
				waitQueued(t, &a.bells.notEmpty.Event, 1)
				waitQueued(t, &bc.q.bells.notEmpty.Event, 1)
				before := sel.word.Load()
				if round%2 == 0 {
					a.TryPush(round)
				} else {
					bp.TryPush(round)
				}
				r := <-res
				got := va
				if r.i == 1 {
					got = vb
				}
				if r.i != round%2 || r.err != nil || got != round {
					t.Fatalf("round %d: Select = %d, %v, item %d; want %d, nil, %d", round, r.i, r.err, got, round%2, round)
				}
				if moved := sel.word.Load() != before; moved != futex {
					t.Fatalf("round %d: the futex word moved: %v, want %v (the wake did not come as %v says)", round, moved, futex, p.Backend)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				i, err := sel.Select(ctx)
				res <- result{i, err}
			}()
			waitQueued(t, &a.bells.notEmpty.Event, 1)
			cancel()
			if r := <-res; r.i != -1 || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("Select after cancel = %d, %v; want -1, context.Canceled", r.i, r.err)
			}
			if n := a.bells.notEmpty.Waiters() + bc.q.bells.notEmpty.Waiters(); n != 0 {
				t.Fatalf("%d registrations left on the rings after a cancelled Select", n)
			}
			go func() {
				i, err := Select(context.Background(), p, PopCase(a, &va))
				res <- result{i, err}
			}()
			waitQueued(t, &a.bells.notEmpty.Event, 1)
			a.TryPush(9)
			if r := <-res; r.i != 0 || r.err != nil || va != 9 {
				t.Fatalf("Select = %d, %v, item %d; want 0, nil, 9", r.i, r.err, va)
			}
		})
	}
}

// TestSelectParkSpin: each Select spins as its own Park says. One given
// a long budget keeps polling its cases and never registers on a ring
// while it spins; one given NoSpin registers at once, on the same ring.
func TestSelectParkSpin(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	q := NewMPMC[int](4, Park{})
	var v int
	res := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := Select(context.Background(), Park{Spin: time.Minute}, PopCase(q, &v))
		res <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if n := q.bells.notEmpty.Waiters(); n != 0 {
		t.Fatalf("a Select spinning for a minute registered on the ring after 20 ms (%d waiters)", n)
	}
	q.TryPush(1)
	if err := <-res; err != nil || v != 1 {
		t.Fatalf("spinning Select = %v, %d; want nil, 1", err, v)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("spinning Select took %v to see its item", d)
	}
	go func() {
		_, err := Select(context.Background(), Park{Spin: NoSpin}, PopCase(q, &v))
		res <- err
	}()
	waitRegistered(t, &q.bells.notEmpty.Event, 1)
	q.TryPush(2)
	if err := <-res; err != nil || v != 2 {
		t.Fatalf("NoSpin Select = %v, %d; want nil, 2", err, v)
	}
}
