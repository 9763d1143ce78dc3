package knit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestSelectBasic: ready cases fire with their item, rings of different
// kinds and element types and channels mix, a closed ring fires its case
// with ErrClosed, a done ctx does nothing even with a case ready, and a
// blocked Select returns -1 and ctx.Err() when its ctx ends.
func TestSelectBasic(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx := context.Background()
	ints := NewMPSC[int](4)
	strs := NewSPSC[string](4)
	words := NewWords(4)
	ch := make(chan float64, 1)
	var i int
	var s string
	var w uint64
	var f float64
	sel := NewSelector(Recv(ints, &i), Recv(strs.Consumer(), &s), Recv(words.Consumer(), &w), RecvChan(ch, &f))

	strs.Producer().TryPush("a")
	if k, err := sel.Select(ctx); k != 1 || err != nil || s != "a" {
		t.Fatalf("Select = %d, %v, %q; want 1, nil, a", k, err, s)
	}
	words.TryPush(9)
	if k, err := sel.Select(ctx); k != 2 || err != nil || w != 9 {
		t.Fatalf("Select = %d, %v, %d; want 2, nil, 9", k, err, w)
	}
	ch <- 1.5
	if k, err := sel.Select(ctx); k != 3 || err != nil || f != 1.5 {
		t.Fatalf("Select = %d, %v, %v; want 3, nil, 1.5", k, err, f)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	ints.TryPush(5)
	if k, err := sel.Select(cancelled); k != -1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Select with a done ctx = %d, %v", k, err)
	}
	if k, err := Select(cancelled, Recv(ints, &i)); k != -1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("one-shot Select with a done ctx = %d, %v", k, err)
	}
	if ints.Len() != 1 {
		t.Fatal("a Select with a done ctx took an item")
	}
	if k, err := Select(ctx, Recv(ints, &i)); k != 0 || err != nil || i != 5 {
		t.Fatalf("one-shot Select = %d, %v, %d", k, err, i)
	}

	// Blocked, then its ctx ends.
	dctx, dcancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer dcancel()
	if k, err := sel.Select(dctx); k != -1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blocked Select past its deadline = %d, %v", k, err)
	}
	checkEventIdle(t, &ints.r.bells.notEmpty.Event)
	checkEventIdle(t, &strs.bells.notEmpty.Event)

	// A closed and drained ring fires its case with ErrClosed; a
	// closed channel too.
	strs.Close()
	if k, err := sel.Select(ctx); k != 1 || !errors.Is(err, ErrClosed) {
		t.Fatalf("Select on a closed ring = %d, %v", k, err)
	}
	close(ch)
	if k, err := Select(ctx, RecvChan(ch, &f)); k != 0 || !errors.Is(err, ErrClosed) {
		t.Fatalf("Select on a closed channel = %d, %v", k, err)
	}
}

