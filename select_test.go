package knit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
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
	ints := NewMPSC[int](4, Park{})
	strs := NewSPSC[string](4, Park{})
	words := NewWords(4, Park{})
	ch := make(chan float64, 1)
	var i int
	var s string
	var w uint64
	var f float64
	sel := NewSelector(Park{}, PopCase(ints, &i), PopCase(cons(strs.Ends()), &s), PopCase(cons(words.Ends()), &w), RecvCase(ch, &f))

	prod(strs.Ends()).TryPush("a")
	if k, err := sel.Select(ctx); k != 1 || err != nil || s != "a" {
		t.Fatalf("Select = %d, %v, %q; want 1, nil, a", k, err, s)
	}
	prod(words.Ends()).TryPush(9)
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
	if k, err := Select(cancelled, Park{}, PopCase(ints, &i)); k != -1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("one-shot Select with a done ctx = %d, %v", k, err)
	}
	if ints.Len() != 1 {
		t.Fatal("a Select with a done ctx took an item")
	}
	if k, err := Select(ctx, Park{}, PopCase(ints, &i)); k != 0 || err != nil || i != 5 {
		t.Fatalf("one-shot Select = %d, %v, %d", k, err, i)
	}

	// Blocked, then its ctx ends.
	dctx, dcancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer dcancel()
	if k, err := sel.Select(dctx); k != -1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blocked Select past its deadline = %d, %v", k, err)
	}
	checkEventIdle(t, &ints.bells.notEmpty.Event)
	checkEventIdle(t, &strs.bells.notEmpty.Event)

	// A closed and drained ring fires its case with ErrClosed; a
	// closed channel too.
	prod(strs.Ends()).Close()
	if k, err := sel.Select(ctx); k != 1 || !errors.Is(err, ErrClosed) {
		t.Fatalf("Select on a closed ring = %d, %v", k, err)
	}
	close(ch)
	if k, err := Select(ctx, Park{}, RecvCase(ch, &f)); k != 0 || !errors.Is(err, ErrClosed) {
		t.Fatalf("Select on a closed channel = %d, %v", k, err)
	}
}

