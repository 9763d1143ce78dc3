package knit

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/ringmode"
)

// watchRing is one ring kind as TestWatchOwnEventLitmus drives it, through
// the public calls only: push is the producer's step (a TryPush; for a
// Broadcast follower, the push and then the leader's pop, whose cursor is
// what the follower waits for), pop the waiter's re-check (a TryPop),
// keep the public switch on one of the handles a user holds (the ring, or
// an end), relaxes the bell whose mode the producer's step publishes
// with, nil where that bell need not relax, and bells every doorbell the
// switch must keep.
type watchRing struct {
	push    func(uint64) error
	pop     func() (uint64, error)
	keep    func()
	relaxes *ringBell
	bells   []*ringBells
}

// watchKinds are every ring and every end a user can hold, each kind
// kept fenced through a different handle where it has several.
var watchKinds = []struct {
	name string
	make func() watchRing
}{
	{"MPMC", func() watchRing {
		q := NewMPMC[uint64](64, Park{})
		return watchRing{q.TryPush, q.TryPop, func() { KeepFenced(q) }, &q.bells.notEmpty, []*ringBells{&q.bells}}
	}},
	{"MPSC", func() watchRing {
		q := NewMPSC[uint64](64, Park{})
		return watchRing{q.TryPush, q.TryPop, func() { KeepFenced(q) }, &q.bells.notEmpty, []*ringBells{&q.bells}}
	}},
	{"SPMC", func() watchRing {
		q := NewSPMC[uint64](64, Park{})
		return watchRing{q.TryPush, q.TryPop, func() { KeepFenced(q) }, &q.bells.notEmpty, []*ringBells{&q.bells}}
	}},
	{"SPSC", func() watchRing {
		q := NewSPSC[uint64](64, Park{})
		p, c := q.Ends()
		return watchRing{p.TryPush, c.TryPop, func() { KeepFenced(c) }, &q.bells.notEmpty, []*ringBells{&q.bells}}
	}},
	{"Words", func() watchRing {
		q := NewWords(64, Park{})
		p, c := q.Ends()
		return watchRing{p.TryPush, c.TryPop, func() { KeepFenced(p) }, &q.r.bells.notEmpty, []*ringBells{&q.r.bells}}
	}},
	{"Mailbox", func() watchRing {
		q := NewMailbox[uint64](Park{})
		return watchRing{q.TryPush, q.TryPop, func() { KeepFenced(q) }, &q.bells.notEmpty, []*ringBells{&q.bells}}
	}},
	{"Backlog", func() watchRing {
		q := NewBacklog[uint64](Park{})
		return watchRing{q.TryPush, q.TryPop, func() { KeepFenced(q) }, &q.m.bells.notEmpty, []*ringBells{&q.m.bells}}
	}},
	{"Broadcast", func() watchRing {
		b := NewBroadcast[uint64](64, Park{})
		s := b.Subscribe()
		return watchRing{b.TryPush, s.TryPop, func() { KeepFenced(s) }, &b.bells.notEmpty, []*ringBells{&b.bells, &b.stage}}
	}},
	{"BroadcastFollower", func() watchRing {
		b := NewBroadcast[uint64](64, Park{})
		lead := b.Subscribe()
		f := b.SubscribeAfter(lead)
		push := func(v uint64) error {
			if err := b.TryPush(v); err != nil {
				return err
			}
			if got, err := lead.TryPop(); err != nil || got != v {
				return fmt.Errorf("the leader popped %d, %v; want %d", got, err, v)
			}
			return nil
		}
		// A leader's pop publishes with both notFull's and stage's mode;
		// stage need not relax, so neither is required to.
		return watchRing{push, f.TryPop, func() { KeepFenced(b) }, nil, []*ringBells{&b.bells, &b.stage}}
	}},
}

// watchStream is how many items a ring streams, with nobody waiting in its
// own calls, before the litmus: twice relaxAfter, so that its bells go
// relaxed where bells have modes.
const watchStream = 8192

// watchTimeout is how long the waiter's Wait gives the producer's Notify:
// the producer's step takes nanoseconds, so a Wait that times out after
// the producer's Notify returned slept through it.
const watchTimeout = 20 * time.Millisecond

// watchPark is the waiter's Park: a short spin catches the Notify of a
// producer that comes a little later (most iterations where the waiter's
// re-check came first), then the runtime, whose cancellation, unlike the
// futex's, leaves the event word alone: a word still at the ticket after
// the producer is done then says that its Notify saw no waiter.
var watchPark = Park{Spin: 50 * time.Microsecond, Backend: BackendRuntime}

