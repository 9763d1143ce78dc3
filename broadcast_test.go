package knit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// The Broadcast's producer and one subscription make a ring with the
// method set of an SPSC's two ends, so every table-driven ring test runs
// on it too.
func init() {
	ringKinds = append(ringKinds, ringKind{
		name: "Broadcast 1 subscriber",
		newInt: func(n int, park Park) Queue[int] {
			b := NewBroadcast[int](n, park)
			return joined[int]{b, b.Subscribe()}
		},
		newPtr: func(n int) Queue[*int] {
			b := NewBroadcast[*int](n, Park{})
			return joined[*int]{b, b.Subscribe()}
		},
		slotsAreZeroed: func(q Queue[*int]) bool {
			return broadcastSlotsZero(q.(joined[*int]).sender.(*Broadcast[*int]))
		},
	})
}

func broadcastSlotsZero[T comparable](b *Broadcast[T]) bool {
	var zero T
	for _, v := range b.buf {
		if v != zero {
			return false
		}
	}
	return true
}

// bcastShape is a set of subscriptions: for each, the index of the one it
// follows, or -1.
type bcastShape struct {
	name    string
	leaders []int
}

var bcastShapes = []bcastShape{
	{"1 sub", []int{-1}},
	{"2 subs", []int{-1, -1}},
	{"4 subs", []int{-1, -1, -1, -1}},
	{"pipeline 3 + 1 beside", []int{-1, 0, 1, -1}},
	{"2 followers of 1", []int{-1, 0, 0}},
}

// subscribeShape makes the subscriptions of sh on b.
func subscribeShape[T any](b *Broadcast[T], sh bcastShape) []*Subscription[T] {
	subs := make([]*Subscription[T], len(sh.leaders))
	for i, l := range sh.leaders {
		if l < 0 {
			subs[i] = b.Subscribe()
		} else {
			subs[i] = b.SubscribeAfter(subs[l])
		}
	}
	return subs
}

// TestBroadcastEveryItem: every subscription sees every item, once, in
// order, whatever mix of calls each side uses; a follower never sees an
// item its leader has not popped; with pointer items no subscription
// ever finds a slot cleared under it.
func TestBroadcastEveryItem(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	n := 100_000
	if testing.Short() || raceEnabled {
		n = 4_000
	}
	for _, sh := range bcastShapes {
		for _, spin := range []time.Duration{NoSpin, 10 * time.Microsecond} {
			for _, ptr := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/spin=%v/ptr=%v", sh.name, spin, ptr), func(t *testing.T) {
					defer watchdog(t, 120*time.Second)()
					if ptr {
						everyItem(t, sh, n, spin, func(i int) *int { return &i }, func(p *int) int {
							if p == nil {
								return -1 // a slot cleared under a subscriber
							}
							return *p
						})
					} else {
						everyItem(t, sh, n, spin, func(i int) int { return i }, func(v int) int { return v })
					}
				})
			}
		}
	}
}