// TestSelectWakes: a Select blocked on rings and a channel is woken by
// each: a push to any ring, room in a ring it sends to, a channel send, a
// Close.
func TestSelectWakes(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx := context.Background()
	a, b := NewMPMC[int](2), NewSPSC[int](2)
	out := NewSPMC[int](1)
	out.TryPush(0) // full: the send case waits for room
	quit := make(chan struct{})
	var va, vb, send int
	send = 42
	sel := NewSelector(Recv(a, &va), Recv(b.Consumer(), &vb), Send(out, &send), RecvChan(quit, nil))
	for round, c := range []struct {
		name string
		act  func()
		want int
	}{
		{"push a", func() { a.TryPush(1) }, 0},
		{"push b", func() { b.TryPush(2) }, 1},
		{"room in out", func() { out.TryPop() }, 2},
		{"quit", func() { close(quit) }, 3},
	} {
		res := make(chan [2]int, 1)
		go func() {
			k, err := sel.Select(ctx)
			if want := error(nil); c.want == 3 {
				want = ErrClosed // a closed channel fires its receive with ErrClosed
				if !errors.Is(err, want) {
					t.Errorf("%s: Select error %v, want %v", c.name, err, want)
				}
			} else if err != nil {
				t.Errorf("%s: Select error %v", c.name, err)
			}
			res <- [2]int{k, 0}
		}()
		// Wait until the Select is asleep on every ring.
		waitRegistered(t, &a.r.bells.notEmpty.Event, 1)
		waitRegistered(t, &b.bells.notEmpty.Event, 1)
		waitRegistered(t, &out.r.bells.notFull.Event, 1)
		c.act()
		if r := <-res; r[0] != c.want {
			t.Fatalf("round %d (%s): Select fired case %d, want %d", round, c.name, r[0], c.want)
		}
	}
	if va != 1 || vb != 2 {
		t.Fatalf("items %d, %d; want 1, 2", va, vb)
	}
	if v, _ := out.TryPop(); v != 42 {
		t.Fatalf("the send case pushed %d, want 42", v)
	}
	for _, e := range []*Event{&a.r.bells.notEmpty.Event, &b.bells.notEmpty.Event, &out.r.bells.notFull.Event} {
		checkEventIdle(t, e)
	}
	// Close of a ring a blocked Select receives from.
	a.Close()
	if k, err := Select(ctx, Recv(a, &va)); k != 0 || !errors.Is(err, ErrClosed) {
		t.Fatalf("Select after Close = %d, %v", k, err)
	}
}

// TestSelectFanIn: producers push into several rings of one kind and
// close them; one consumer Selects over all of them and a quit channel,
// dropping each ring's case when it reports ErrClosed. Every item arrives
// exactly once, in order per ring, at GOMAXPROCS 1, 2 and 8, with Close
// racing the blocked Select.
func TestSelectFanIn(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		for _, k := range ringKinds {
			t.Run(fmt.Sprintf("%s/procs=%d", k.name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				defer watchdog(t, 60*time.Second)()
				const rings = 4
				per := parkScale(20000)
				qs := make([]Queue[int], rings)
				for r := range qs {
					qs[r] = k.newInt(8)
				}
				for r, q := range qs {
					go func() {
						for i := range per {
							if err := q.Push(context.Background(), r*per+i); err != nil {
								t.Errorf("Push: %v", err)
								return
							}
						}
						q.Close()
					}()
				}
				var v int
				open := make([]int, rings) // case index → ring
				cases := make([]Case, rings)
				for r := range qs {
					open[r], cases[r] = r, Recv(qs[r], &v)
				}
				next := make([]int, rings)
				for len(cases) > 0 {
					sel := NewSelector(cases...)
					for {
						i, err := sel.Select(context.Background())
						if errors.Is(err, ErrClosed) {
							cases = append(cases[:i], cases[i+1:]...)
							open = append(open[:i], open[i+1:]...)
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						r := open[i]
						if v != r*per+next[r] {
							t.Fatalf("ring %d: got %d, want %d", r, v, r*per+next[r])
						}
						next[r]++
					}
				}
				for r, n := range next {
					if n != per {
						t.Fatalf("ring %d: %d items arrived, want %d", r, n, per)
					}
				}
			})
		}
	}
}

// TestSelectPassesWakesOn: a Select woken by one ring that fires another
// case passes the wake on, so a plain Pop waiting on the first ring is
// not left asleep beside its item. Each round the Select waits on a and
// b, a Pop waits on a, and one item goes into each ring at once; both
// items must be taken, every round.
func TestSelectPassesWakesOn(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	ctx := context.Background()
	a, b := NewMPMC[int](4), NewMPMC[int](4)
	var va, vb int
	sel := NewSelector(Recv(a, &va), Recv(b, &vb))
	rounds := parkScale(3000)
	for round := range rounds {
		selected := make(chan int, 1)
		go func() {
			k, err := sel.Select(ctx)
			if err != nil {
				t.Error(err)
			}
			selected <- k
		}()
		popped := make(chan error, 1)
		go func() {
			_, err := a.Pop(ctx)
			popped <- err
		}()
		waitRegistered(t, &a.r.bells.notEmpty.Event, 2)
		a.TryPush(round)
		b.TryPush(round)
		switch <-selected {
		case 0: // the Select took a's item: the Pop needs another, and b keeps its own
			a.TryPush(round)
			if _, ok := b.TryPop(); !ok {
				t.Fatalf("round %d: b's item is gone", round)
			}
		case 1: // the Select took b's: the Pop must have a's, whichever of the two a's Notify woke
		default:
			t.Fatalf("round %d: Select returned no case", round)
		}
		if err := <-popped; err != nil {
			t.Fatal(err)
		}
		if a.Len()+b.Len() != 0 {
			t.Fatalf("round %d: %d left in a, %d in b", round, a.Len(), b.Len())
		}
	}
	checkEventIdle(t, &a.r.bells.notEmpty.Event)
	checkEventIdle(t, &b.r.bells.notEmpty.Event)
}