// watchIters is the litmus's count: KNIT_LITMUS_N (no time budget), else
// def, a tenth of it with -short and a fiftieth under -race, stopping at
// a budget of watchBudget (half with -short).
func watchIters(t *testing.T, def int) litmusCount {
	t.Helper()
	if s := os.Getenv(litmusEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			t.Fatalf("%s=%q: want a positive count", litmusEnv, s)
		}
		return litmusCount{n: n}
	}
	budget := watchBudget
	if testing.Short() {
		def /= 10
		budget /= 2
	}
	if raceEnabled {
		def /= 50
	}
	return litmusCount{n: uint64(max(def, 100)), deadline: time.Now().Add(budget)}
}

// watchBudget bounds each ring kind's run per mode without KNIT_LITMUS_N.
const watchBudget = time.Second

// TestWatchOwnEventLitmus is the store-buffering litmus of code that
// watches a ring with an Event of its own, through the public calls only,
// on two goroutines locked to their OS threads: the producer calls
// TryPush(i) and then Notify(1); the waiter calls Prepare, TryPop, and,
// when the ring looked empty, Wait with a 20 ms timeout. First each ring
// streams watchStream items with nobody waiting in its own calls, so that
// its bells go relaxed where they have modes (amd64 Linux, without purego
// or -race, with membarrier).
//
// A lost wakeup is a Wait that timed out with the item then in the ring,
// the event word still at the waiter's ticket (Notify saw no waiter),
// and the producer's Notify returned in the first half of the timeout,
// while the waiter was registered: a Notify that came later (a producer
// descheduled for the whole timeout, on a loaded machine) may have come
// after the waiter left, and counts as late. In "default" the ring is as
// made, and the test logs the losses without failing: on amd64 Linux a
// relaxed ring publishes with a plain MOV that Notify's load may pass,
// and losses are expected there (the hazard KeepFenced exists for). In
// "kept" the ring was given to KeepFenced (through the ring or one of its
// ends) before the stream, its bells must still be fenced after it, and
// any loss fails the test.
//
// KNIT_LITMUS_N sets the iterations per ring and mode, without the time
// budget: KNIT_LITMUS_N=1000000 go test -run TestWatchOwnEventLitmus.
func TestWatchOwnEventLitmus(t *testing.T) {
	litmusNeedsCPUs(t)
	modes := relaxedPublish && waitAsymBarrier()
	for _, kept := range []bool{false, true} {
		for _, k := range watchKinds {
			name := k.name + "/default"
			if kept {
				name = k.name + "/kept"
			}
			t.Run(name, func(t *testing.T) { watchLitmus(t, k.make(), kept, modes) })
		}
	}
}