func everyItem[T any](t *testing.T, sh bcastShape, n int, spin time.Duration, mk func(int) T, val func(T) int) {
	b := NewBroadcast[T](64, Park{Spin: spin})
	subs := subscribeShape(b, sh)
	ctx := context.Background()
	errc := make(chan error, len(subs))
	var wg sync.WaitGroup
	for k, s := range subs {
		wg.Go(func() {
			want := 0
			check := func(v T) bool {
				got := val(v)
				if got != want {
					errc <- fmt.Errorf("subscription %d: got %d, want %d", k, got, want)
					return false
				}
				if l := sh.leaders[k]; l >= 0 && subs[l].cursor.Load() <= uint64(want) {
					errc <- fmt.Errorf("subscription %d got item %d before its leader %d popped it", k, want, l)
					return false
				}
				want++
				return true
			}
			dst := make([]T, 7)
			mode := k
			for want < n {
				mode++
				switch mode % 6 {
				case 0:
					v, err := s.Pop(ctx)
					if err != nil || !check(v) {
						errc <- err
						return
					}
				case 1:
					v, err := s.TryPop()
					if err != nil {
						runtime.Gosched() // ErrEmpty: not closed before the last item
					} else if !check(v) {
						return
					}
				case 2:
					m, _ := s.TryPopBatch(dst)
					for _, v := range dst[:m] {
						if !check(v) {
							return
						}
					}
				case 3:
					m, err := s.PopBatch(ctx, dst)
					if err != nil {
						errc <- err
						return
					}
					for _, v := range dst[:m] {
						if !check(v) {
							return
						}
					}
				case 4:
					for v := range All(ctx, s) {
						if !check(v) {
							return
						}
						if want%13 == 0 || want == n {
							break
						}
					}
				case 5:
					ok := true
					if err := s.PopFunc(ctx, func(v *T) { ok = check(*v) }); err != nil || !ok {
						errc <- err
						return
					}
				}
			}
			if _, err := s.Pop(ctx); !errors.Is(err, ErrClosed) {
				errc <- fmt.Errorf("subscription %d: Pop after the last item = %v, want ErrClosed", k, err)
			}
		})
	}
	batch := make([]T, 0, 11)
	for i := 0; i < n; {
		switch i % 4 {
		case 0, 1:
			if err := b.Push(ctx, mk(i)); err != nil {
				t.Fatal(err)
			}
			i++
		case 2:
			if b.TryPush(mk(i)) == nil {
				i++
			} else {
				runtime.Gosched()
			}
		case 3:
			batch = batch[:0]
			for j := i; j < min(i+11, n); j++ {
				batch = append(batch, mk(j))
			}
			if i%8 == 3 {
				m, _ := b.TryPushBatch(batch)
				i += m
			} else {
				m, err := b.PushBatch(ctx, batch)
				if err != nil || m != len(batch) {
					t.Fatalf("PushBatch = %d, %v", m, err)
				}
				i += m
			}
		}
	}
	b.Close()
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestBroadcastGating: the producer waits for the slowest subscription:
// TryPush fails while one is a lap behind, however far the others are,
// and succeeds once the slowest takes an item.
func TestBroadcastGating(t *testing.T) {
	b := NewBroadcast[int](4, Park{})
	fast, slow := b.Subscribe(), b.Subscribe()
	if n, err := b.TryPushBatch([]int{0, 1, 2, 3, 4}); n != 4 || !errors.Is(err, ErrFull) {
		t.Fatalf("TryPushBatch of 5 into 4 = %d, %v; want 4, ErrFull", n, err)
	}
	for i := range 4 {
		if v, err := fast.TryPop(); err != nil || v != i {
			t.Fatalf("fast TryPop = %d, %v", v, err)
		}
	}
	if err := b.TryPush(4); !errors.Is(err, ErrFull) {
		t.Fatalf("TryPush with the slowest a lap behind = %v, want ErrFull", err)
	}
	if b.Len() != 4 || fast.Len() != 0 || slow.Len() != 4 {
		t.Fatalf("Len: broadcast %d, fast %d, slow %d; want 4, 0, 4", b.Len(), fast.Len(), slow.Len())
	}
	if v, err := slow.TryPop(); err != nil || v != 0 {
		t.Fatalf("slow TryPop = %d, %v", v, err)
	}
	if b.TryPush(4) != nil || b.TryPush(5) == nil {
		t.Fatal("room for exactly one after the slowest took one")
	}
	if b.Cap() != 4 || slow.Cap() != 4 {
		t.Fatalf("Cap = %d, %d", b.Cap(), slow.Cap())
	}
}

// TestBroadcastJoin: a subscription starts at the producer's position;
// pushes with no subscription go to nobody and never fill the ring; a
// follower that joins behind a lagging leader sees nothing until the
// leader has passed the follower's start.
func TestBroadcastJoin(t *testing.T) {
	b := NewBroadcast[int](4, Park{})
	for i := range 10 {
		if b.TryPush(i) != nil {
			t.Fatalf("TryPush %d with no subscription failed", i)
		}
	}
	a := b.Subscribe()
	if _, err := a.TryPop(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("a new subscription found %v, want ErrEmpty", err)
	}
	b.TryPushBatch([]int{10, 11, 12})
	f := b.SubscribeAfter(a) // a is 3 behind
	b.TryPush(13)
	if v, err := f.TryPop(); err == nil {
		t.Fatalf("follower took %d before its leader passed its start", v)
	}
	for want := 10; want <= 12; want++ {
		if v, err := a.TryPop(); err != nil || v != want {
			t.Fatalf("leader TryPop = %d, %v; want %d", v, err, want)
		}
		if v, err := f.TryPop(); err == nil {
			t.Fatalf("follower took %d, which is before its start", v)
		}
	}
	if _, err := f.TryPop(); err == nil {
		t.Fatal("follower took 13 before its leader did")
	}
	a.TryPop()
	if v, err := f.TryPop(); err != nil || v != 13 {
		t.Fatalf("follower TryPop = %d, %v; want 13", v, err)
	}
}

// TestBroadcastUnsubscribe: leaving stops the gating at once (a producer
// blocked on the leaver returns), the leaver's calls report ErrClosed,
// and followers of a leaver follow its leader, or the producer, even
// while they are blocked.
func TestBroadcastUnsubscribe(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx := context.Background()
	for _, spin := range []time.Duration{NoSpin, 20 * time.Microsecond} {
		t.Run(fmt.Sprintf("spin=%v", spin), func(t *testing.T) {
			b := NewBroadcast[int](2, Park{Spin: spin})
			stay, leave := b.Subscribe(), b.Subscribe()
			b.TryPushBatch([]int{0, 1})
			stay.TryPopBatch(make([]int, 2))
			errc := make(chan error, 1)
			go func() { errc <- b.Push(ctx, 2) }()
			waitRegistered(t, &b.bells.notFull.Event, 1)
			leave.Unsubscribe()
			if err := <-errc; err != nil {
				t.Fatalf("Push blocked on a subscription that left = %v", err)
			}
			leave.Unsubscribe() // idempotent
			if _, err := leave.TryPop(); !errors.Is(err, ErrClosed) || leave.Len() != 0 {
				t.Fatalf("TryPop after Unsubscribe = %v, Len %d", err, leave.Len())
			}
			if _, err := leave.Pop(ctx); !errors.Is(err, ErrClosed) {
				t.Fatalf("Pop after Unsubscribe = %v", err)
			}
			if v, err := stay.TryPop(); err != nil || v != 2 {
				t.Fatalf("TryPop = %d, %v", v, err)
			}

			// A pipeline a -> m -> f and a follower g of a. m leaves while f
			// is blocked: f now follows a. Then a leaves while f and g are
			// blocked: both follow the producer.
			a := b.Subscribe()
			m := b.SubscribeAfter(a)
			f, g := b.SubscribeAfter(m), b.SubscribeAfter(a)
			stay.Unsubscribe()
			got := make(chan int, 8)
			pop := func(s *Subscription[int]) {
				v, err := s.Pop(ctx)
				if err != nil {
					v = -1
				}
				got <- v
			}
			go pop(f)
			waitRegistered(t, &b.stage.notEmpty.Event, 1)
			b.TryPush(10)
			if v, _ := a.TryPop(); v != 10 {
				t.Fatalf("a took %d", v)
			}
			m.Unsubscribe()
			if v := <-got; v != 10 {
				t.Fatalf("f, after its leader left, got %d, want 10", v)
			}
			if v, _ := g.TryPop(); v != 10 {
				t.Fatalf("g took %d", v)
			}
			go pop(f)
			go pop(g)
			waitRegistered(t, &b.stage.notEmpty.Event, 2)
			a.Unsubscribe()
			if b.rootFollowers.Load() != 2 {
				t.Fatalf("rootFollowers = %d, want 2", b.rootFollowers.Load())
			}
			b.TryPush(11)
			for range 2 {
				if v := <-got; v != 11 {
					t.Fatalf("a follower whose leaders left got %d, want 11", v)
				}
			}
			b.Close()
			for _, s := range []*Subscription[int]{f, g} {
				if _, err := s.Pop(ctx); !errors.Is(err, ErrClosed) {
					t.Fatalf("Pop after Close = %v", err)
				}
			}
		})
	}
}

// TestBroadcastCloseAndCancel: Close wakes blocked subscriptions, which
// drain and then get ErrClosed; a cancelled ctx gets a blocked Push or
// Pop out, keeping nothing; after Close, Push fails and a new
// subscription is drained at once.
func TestBroadcastCloseAndCancel(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx := context.Background()
	b := NewBroadcast[int](2, Park{})
	root, fol := b.Subscribe(), b.Subscribe()
	fol2 := b.SubscribeAfter(fol)

	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 3)
	go func() { _, err := fol2.Pop(cctx); errc <- err }()
	waitRegistered(t, &b.stage.notEmpty.Event, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled follower Pop = %v", err)
	}
	b.TryPushBatch([]int{1, 2})
	cctx, cancel = context.WithCancel(ctx)
	go func() { errc <- b.Push(cctx, 3) }()
	waitRegistered(t, &b.bells.notFull.Event, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || b.Len() != 2 {
		t.Fatalf("cancelled Push = %v, Len %d", err, b.Len())
	}

	// Drain root, then block everyone; Close lets each drain and end.
	root.TryPopBatch(make([]int, 2))
	var got [3][]int
	var wg sync.WaitGroup
	for k, s := range []*Subscription[int]{root, fol, fol2} {
		wg.Go(func() {
			for v := range All(ctx, s) {
				got[k] = append(got[k], v)
			}
		})
	}
	waitRegistered(t, &b.bells.notEmpty.Event, 1)
	b.Close()
	wg.Wait()
	if len(got[0]) != 0 || len(got[1]) != 2 || len(got[2]) != 2 {
		t.Fatalf("after Close the subscriptions drained %v", got)
	}
	if err := b.Push(ctx, 4); !errors.Is(err, ErrClosed) {
		t.Fatalf("Push after Close = %v", err)
	}
	late := b.Subscribe()
	if _, err := late.TryPop(); !errors.Is(err, ErrClosed) {
		t.Fatalf("a subscription made after Close = %v, want ErrClosed", err)
	}
}

// TestBroadcastCloseRace: the producer closes at a random moment while
// subscriptions (a pipeline among them) pop, some blocked: every item
// accepted is seen by every subscription, nothing refused is.
func TestBroadcastCloseRace(t *testing.T) {
	rounds := 60
	if testing.Short() || raceEnabled {
		rounds = 15
	}
	defer watchdog(t, 120*time.Second)()
	for r := range rounds {
		sh := bcastShapes[r%len(bcastShapes)]
		b := NewBroadcast[int](8, Park{})
		subs := subscribeShape(b, sh)
		counts := make([]int, len(subs))
		var wg sync.WaitGroup
		for k, s := range subs {
			wg.Go(func() {
				dst := make([]int, 3)
				for {
					n, err := s.PopBatch(context.Background(), dst)
					if err != nil {
						return
					}
					for _, v := range dst[:n] {
						if v != counts[k] {
							panic(fmt.Sprintf("subscription %d: got %d, want %d", k, v, counts[k]))
						}
						counts[k]++
					}
				}
			})
		}
		accepted := 0
		stop := time.Now().Add(time.Duration(r%7) * 100 * time.Microsecond)
		for time.Now().Before(stop) || accepted == 0 {
			if err := b.Push(context.Background(), accepted); err != nil {
				t.Fatal(err)
			}
			accepted++
		}
		b.Close()
		wg.Wait()
		for k, c := range counts {
			if c != accepted {
				t.Fatalf("round %d (%s): subscription %d saw %d of %d items", r, sh.name, k, c, accepted)
			}
		}
	}
}

// TestBroadcastChurn: subscriptions join and leave (some behind others)
// while the producer streams and blocks on them; each sees a contiguous
// run of items while it is in, and nothing stalls.
func TestBroadcastChurn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	n := 200_000
	if testing.Short() || raceEnabled {
		n = 10_000
	}
	defer watchdog(t, 120*time.Second)()
	b := NewBroadcast[int](16, Park{Spin: NoSpin})
	base := b.Subscribe() // keeps the producer gated throughout
	var mu sync.Mutex
	live := []*Subscription[int]{base}
	pick := func(rng *rand.Rand) *Subscription[int] {
		mu.Lock()
		defer mu.Unlock()
		return live[rng.IntN(len(live))]
	}
	errc := make(chan error, 8)
	var wg sync.WaitGroup
	consume := func(s *Subscription[int], take int, rng *rand.Rand) bool {
		last := -1
		for i := 0; i < take; i++ {
			v, err := s.Pop(context.Background())
			if errors.Is(err, ErrClosed) {
				return false
			}
			if err != nil || (last >= 0 && v != last+1) {
				errc <- fmt.Errorf("got %d after %d (%v)", v, last, err)
				return false
			}
			if s.up != nil {
				if l := s.liveLeader(); l != nil && l.cursor.Load() <= uint64(v) && !l.left.Load() {
					errc <- fmt.Errorf("follower took %d before its leader passed it", v)
					return false
				}
			}
			last = v
			if rng.IntN(64) == 0 {
				runtime.Gosched()
			}
		}
		return true
	}
	wg.Go(func() { consume(base, n+1, rand.New(rand.NewPCG(0, 0))) })
	for w := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				var s *Subscription[int]
				if rng.IntN(2) == 0 {
					s = b.Subscribe()
				} else {
					s = b.SubscribeAfter(pick(rng))
				}
				mu.Lock()
				live = append(live, s)
				mu.Unlock()
				ok := consume(s, rng.IntN(500), rng)
				mu.Lock()
				for i, x := range live {
					if x == s {
						live = append(live[:i], live[i+1:]...)
						break
					}
				}
				mu.Unlock()
				s.Unsubscribe()
				if !ok {
					return
				}
			}
		})
	}
	for i := range n {
		if err := b.Push(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// TestBroadcastSelect: subscriptions and the producer are Select cases:
// a Select blocked on a subscription is woken by a push, on a follower by
// its leader's pop, and on a full Broadcast by the slowest subscription.
func TestBroadcastSelect(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx := context.Background()
	b := NewBroadcast[int](1, Park{})
	lead := b.Subscribe()
	fol := b.SubscribeAfter(lead)
	out := NewBroadcast[string](1, Park{})
	outSub := out.Subscribe()
	out.TryPush("full")
	var v int
	s := "sent"
	follow := NewSelector(Park{}, PopCase(fol, &v), PushCase(out, &s))
	lead1 := NewSelector(Park{}, PopCase(lead, &v))
	b.TryPush(7)
	for _, c := range []struct {
		name  string
		sel   *Selector
		bells []*Event
		act   func()
		want  int
	}{
		{"leader pops", follow, []*Event{&b.stage.notEmpty.Event, &out.bells.notFull.Event}, func() { lead.TryPop() }, 0},
		{"room", follow, []*Event{&b.stage.notEmpty.Event, &out.bells.notFull.Event}, func() { outSub.TryPop() }, 1},
		{"push", lead1, []*Event{&b.bells.notEmpty.Event}, func() { b.TryPush(8) }, 0},
	} {
		res := make(chan int, 1)
		go func() {
			i, err := c.sel.Select(ctx)
			if err != nil {
				i = -1
			}
			res <- i
		}()
		for _, e := range c.bells {
			waitRegistered(t, e, 1)
		}
		c.act()
		if i := <-res; i != c.want {
			t.Fatalf("%s: Select = %d, want %d", c.name, i, c.want)
		}
		switch c.name {
		case "leader pops":
			if v != 7 {
				t.Fatalf("follower's case stored %d, want 7", v)
			}
		case "room":
			if got, _ := outSub.TryPop(); got != "sent" {
				t.Fatalf("PushCase put %q", got)
			}
		case "push":
			if v != 8 {
				t.Fatalf("leader's case stored %d, want 8", v)
			}
		}
	}
}

// TestBroadcastZeroValue: a Broadcast or Subscription no constructor made
// panics with a message naming the constructor; SubscribeAfter refuses
// another Broadcast's subscription.
func TestBroadcastZeroValue(t *testing.T) {
	var b Broadcast[int]
	var s Subscription[int]
	mustPanic(t, "zero Broadcast.TryPush", func() { b.TryPush(1) }, "NewBroadcast")
	mustPanic(t, "zero Broadcast.TryPushBatch", func() { b.TryPushBatch([]int{1}) }, "NewBroadcast")
	mustPanic(t, "zero Broadcast.Subscribe", func() { b.Subscribe() }, "NewBroadcast")
	mustPanic(t, "zero Subscription.TryPop", func() { s.TryPop() }, "Broadcast.Subscribe")
	mustPanic(t, "zero Subscription.TryPopBatch", func() { s.TryPopBatch(make([]int, 1)) }, "Broadcast.Subscribe")
	mustPanic(t, "zero Subscription.Unsubscribe", func() { s.Unsubscribe() }, "Broadcast.Subscribe")
	if b.Len() != 0 || b.Cap() != 0 || s.Len() != 0 || s.Cap() != 0 {
		t.Error("zero values: Len and Cap not 0")
	}
	other := NewBroadcast[int](2, Park{}).Subscribe()
	mustPanic(t, "SubscribeAfter of another's subscription", func() { NewBroadcast[int](2, Park{}).SubscribeAfter(other) }, "another Broadcast")
}

// TestBroadcastClearsSlots: with pointer items a slot is cleared as soon
// as the last subscription passes it, when that one can tell (here the
// slowest stays slowest), and by the producer before the slot's next lap
// otherwise; a subscription in the lead never clears what others need
// (TestBroadcastEveryItem's ptr rows check that).
func TestBroadcastClearsSlots(t *testing.T) {
	b := NewBroadcast[*int](8, Park{})
	subs := subscribeShape(b, bcastShape{leaders: []int{-1, -1, 0}})
	for round := range 5 {
		for i := range 5 + round {
			x := i
			b.TryPush(&x)
		}
		for _, s := range subs[:2] {
			s.TryPopBatch(make([]*int, 8))
		}
		if broadcastSlotsZero(b) {
			t.Fatalf("round %d: slots cleared before the follower passed them", round)
		}
		for s := subs[2]; ; {
			if _, err := s.TryPop(); err != nil {
				break
			}
		}
		if !broadcastSlotsZero(b) {
			t.Fatalf("round %d: the last subscription to pass left items in the ring", round)
		}
	}
	// Lead changes: whatever is left once all have passed, the producer
	// clears before it reuses the slots.
	for i := range 64 {
		x := i
		for b.TryPush(&x) != nil {
			subs[i%3].TryPop()
			subs[(i+1)%3].TryPop()
			subs[(i+2)%3].TryPop()
		}
	}
	for _, s := range subs {
		s.TryPopBatch(make([]*int, 8))
	}
	b.regate(b.tail.Load())
	if !broadcastSlotsZero(b) {
		t.Fatal("slots every subscription passed survive the producer's reload")
	}
}

// TestBroadcastLayout proves the padding: the producer's line, each
// subscription's cursor and the bells sit on lines of their own.
func TestBroadcastLayout(t *testing.T) {
	var b Broadcast[int]
	line := uintptr(CacheLineSize)
	if off := unsafe.Offsetof(b.tail); off < line {
		t.Errorf("Broadcast.tail at %d, within the first line", off)
	}
	if d := unsafe.Offsetof(b.bells) - unsafe.Offsetof(b.tail); d < line {
		t.Errorf("Broadcast bells-tail distance %d < line %d", d, line)
	}
	if d := unsafe.Offsetof(b.rootFollowers) - unsafe.Offsetof(b.tail); d >= line {
		t.Error("Broadcast.rootFollowers is not on the producer's line")
	}
	var s Subscription[int]
	if off := unsafe.Offsetof(s.cursor); off < line {
		t.Errorf("Subscription.cursor at %d, within the first line", off)
	}
	if d := unsafe.Offsetof(s.left) - unsafe.Offsetof(s.cursor); d < line {
		t.Errorf("Subscription left-cursor distance %d < line %d", d, line)
	}
	if d := unsafe.Offsetof(s.followers) - unsafe.Offsetof(s.cursor); d >= line {
		t.Error("Subscription.followers is not on the subscriber's line")
	}
}

// TestBroadcastZeroAlloc: steady-state calls on both sides allocate
// nothing.
func TestBroadcastZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	b := NewBroadcast[int](64, Park{})
	subs := subscribeShape(b, bcastShapes[3])
	batch := make([]int, 8)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := b.Push(ctx, 1); err != nil {
			panic(err)
		}
		b.TryPushBatch(batch)
		for _, s := range subs {
			if _, err := s.Pop(ctx); err != nil {
				panic(err)
			}
			if n, err := s.PopBatch(ctx, batch); n != 8 || err != nil {
				panic(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocs per cycle, want 0", allocs)
	}
}

// TestBroadcastPopFunc: a pipeline of stages handles each item in place,
// each writing a field the next one reads, and a last stage copies the
// whole item out with Pop; under -race this proves each stage's writes
// happen before the next stage's reads. (A subscription beside a writing
// stage, copying the item meanwhile, would race: PopFunc's contract.) A
// blocked PopFunc wakes for its leader, and ends on Close or ctx.
func TestBroadcastPopFunc(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	type ev struct{ seq, a, b int }
	n := 50_000
	if raceEnabled {
		n = 3_000
	}
	ctx := context.Background()
	b := NewBroadcast[ev](16, Park{Spin: NoSpin})
	sa := b.Subscribe()
	sb := b.SubscribeAfter(sa)
	sc := b.SubscribeAfter(sb)
	side := b.SubscribeAfter(sc)
	errc := make(chan error, 4)
	var wg sync.WaitGroup
	stage := func(s *Subscription[ev], f func(e *ev) error) {
		wg.Go(func() {
			var err error
			for {
				if perr := s.PopFunc(ctx, func(e *ev) { err = f(e) }); perr != nil {
					if !errors.Is(perr, ErrClosed) {
						errc <- perr
					}
					return
				}
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	stage(sa, func(e *ev) error { e.a = 2 * e.seq; return nil })
	stage(sb, func(e *ev) error { e.b = e.a + 1; return nil })
	next := 0
	stage(sc, func(e *ev) error {
		if e.seq != next || e.b != 2*e.seq+1 {
			return fmt.Errorf("last stage got %+v at %d", *e, next)
		}
		next++
		return nil
	})
	wg.Go(func() {
		for want := range n {
			e, err := side.Pop(ctx)
			if err != nil || e.seq != want || e.b != 2*want+1 {
				errc <- fmt.Errorf("last Pop = %+v, %v; want seq %d", e, err, want)
				return
			}
		}
	})
	for i := range n {
		if err := b.Push(ctx, ev{seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if next != n {
		t.Fatalf("last stage saw %d of %d", next, n)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	called := false
	if err := sa.PopFunc(done, func(*ev) { called = true }); !errors.Is(err, context.Canceled) || called {
		t.Fatalf("PopFunc with a done ctx = %v, called %v", err, called)
	}
	if err := sa.PopFunc(ctx, func(*ev) { called = true }); !errors.Is(err, ErrClosed) || called {
		t.Fatalf("PopFunc when drained = %v, called %v", err, called)
	}

	// Blocked, then woken by its leader; blocked, then cancelled.
	b2 := NewBroadcast[int](4, Park{})
	l := b2.Subscribe()
	f := b2.SubscribeAfter(l)
	got := make(chan error, 1)
	go func() {
		got <- f.PopFunc(ctx, func(v *int) {
			if *v != 5 {
				panic(*v)
			}
		})
	}()
	waitRegistered(t, &b2.stage.notEmpty.Event, 1)
	b2.TryPush(5)
	l.TryPop()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(ctx)
	go func() { got <- f.PopFunc(cctx, func(*int) { panic("called") }) }()
	waitRegistered(t, &b2.stage.notEmpty.Event, 1)
	ccancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled PopFunc = %v", err)
	}
}

// popFuncRecover calls s.PopFunc and recovers a panic of f, which it
// returns.
func popFuncRecover[T any](ctx context.Context, s *Subscription[T], f func(*T)) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, s.PopFunc(ctx, f)
}

// TestBroadcastPopFuncPanic: a panic in PopFunc's callback reaches the
// caller and the item counts as taken: the next call gets the next item,
// a follower sees the panicked item as the callback left it, its slot is
// cleared once every subscription has passed it, and the producer goes
// on past a full ring. In a knit_checkends build the panic also releases
// the subscriber side, so another goroutine may take over.
func TestBroadcastPopFuncPanic(t *testing.T) {
	defer watchdog(t, 30*time.Second)()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 4
	b := NewBroadcast[*int](n, Park{Spin: NoSpin})
	lead := b.Subscribe()
	follow := b.SubscribeAfter(lead)
	for i := range 3 {
		b.TryPush(&[]int{i}[0])
	}
	var got []int
	handle := func(v **int) {
		got = append(got, **v)
		if **v == 1 {
			**v = -1 // what the follower sees of the item
			panic("bad item")
		}
	}
	for i := range 3 {
		p, err := popFuncRecover(ctx, lead, handle)
		if err != nil || (p != nil) != (i == 1) {
			t.Fatalf("PopFunc %d = %v, panic %v", i, err, p)
		}
	}
	if fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("the callback got %v, want [0 1 2]: the panicked item came back", got)
	}
	for _, want := range []int{0, -1, 2} {
		if v, err := follow.TryPop(); err != nil || *v != want {
			t.Fatalf("follower TryPop = %v, %v; want %d", v, err, want)
		}
	}

	// The follower, last to pass, panics: its slot is cleared as after
	// a return, from another goroutine than the one the panic left.
	b.TryPush(&[]int{1}[0])
	if v, err := lead.TryPop(); err != nil || *v != 1 {
		t.Fatalf("leader TryPop = %v, %v", v, err)
	}
	perr := make(chan any, 1)
	go func() {
		p, _ := popFuncRecover(ctx, follow, func(**int) { panic("bad item") })
		perr <- p
	}()
	if p := <-perr; p == nil {
		t.Fatal("the follower's callback did not panic")
	}
	if v := b.buf[3&b.mask]; v != nil {
		t.Fatalf("slot of the panicked item holds %d after every subscription passed it", *v)
	}

	// A stage whose every other callback panics, recovered, and the
	// producer pushing several laps through it.
	laps := 3 * n
	done := make(chan error, 2)
	go func() {
		for i := range laps {
			p, err := popFuncRecover(ctx, lead, func(v **int) {
				if **v%2 == 1 {
					panic(**v)
				}
			})
			if err != nil || (p != nil) != (i%2 == 1) {
				done <- fmt.Errorf("stage PopFunc %d = %v, panic %v", i, err, p)
				return
			}
		}
		done <- nil
	}()
	go func() {
		for i := range laps {
			if v, err := follow.Pop(ctx); err != nil || *v != i {
				done <- fmt.Errorf("follower Pop %d = %v, %v", i, v, err)
				return
			}
		}
		done <- nil
	}()
	for i := range laps {
		if err := b.Push(ctx, &[]int{i}[0]); err != nil {
			t.Fatalf("Push %d of %d through a ring of %d = %v: the producer stalled", i, laps, n, err)
		}
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestBroadcastPopFuncZeroAlloc: PopFunc, whose cursor moves in a
// deferred call, still allocates nothing.
func TestBroadcastPopFuncZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	b := NewBroadcast[int](64, Park{})
	lead := b.Subscribe()
	follow := b.SubscribeAfter(lead)
	sum := 0
	add := func(v *int) { sum += *v }
	allocs := testing.AllocsPerRun(1000, func() {
		if err := b.Push(ctx, 1); err != nil {
			panic(err)
		}
		for _, s := range []*Subscription[int]{lead, follow} {
			if err := s.PopFunc(ctx, add); err != nil {
				panic(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocs per cycle, want 0", allocs)
	}
	if sum == 0 {
		t.Fatal("PopFunc's callback never ran")
	}
}