// TestSelectWakes: a Select blocked on rings and a channel is woken by
// each: a push to any ring, room in a ring it pushes to, a channel send, a
// Close.
func TestSelectWakes(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx := context.Background()
	a, b := NewMPMC[int](2, Park{}), NewSPSC[int](2, Park{})
	out := NewSPMC[int](1, Park{})
	out.TryPush(0) // full: the push case waits for room
	quit := make(chan struct{})
	var va, vb int
	x := 42
	sel := NewSelector(Park{}, PopCase(a, &va), PopCase(cons(b.Ends()), &vb), PushCase(out, &x), RecvCase(quit, nil))
	for round, c := range []struct {
		name string
		act  func()
		want int
	}{
		{"push a", func() { a.TryPush(1) }, 0},
		{"push b", func() { prod(b.Ends()).TryPush(2) }, 1},
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
		waitRegistered(t, &a.bells.notEmpty.Event, 1)
		waitRegistered(t, &b.bells.notEmpty.Event, 1)
		waitRegistered(t, &out.bells.notFull.Event, 1)
		c.act()
		if r := <-res; r[0] != c.want {
			t.Fatalf("round %d (%s): Select fired case %d, want %d", round, c.name, r[0], c.want)
		}
	}
	if va != 1 || vb != 2 {
		t.Fatalf("items %d, %d; want 1, 2", va, vb)
	}
	if v, _ := out.TryPop(); v != 42 {
		t.Fatalf("the push case pushed %d, want 42", v)
	}
	for _, e := range []*Event{&a.bells.notEmpty.Event, &b.bells.notEmpty.Event, &out.bells.notFull.Event} {
		checkEventIdle(t, e)
	}
	// Close of a ring a blocked Select pops from.
	a.Close()
	if k, err := Select(ctx, Park{}, PopCase(a, &va)); k != 0 || !errors.Is(err, ErrClosed) {
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
					qs[r] = k.newInt(8, Park{})
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
					open[r], cases[r] = r, PopCase(qs[r], &v)
				}
				next := make([]int, rings)
				for len(cases) > 0 {
					sel := NewSelector(Park{}, cases...)
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
	a, b := NewMPMC[int](4, Park{}), NewMPMC[int](4, Park{})
	var va, vb int
	sel := NewSelector(Park{}, PopCase(a, &va), PopCase(b, &vb))
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
		waitRegistered(t, &a.bells.notEmpty.Event, 2)
		a.TryPush(round)
		b.TryPush(round)
		switch <-selected {
		case 0: // the Select took a's item: the Pop needs another, and b keeps its own
			a.TryPush(round)
			if _, err := b.TryPop(); err != nil {
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
	checkEventIdle(t, &a.bells.notEmpty.Event)
	checkEventIdle(t, &b.bells.notEmpty.Event)
}

// TestSelectCancelRace cancels Selects blocked on rings that producers
// fill at the same time: each Select returns an item or ctx.Err(), and
// every pushed item is taken exactly once, by a Select or the final
// drain.
func TestSelectCancelRace(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	a, b := NewMPSC[int](4, Park{}), NewSPMC[int](4, Park{})
	rounds := parkScale(3000)
	var got, pushed, left int
	for round := range rounds {
		ctx, cancel := context.WithCancel(context.Background())
		var v int
		res := make(chan error, 1)
		go func() {
			_, err := Select(ctx, Park{}, PopCase(a, &v), PopCase(b, &v))
			res <- err
		}()
		if round%3 == 0 { // a blocked Select, most rounds; racing its start in the others
			waitRegistered(t, &a.bells.notEmpty.Event, 1)
		}
		q := Queue[int](a)
		if round%2 == 1 {
			q = b
		}
		if q.TryPush(round) != nil {
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
				if _, err := q.TryPop(); err != nil {
					break
				}
				left++
			}
		}
	}
	if got+left != pushed || got == 0 {
		t.Fatalf("%d pushed, %d taken by Selects and %d left", pushed, got, left)
	}
	checkEventIdle(t, &a.bells.notEmpty.Event)
	checkEventIdle(t, &b.bells.notEmpty.Event)
}

// TestSelectZeroCase: a zero Case and a nil ring are refused with a
// message naming the mistake.
func TestSelectZeroCase(t *testing.T) {
	for name, f := range map[string]func(){
		"zero Case":        func() { Select(context.Background(), Park{}, Case{}) },
		"NewSelector":      func() { NewSelector(Park{}, Case{}) },
		"nil ring":         func() { PopCase[int](nil, nil) },
		"nil PushCase ptr": func() { PushCase[int](NewMPSC[int](1, Park{}), nil) },
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
		qs[i] = NewMPMC[int](4, Park{})
		cases[i] = PopCase(qs[i], &v)
	}
	sel := NewSelector(Park{}, cases...)
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

// selectRings are the rings the exit tests run a Select on: every kind,
// the Mailbox and the Backlog too.
var selectRings = []struct {
	name string
	new  func() Queue[int]
}{
	{"SPSC", func() Queue[int] { return joinSPSC(NewSPSC[int](4, Park{})) }},
	{"MPSC", func() Queue[int] { return NewMPSC[int](4, Park{}) }},
	{"SPMC", func() Queue[int] { return NewSPMC[int](4, Park{}) }},
	{"MPMC", func() Queue[int] { return NewMPMC[int](4, Park{}) }},
	{"Mailbox", func() Queue[int] { return NewMailbox[int](Park{}) }},
	{"Backlog", func() Queue[int] { return NewBacklog[int](Park{}) }},
}

// notEmptyOf is the Event a consumer of q sleeps on.
func notEmptyOf(q Consumer[int]) *Event {
	return &q.(interface{ popOps() ringOps[int] }).popOps().bellsOf().notEmpty.Event
}

// notFullOf is the Event a producer of q sleeps on.
func notFullOf(q Producer[int]) *Event {
	return &q.(interface{ pushOps() ringOps[int] }).pushOps().bellsOf().notFull.Event
}

// waitQueued polls until n runtime sleepers are asleep on e (queuedOn):
// a Select or a Pop that is asleep there, not one that may be about to
// be.
func waitQueued(t testing.TB, e *Event, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for queuedOn(e) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d nodes queued after 30 s: %s", queuedOn(e), n, eventState(e))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// popWithin pops from q in a goroutine of its own, which must be asleep
// on q before push is called, and fails the test if the Pop has not
// returned the pushed item well after push: a wake lost on the way.
// queuedBefore is how many nodes e's wait list holds without the Pop.
func popWithin(t *testing.T, q Queue[int], queuedBefore int, push func()) {
	t.Helper()
	e := notEmptyOf(q)
	popped := make(chan int, 1)
	go func() {
		v, _ := q.Pop(context.Background())
		popped <- v
	}()
	waitQueued(t, e, queuedBefore+1)
	push()
	select {
	case v := <-popped:
		if v != 7 {
			t.Fatalf("Pop = %d, want 7", v)
		}
	case <-time.After(10 * time.Second):
		st := eventState(e)
		n := q.Len()
		q.Close() // let the Pop go
		t.Fatalf("Pop asleep 10 s after a TryPush with Len() = %d: the wake was lost (%s)", n, st)
	}
}

// TestSelectPanicUnqueues: a Select asleep on a ring and a channel send
// panics when the channel is closed, as a send on a closed channel does.
// It must take its nodes off the ring's doorbell as it goes: a node left
// there takes the next Notify, and the Pop that parks after it sleeps
// beside its item.
func TestSelectPanicUnqueues(t *testing.T) {
	if raceEnabled {
		// Closing a channel that a goroutine is blocked sending on is a
		// race to the detector: the misuse this test makes on purpose.
		// TestSelectExitUnregisters panics in a blocked Select without it.
		t.Skip("the race detector reports the close racing the blocked send")
	}
	for _, k := range selectRings {
		for _, rings := range []string{"ring", "rings"} {
			t.Run(k.name+"/"+rings, func(t *testing.T) {
				defer watchdog(t, 60*time.Second)()
				q := k.new()
				e := notEmptyOf(q)
				// With a second ring (full, so the Select waits to push to
				// it) the Select leaves two doorbells.
				other := NewMPMC[int](1, Park{})
				other.TryPush(0)
				ch := make(chan int)
				var v, w int
				cases := []Case{PopCase(q, &v), SendCase(ch, &w)}
				if rings == "rings" {
					cases = append(cases, PushCase(other, &w))
				}
				panicked := make(chan any, 1)
				go func() {
					defer func() { panicked <- recover() }()
					Select(context.Background(), Park{}, cases...)
				}()
				waitQueued(t, e, 1)
				close(ch)
				if r := <-panicked; !strings.Contains(fmt.Sprint(r), "closed channel") {
					t.Fatalf("Select on a closed channel's send: recovered %v, want its panic", r)
				}
				checkEventIdle(t, e)
				checkEventIdle(t, &other.bells.notFull.Event)
				popWithin(t, q, queuedOn(e), func() { q.TryPush(7) })
			})
		}
	}
}

// exitCtx is a context whose Err, once armed, leaves its caller's
// goroutine: by runtime.Goexit, or with a panic. Err is the one call into
// the caller's code that a blocked Select makes while it is registered
// on its rings.
type exitCtx struct {
	context.Context
	armed  atomic.Bool
	goexit bool
}

func (c *exitCtx) Err() error {
	if c.armed.Load() {
		if c.goexit {
			runtime.Goexit()
		}
		panic("exitCtx.Err")
	}
	return c.Context.Err()
}

// TestSelectExitUnregisters: a Select that its ctx's Err leaves, by
// runtime.Goexit or a panic, takes back its registration on every ring,
// with and without channel cases (two ways to sleep).
func TestSelectExitUnregisters(t *testing.T) {
	for _, k := range selectRings {
		for _, how := range []string{"goexit", "panic"} {
			for _, chans := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/chan=%v", k.name, how, chans), func(t *testing.T) {
					defer watchdog(t, 60*time.Second)()
					q := k.new()
					e := notEmptyOf(q)
					other := NewMPMC[int](1, Park{})
					other.TryPush(0)
					var v, w int
					cases := []Case{PopCase(q, &v), PushCase(other, &w)}
					if chans {
						cases = append(cases, RecvCase(make(chan int), &w))
					}
					base, cancel := context.WithCancel(context.Background())
					defer cancel()
					ctx := &exitCtx{Context: base, goexit: how == "goexit"}
					left := make(chan string, 1)
					go func() {
						how := "goexit" // unless it returns or panics
						defer func() {
							if r := recover(); r != nil {
								how = "panicked"
							}
							left <- how
						}()
						Select(ctx, Park{}, cases...)
						how = "returned"
					}()
					waitQueued(t, e, 1)
					ctx.armed.Store(true)
					cancel()
					got := <-left
					if want := map[string]string{"goexit": "goexit", "panic": "panicked"}[how]; got != want {
						t.Fatalf("Select's goroutine left by %s, want %s", got, want)
					}
					checkEventIdle(t, e)
					checkEventIdle(t, &other.bells.notFull.Event)
					popWithin(t, q, queuedOn(e), func() { q.TryPush(7) })
				})
			}
		}
	}
}

// TestSelectExitPassesWakeOn: however a Select leaves, a ring's wake it
// was handed goes on to the ring's next waiter. Each round a Select
// sleeps on a ring and a plain waiter (Pop, or Push on a full ring)
// sleeps behind it; then the ring gets one item (or one free slot), whose
// Notify goes to the Select, oldest in line, and at the same moment the
// Select is made to leave another way: a channel send panics, a channel
// case fires, the ctx is cancelled, the ctx's Err panics or calls
// runtime.Goexit. Either the Select took what the ring offered or the
// waiter must get it; a waiter left asleep beside it is a lost wake.
func TestSelectExitPassesWakeOn(t *testing.T) {
	type side struct {
		name string
		// setup makes a ring, the Select's case on it, the waiter, the
		// Event both sleep on, and give, which offers one item or slot.
		setup func() (c Case, wait func() error, e *Event, give func(), check func() error)
	}
	popSide := func(name string, newQ func() Queue[int]) side {
		return side{"pop/" + name, func() (Case, func() error, *Event, func(), func() error) {
			q := newQ()
			var v int
			wait := func() error { _, err := q.Pop(context.Background()); return err }
			check := func() error {
				if n := q.Len(); n != 0 {
					return fmt.Errorf("%d items left", n)
				}
				return nil
			}
			return PopCase(q, &v), wait, notEmptyOf(q), func() { q.TryPush(1) }, check
		}}
	}
	pushSide := func(name string, newQ func() Queue[int]) side {
		return side{"push/" + name, func() (Case, func() error, *Event, func(), func() error) {
			q := newQ()
			for q.TryPush(0) == nil {
			}
			x := 1
			wait := func() error { return q.Push(context.Background(), 2) }
			check := func() error {
				if n := q.Len(); n != q.Cap() {
					return fmt.Errorf("%d of %d slots full", n, q.Cap())
				}
				return nil
			}
			give := func() { q.TryPop() }
			return PushCase(q, &x), wait, notFullOf(q), give, check
		}}
	}
	sides := []side{
		popSide("MPMC", func() Queue[int] { return NewMPMC[int](2, Park{}) }),
		popSide("SPMC", func() Queue[int] { return NewSPMC[int](2, Park{}) }),
		pushSide("MPMC", func() Queue[int] { return NewMPMC[int](2, Park{}) }),
		pushSide("MPSC", func() Queue[int] { return NewMPSC[int](2, Park{}) }),
	}
	exits := []string{"panic", "chan", "cancel", "errpanic", "goexit"}
	for _, sd := range sides {
		for _, exit := range exits {
			t.Run(sd.name+"/"+exit, func(t *testing.T) {
				if exit == "panic" && raceEnabled {
					t.Skip("the race detector reports the close racing the blocked send (see TestSelectPanicUnqueues)")
				}
				defer watchdog(t, 120*time.Second)()
				var took, left int
				for round := range parkScale(400) {
					c, wait, e, give, check := sd.setup()
					base, cancel := context.WithCancel(context.Background())
					ctx := &exitCtx{Context: base, goexit: exit == "goexit"}
					ch := make(chan int, 1)
					var w int
					cases, ringCase := []Case{c}, 0
					var leave func()
					switch exit {
					case "panic":
						cases = append(cases, SendCase(ch, &w))
						ch <- 0 // full: the send waits
						leave = func() { close(ch) }
					case "chan":
						cases = append(cases, RecvCase(ch, &w))
						leave = func() { ch <- 1 }
					case "cancel":
						leave = cancel
					case "errpanic", "goexit":
						leave = func() { ctx.armed.Store(true); cancel() }
					}
					if len(cases) == 2 && round%4 >= 2 {
						// The channel case first: a Select woken by the
						// ring's Notify then tries the channel before the
						// ring, and leaves by it holding the ring's wake.
						cases[0], cases[1], ringCase = cases[1], cases[0], 1
					}
					fired := make(chan int, 1) // the case that fired, or -1
					go func() {
						k := -1
						defer func() {
							recover()
							fired <- k
						}()
						k, _ = Select(ctx, Park{}, cases...)
					}()
					waitQueued(t, e, 1)
					waited := make(chan error, 1)
					go func() { waited <- wait() }()
					waitQueued(t, e, 2)
					k := -2
					switch {
					case round%2 == 0:
						give()
						leave()
					case round%4 == 3 && len(cases) == 1:
						// Gone before the offer: a ctx leaves no wake
						// to pass on, only registrations to take back.
						leave()
						k = <-fired
						give()
					default:
						leave()
						give()
					}
					if k == -2 {
						k = <-fired
					}
					if k == ringCase { // the Select took the offer: the waiter needs another
						took++
						give()
					} else {
						left++
					}
					select {
					case err := <-waited:
						if err != nil {
							t.Fatal(err)
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("round %d: the Select left by case %d and the waiter is still asleep 10 s later beside its item or slot: %s",
							round, k, eventState(e))
					}
					if err := check(); err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					checkEventIdle(t, e)
					cancel()
				}
				t.Logf("%d rounds the Select took the offer, %d it left another way", took, left)
			})
		}
	}
}

// TestSelectNilRing: PopCase and PushCase refuse, at the call, every
// ring kind and end they take when it holds no ring: a nil pointer,
// passed as itself or inside an interface, an end made without its ring,
// a pointer to one, a nil interface. The message names the type. (A
// whole SPSC or Words is neither a Producer nor a Consumer: the compiler
// refuses it, and its ends are here.)
func TestSelectNilRing(t *testing.T) {
	var v int
	var w uint64
	for _, c := range []struct {
		want string
		f    func() Case
	}{
		{"knit: PopCase of a nil *MPSC", func() Case { return PopCase((*MPSC[int])(nil), &v) }},
		{"knit: PopCase of a nil *SPMC", func() Case { return PopCase((*SPMC[int])(nil), &v) }},
		{"knit: PopCase of a nil *MPMC", func() Case { return PopCase((*MPMC[int])(nil), &v) }},
		{"knit: PopCase of a nil *Mailbox", func() Case { return PopCase((*Mailbox[int])(nil), &v) }},
		{"knit: PopCase of a nil *Subscription", func() Case { return PopCase((*Subscription[int])(nil), &v) }},
		{"knit: PopCase of a nil *MPMC", func() Case { return PopCase(Queue[int]((*MPMC[int])(nil)), &v) }},
		{"knit: PopCase of a nil *Mailbox", func() Case { return PopCase(Consumer[int]((*Mailbox[int])(nil)), &v) }},
		{"knit: PopCase of a nil *SPSCConsumer", func() Case { return PopCase((*SPSCConsumer[int])(nil), &v) }},
		{"knit: PopCase of a zero SPSCConsumer", func() Case { return PopCase(SPSCConsumer[int]{}, &v) }},
		{"knit: PopCase of a zero *SPSCConsumer", func() Case { return PopCase(&SPSCConsumer[int]{}, &v) }},
		{"knit: PopCase of a nil *WordsConsumer", func() Case { return PopCase((*WordsConsumer)(nil), &w) }},
		{"knit: PopCase of a zero WordsConsumer", func() Case { return PopCase(WordsConsumer{}, &w) }},
		{"knit: PopCase of a zero *WordsConsumer", func() Case { return PopCase(&WordsConsumer{}, &w) }},
		{"knit: PopCase of a nil *foreignConsumer", func() Case { return PopCase((*foreignConsumer)(nil), &v) }},
		{"knit: PopCase of a nil Consumer", func() Case { return PopCase[int](nil, &v) }},
		{"knit: PopCase of a nil Consumer", func() Case { return PopCase(Queue[int](nil), &v) }},

		{"knit: PushCase of a nil *MPSC", func() Case { return PushCase((*MPSC[int])(nil), &v) }},
		{"knit: PushCase of a nil *SPMC", func() Case { return PushCase((*SPMC[int])(nil), &v) }},
		{"knit: PushCase of a nil *MPMC", func() Case { return PushCase((*MPMC[int])(nil), &v) }},
		{"knit: PushCase of a nil *Mailbox", func() Case { return PushCase((*Mailbox[int])(nil), &v) }},
		{"knit: PushCase of a nil *Broadcast", func() Case { return PushCase((*Broadcast[int])(nil), &v) }},
		{"knit: PushCase of a nil *SPMC", func() Case { return PushCase(Queue[int]((*SPMC[int])(nil)), &v) }},
		{"knit: PushCase of a nil *SPSCProducer", func() Case { return PushCase((*SPSCProducer[int])(nil), &v) }},
		{"knit: PushCase of a zero SPSCProducer", func() Case { return PushCase(SPSCProducer[int]{}, &v) }},
		{"knit: PushCase of a zero *SPSCProducer", func() Case { return PushCase(&SPSCProducer[int]{}, &v) }},
		{"knit: PushCase of a nil *WordsProducer", func() Case { return PushCase((*WordsProducer)(nil), &w) }},
		{"knit: PushCase of a zero WordsProducer", func() Case { return PushCase(WordsProducer{}, &w) }},
		{"knit: PushCase of a zero *WordsProducer", func() Case { return PushCase(&WordsProducer{}, &w) }},
		{"knit: PushCase of a nil *foreignProducer", func() Case { return PushCase((*foreignProducer)(nil), &v) }},
		{"knit: PushCase of a nil Producer", func() Case { return PushCase[int](nil, &v) }},
		{"knit: PushCase of a nil Producer", func() Case { return PushCase(Queue[int](nil), &v) }},
		// The ring is checked before the value pointer.
		{"knit: PushCase of a nil *MPMC", func() Case { return PushCase[int]((*MPMC[int])(nil), nil) }},
		{"knit: PushCase with a nil value pointer", func() Case { return PushCase[int](NewMPMC[int](1, Park{}), nil) }},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					return // no panic: reported after the call
				}
				if msg, _ := r.(string); !strings.HasPrefix(msg, c.want) || strings.Contains(msg, "[") {
					t.Errorf("panic %v (%T), want %q", r, r, c.want)
				}
			}()
			c.f()
			t.Errorf("no panic, want %q", c.want)
		}()
	}
	// A ring and its ends as they are made are accepted.
	s, ws, b := NewSPSC[int](1, Park{}), NewWords(1, Park{}), NewBroadcast[int](1, Park{})
	PopCase(cons(s.Ends()), &v)
	PushCase(prod(s.Ends()), &v)
	PopCase(cons(ws.Ends()), &w)
	PushCase(prod(ws.Ends()), &w)
	PopCase(b.Subscribe(), &v)
	PushCase(b, &v)
	PopCase(NewMailbox[int](Park{}), &v)
	PopCase(NewBacklog[int](Park{}), &v)
	PushCase(NewBacklog[int](Park{}), &v)
}