func watchLitmus(t *testing.T, r watchRing, kept, modes bool) {
	if kept {
		r.keep()
	}
	for i := range uint64(watchStream) {
		if err := r.push(i); err != nil {
			t.Fatalf("streaming: push %d: %v", i, err)
		}
		if v, err := r.pop(); err != nil || v != i {
			t.Fatalf("streaming: pop = %d, %v; want %d", v, err, i)
		}
	}
	switch {
	case kept:
		watchCheckFenced(t, r.bells)
	case modes && r.relaxes != nil && r.relaxes.mode.Load() != modeRelaxed:
		t.Fatalf("after %d items with nobody waiting the bell has mode %d, not relaxed: the litmus would show nothing", watchStream, r.relaxes.mode.Load())
	}

	modesAfter := watchModes(r.bells)
	c := watchIters(t, 20_000)
	var base uint64 // items already moved: this chunk's are base+i
	var e Event
	var (
		pushErr  error
		notified time.Time // when the producer's Notify returned
		tk       Ticket
		waited   bool
		werr     error
		waitFrom time.Time // when the waiter began its Wait
		v        uint64
		popErr   error
	)
	var losses, late, woken uint64
	var lost []string
	shape := litmusShape{
		a: func(i uint64) {
			pushErr = r.push(base + i)
			e.Notify(1)
			notified = time.Now()
		},
		b: func(i uint64) {
			tk = e.Prepare()
			if v, popErr = r.pop(); popErr == nil {
				e.Cancel(tk)
				waited = false
				return
			}
			waited = true
			waitFrom = time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), watchTimeout)
			werr = e.Wait(ctx, tk, watchPark)
			cancel()
		},
		check: func(i uint64) (string, int) {
			want := base + i
			if pushErr != nil {
				return fmt.Sprintf("push into an empty ring: %v", pushErr), 0
			}
			if !waited {
				if v != want {
					return fmt.Sprintf("popped %d, want %d", v, want), 0
				}
				return "", litmusA
			}
			// The producer is done: the item must be there now.
			if v, popErr = r.pop(); popErr != nil || v != want {
				return fmt.Sprintf("after the Wait (%v): pop = %d, %v; want %d", werr, v, popErr, want), 0
			}
			moved := e.seq.Load() != uint32(tk)
			switch {
			case werr == nil:
				woken++
				return "", litmusB
			case !moved && notified.Before(waitFrom.Add(watchTimeout/2)):
				losses++
				if len(lost) < 5 {
					lost = append(lost, fmt.Sprintf("iteration %d: Wait slept %v through a Notify that saw no waiter and returned %v after the Wait began, with the item in the ring",
						base-watchStream+i, watchTimeout, notified.Sub(waitFrom).Round(time.Microsecond)))
				}
				return "", 0
			default:
				// The producer ran late, near or after the Wait's end
				// (descheduled for most of the timeout): its Notify may
				// have come after the waiter left. Not a lost wakeup.
				late++
				return "", litmusB
			}
		},
	}
	// runLitmus counts from 1 and gives a run a watchdog of five minutes
	// or 100 µs an iteration: run chunks small enough that a loaded
	// machine, or a few thousand 20 ms losses, never reach it.
	const chunk = 100_000
	var ran, bad uint64
	var first []string
	start := time.Now()
	for base = watchStream; ran < c.n; {
		cc := litmusCount{n: min(c.n-ran, chunk), deadline: c.deadline}
		n, b, f := runLitmus(t, cc, shape)
		ran, bad, first = ran+n, bad+b, append(first, f...)
		base += n
		if n < cc.n {
			break // the time budget is spent
		}
	}
	mode := "default"
	if kept {
		mode = "kept fenced"
	}
	t.Logf("%s, %s/%s, bells with modes %v (after the stream %s): %d iterations in %v; the re-check found the ring empty %d times, woken %d, producer late %d; lost wakeups %d (%.2f per 10^4)",
		mode, runtime.GOOS, runtime.GOARCH, modes, modesAfter, ran, time.Since(start).Round(time.Millisecond), woken+late+losses, woken, late, losses,
		float64(losses)*1e4/float64(max(ran, 1)))
	litmusFail(t, "forbidden outcomes", bad, ran, first)
	checkEventIdle(t, &e)
	if kept {
		for _, m := range lost {
			t.Log(m)
		}
		if losses != 0 {
			t.Errorf("lost wakeups on a ring kept fenced: %d in %d iterations", losses, ran)
		}
		watchCheckFenced(t, r.bells)
	} else if losses != 0 {
		t.Logf("%s; the hazard KeepFenced removes (not a failure in this mode)", lost[0])
	}
}

// watchModes shows the modes of bs's bells (0 fenced, 2 relaxed), each
// ringBells as notEmpty/notFull.
func watchModes(bs []*ringBells) string {
	s := ""
	for i, b := range bs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d/%d", b.notEmpty.mode.Load(), b.notFull.mode.Load())
	}
	return s
}

// watchCheckFenced fails t unless every bell of bs is kept and fenced.
func watchCheckFenced(t *testing.T, bs []*ringBells) {
	t.Helper()
	for i, b := range bs {
		for j, bell := range [...]*ringBell{&b.notEmpty, &b.notFull} {
			if !bell.kept || bell.mode.Load() != modeFenced {
				t.Errorf("doorbells %d, bell %d: kept %v, mode %d; want kept and fenced (%d)", i, j, bell.kept, bell.mode.Load(), modeFenced)
			}
		}
	}
}