// TestSelectCancelRace cancels Selects blocked on rings that producers
// fill at the same time: each Select returns an item or ctx.Err(), and
// every pushed item is taken exactly once, by a Select or the final
// drain.
func TestSelectCancelRace(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	a, b := NewMPSC[int](4), NewSPMC[int](4)
	rounds := parkScale(3000)
	var got, pushed, left int
	for round := range rounds {
		ctx, cancel := context.WithCancel(context.Background())
		var v int
		res := make(chan error, 1)
		go func() {
			_, err := Select(ctx, Recv(a, &v), Recv(b, &v))
			res <- err
		}()
		if round%3 == 0 { // a blocked Select, most rounds; racing its start in the others
			waitRegistered(t, &a.r.bells.notEmpty.Event, 1)
		}
		q := Queue[int](a)
		if round%2 == 1 {
			q = b
		}
		if !q.TryPush(round) {
			t.Fatal("push into a drained ring failed")
		}
		pushed++
		cancel()
		switch err := <-res; {
		case err == nil:
			got++
		case !errors.Is(err, context.Canceled):
			t.Fatal(err)
		}
		for _, q := range []Queue[int]{a, b} {
			for {
				if _, ok := q.TryPop(); !ok {
					break
				}
				left++
			}
		}
	}
	if got+left != pushed || got == 0 {
		t.Fatalf("%d pushed, %d taken by Selects and %d left", pushed, got, left)
	}
	checkEventIdle(t, &a.r.bells.notEmpty.Event)
	checkEventIdle(t, &b.r.bells.notEmpty.Event)
}

// TestSelectZeroCase: a zero Case and a nil ring are refused with a
// message naming the mistake.
func TestSelectZeroCase(t *testing.T) {
	for name, f := range map[string]func(){
		"zero Case":    func() { Select(context.Background(), Case{}) },
		"NewSelector":  func() { NewSelector(Case{}) },
		"nil ring":     func() { Recv[int](nil, nil) },
		"nil Send ptr": func() { Send[int](NewMPSC[int](1), nil) },
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); r == "" {
					t.Errorf("%s: no panic with a message", name)
				}
			}()
			f()
		}()
	}
}

// TestSelectFairness: among cases that are always ready, each gets its
// turn: Select stays on the case that fired for a bounded streak, then
// moves on, so over many Selects every ready case fires about as often.
func TestSelectFairness(t *testing.T) {
	const n, rounds = 3, 3000
	qs := make([]*MPMC[int], n)
	var v int
	cases := make([]Case, n)
	for i := range qs {
		qs[i] = NewMPMC[int](4)
		cases[i] = Recv(qs[i], &v)
	}
	sel := NewSelector(cases...)
	var fired [n]int
	for range rounds {
		for _, q := range qs {
			q.TryPush(1) // every case ready before each Select
		}
		i, err := sel.Select(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fired[i]++
	}
	for i, f := range fired {
		if f < rounds/n*8/10 || f > rounds/n*12/10 {
			t.Fatalf("case %d fired %d of %d times with all %d ready: %v", i, f, rounds, n, fired)
		}
	}
}