// foreignConsumer and foreignProducer are a caller's own Consumer and
// Producer: wrappers around a knit ring (a logging decorator, say) that
// offer the grid's calls but not the doorbells Select waits on.
type foreignConsumer struct{ Consumer[int] }
type foreignProducer struct{ Producer[int] }

var (
	_ Consumer[int] = foreignConsumer{}
	_ Producer[int] = foreignProducer{}
)

// TestSelectForeignEnd: PopCase of a Consumer that is not knit's, and
// PushCase of such a Producer, panic at the call with a message naming
// the type, even when it wraps a knit ring; the ring itself is accepted.
func TestSelectForeignEnd(t *testing.T) {
	q := NewMPMC[int](1, Park{})
	var v int
	mustPanic(t, "PopCase of a foreignConsumer", func() { PopCase[int](foreignConsumer{q}, &v) },
		"knit: PopCase of a knit.foreignConsumer, which is not a knit ring or end")
	mustPanic(t, "PopCase of a *foreignConsumer", func() { PopCase[int](&foreignConsumer{q}, &v) },
		"knit: PopCase of a *knit.foreignConsumer, which is not a knit ring or end")
	mustPanic(t, "PushCase of a foreignProducer", func() { PushCase[int](foreignProducer{q}, &v) },
		"knit: PushCase of a knit.foreignProducer, which is not a knit ring or end")
	// The wrapped ring is a case, and the wrapper still works as the
	// Consumer it is.
	if err := (foreignProducer{q}).TryPush(3); err != nil {
		t.Fatal(err)
	}
	if k, err := Select(context.Background(), Park{}, PopCase(q, &v)); k != 0 || err != nil || v != 3 {
		t.Fatalf("Select on the wrapped ring = %d, %v, %d; want 0, nil, 3", k, err, v)
	}
	if _, err := (foreignConsumer{q}).TryPop(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryPop through the wrapper = %v, want ErrEmpty", err)
	}
}