// TestKeepFencedPublic checks the switch itself: every ring and every end
// a user can hold is Watchable and keeps every doorbell of its ring
// (both of a Broadcast's), KeepFenced returns its argument, a nil ring
// panics, and nothing else is Watchable: Event, channels, the Producer,
// Consumer and Queue interfaces. The compiler refuses those, so here the
// test asks reflect. internal/ringmode's hook, which takes any value, is
// the same switch and refuses what is not a ring.
func TestKeepFencedPublic(t *testing.T) {
	spsc, words, bc := NewSPSC[int](8, Park{}), NewWords(8, Park{}), NewBroadcast[int](8, Park{})
	mbox, backlog := NewMailbox[int](Park{}), NewBacklog[int](Park{})
	mpsc, spmc, mpmc := NewMPSC[int](8, Park{}), NewSPMC[int](8, Park{}), NewMPMC[int](8, Park{})
	for _, c := range []struct {
		name  string
		keep  func() Watchable // KeepFenced on a fresh ring's handle
		bells []*ringBells
	}{
		{"SPSC", func() Watchable { return KeepFenced(NewSPSC[int](8, Park{})) }, nil},
		{"SPSCProducer", func() Watchable { return KeepFenced(prod(spsc.Ends())) }, []*ringBells{&spsc.bells}},
		{"SPSCConsumer", func() Watchable { return KeepFenced(cons(NewSPSC[int](8, Park{}).Ends())) }, nil},
		{"Words", func() Watchable { return KeepFenced(NewWords(8, Park{})) }, nil},
		{"WordsProducer", func() Watchable { return KeepFenced(prod(NewWords(8, Park{}).Ends())) }, nil},
		{"WordsConsumer", func() Watchable { return KeepFenced(cons(words.Ends())) }, []*ringBells{&words.r.bells}},
		{"MPSC", func() Watchable { return KeepFenced(mpsc) }, []*ringBells{&mpsc.bells}},
		{"SPMC", func() Watchable { return KeepFenced(spmc) }, []*ringBells{&spmc.bells}},
		{"MPMC", func() Watchable { return KeepFenced(mpmc) }, []*ringBells{&mpmc.bells}},
		{"Mailbox", func() Watchable { return KeepFenced(mbox) }, []*ringBells{&mbox.bells}},
		{"Backlog", func() Watchable { return KeepFenced(backlog) }, []*ringBells{&backlog.m.bells}},
		{"Subscription", func() Watchable { return KeepFenced(bc.SubscribeAfter(bc.Subscribe())) }, []*ringBells{&bc.bells, &bc.stage}},
		{"Broadcast", func() Watchable { return KeepFenced(NewBroadcast[int](8, Park{})) }, nil},
	} {
		w := c.keep()
		if w == nil {
			t.Errorf("%s: KeepFenced returned nil", c.name)
			continue
		}
		a, b := w.watchBells()
		bs := []*ringBells{a}
		if b != nil {
			bs = append(bs, b)
		}
		if c.bells != nil && !slices.Equal(bs, c.bells) {
			t.Errorf("%s: the switch reached doorbells %p, want the ring's %p", c.name, bs, c.bells)
		}
		t.Run(c.name, func(t *testing.T) { watchCheckFenced(t, bs) })
	}

	// KeepFenced returns its argument, typed.
	q := NewMPMC[string](4, Park{})
	if KeepFenced(q) != q {
		t.Error("KeepFenced(q) != q")
	}

	watchable := reflect.TypeFor[Watchable]()
	for _, typ := range []reflect.Type{
		reflect.TypeFor[*Event](), reflect.TypeFor[chan int](), reflect.TypeFor[*int](),
		reflect.TypeFor[Queue[int]](), reflect.TypeFor[Producer[int]](), reflect.TypeFor[Consumer[int]](),
		reflect.TypeFor[MPMC[int]](), // the ring by value: a copy is not the ring
		reflect.TypeFor[*Selector](), reflect.TypeFor[Park](),
	} {
		if typ.Implements(watchable) {
			t.Errorf("%v implements Watchable", typ)
		}
	}

	for name, f := range map[string]func(){
		"nil *MPMC":         func() { KeepFenced((*MPMC[int])(nil)) },
		"nil Watchable":     func() { KeepFenced[Watchable](nil) },
		"zero SPSCConsumer": func() { KeepFenced(SPSCConsumer[int]{}) },
		"nil *Subscription": func() { KeepFenced((*Subscription[int])(nil)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("KeepFenced(%s) did not panic", name)
				}
			}()
			f()
		}()
	}

	// internal/ringmode forwards to the same switch.
	for _, v := range []any{nil, new(Event), make(chan int), 42, (Queue[int])(nil)} {
		if ringmode.KeepFenced(v) {
			t.Errorf("ringmode.KeepFenced(%T) = true", v)
		}
	}
	bc2 := NewBroadcast[int](8, Park{})
	if !ringmode.KeepFenced(bc2.Subscribe()) {
		t.Error("ringmode.KeepFenced(*Subscription) = false")
	}
	watchCheckFenced(t, []*ringBells{&bc2.bells, &bc2.stage})
}

// TestKeepFencedAfterRelaxing: a ring that one goroutine streamed through
// until its bells relaxed, then given to KeepFenced before it is shared,
// is fenced again at once (the switch runs the waiter's barrier) and
// stays so through another stream.
func TestKeepFencedAfterRelaxing(t *testing.T) {
	if !relaxedPublish || !waitAsymBarrier() {
		t.Skip("bells have no modes in this build, or no membarrier here")
	}
	q := NewMPMC[int](64, Park{})
	stream := func() {
		for i := range watchStream {
			if err := q.TryPush(i); err != nil {
				t.Fatal(err)
			}
			if v, err := q.TryPop(); err != nil || v != i {
				t.Fatalf("TryPop = %d, %v; want %d", v, err, i)
			}
		}
	}
	stream()
	if q.bells.notEmpty.mode.Load() != modeRelaxed || q.bells.notFull.mode.Load() != modeRelaxed {
		t.Fatalf("after %d items the bells have modes %d and %d; want relaxed (%d)",
			watchStream, q.bells.notEmpty.mode.Load(), q.bells.notFull.mode.Load(), modeRelaxed)
	}
	KeepFenced(q)
	watchCheckFenced(t, []*ringBells{&q.bells})
	stream()
	watchCheckFenced(t, []*ringBells{&q.bells})
}

// BenchmarkKeepFenced is what KeepFenced costs a ring driven by try loops,
// where nobody waits in its own calls and its bells go relaxed: one
// producer goroutine streams b.N ints to the consumer (the benchmark's
// goroutine), both locked to their threads and spinning on TryPush and
// TryPop (stream1) or TryPushBatch and TryPopBatch of 64 (stream64), on a
// ring as made (fence=default) and on one given to KeepFenced
// (fence=kept); and solo, one goroutine's TryPush then TryPop, the
// publish's own cost with no line moving. Each ring streams watchStream
// items before the timer starts, so a default ring is relaxed by then
// where bells have modes. Compare default and kept within one run,
// interleaved across runs (the command is in BENCHMARKS.md, "KeepFenced:
// what a kept ring costs").
func BenchmarkKeepFenced(b *testing.B) {
	type ring struct {
		push      func(int) error
		pop       func() (int, error)
		pushBatch func([]int) (int, error)
		popBatch  func([]int) (int, error)
		bells     *ringBells
	}
	kinds := []struct {
		name string
		make func(kept bool) ring
	}{
		{"SPSC", func(kept bool) ring {
			q := NewSPSC[int](1024, Park{})
			if kept {
				KeepFenced(q)
			}
			p, c := q.Ends()
			return ring{p.TryPush, c.TryPop, p.TryPushBatch, c.TryPopBatch, &q.bells}
		}},
		{"MPMC", func(kept bool) ring {
			q := NewMPMC[int](1024, Park{})
			if kept {
				KeepFenced(q)
			}
			return ring{q.TryPush, q.TryPop, q.TryPushBatch, q.TryPopBatch, &q.bells}
		}},
	}
	modes := relaxedPublish && waitAsymBarrier()
	for _, k := range kinds {
		for _, shape := range []string{"stream1", "stream64", "solo"} {
			for _, kept := range []bool{false, true} {
				mode := "default"
				if kept {
					mode = "kept"
				}
				b.Run("ring="+k.name+"/shape="+shape+"/fence="+mode, func(b *testing.B) {
					r := k.make(kept)
					for i := range watchStream {
						if r.push(i) != nil {
							b.Fatal("warm-up: push failed")
						}
						if _, err := r.pop(); err != nil {
							b.Fatal("warm-up: pop failed")
						}
					}
					want := modeFenced
					if !kept && modes {
						want = modeRelaxed
					}
					if got := r.bells.notEmpty.mode.Load(); got != want {
						b.Fatalf("after the warm-up the bell has mode %d, want %d", got, want)
					}
					switch shape {
					case "solo":
						m := startCPU(b)
						for i := range b.N {
							if r.push(i) != nil {
								b.Fatal("push failed")
							}
							if _, err := r.pop(); err != nil {
								b.Fatal("pop failed")
							}
						}
						m.stop(b, b.N)
					case "stream1":
						spinStream(b, func(v int) bool { return r.push(v) == nil }, func() bool { _, err := r.pop(); return err == nil })
					default:
						keepFencedBatchStream(b, 64, r.pushBatch, r.popBatch)
					}
				})
			}
		}
	}
}

// keepFencedBatchStream is spinStream with batches of up to batch items.
func keepFencedBatchStream(b *testing.B, batch int, push, pop func([]int) (int, error)) {
	done := make(chan struct{})
	n := b.N
	go func() {
		runtime.LockOSThread()
		defer close(done)
		src := make([]int, batch)
		for sent, j := 0, 1; sent < n; j++ {
			k, _ := push(src[:min(batch, n-sent)])
			sent += k
			if k == 0 && j%4096 == 0 {
				runtime.Gosched()
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dst := make([]int, batch)
	m := startCPU(b)
	for got, j := 0, 1; got < n; j++ {
		k, _ := pop(dst)
		got += k
		if k == 0 && j%4096 == 0 {
			runtime.Gosched()
		}
	}
	<-done
	m.stop(b, n)
}
