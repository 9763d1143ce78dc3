package knit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/testutil"
)

// slotWatchdog turns a lost wakeup in a Slot test into a failure with
// every goroutine's stack and the slot's state, instead of a hang.
func slotWatchdog[T any](t *testing.T, s *Slot[T]) (stop func()) {
	return testutil.Watchdog(t, 60*time.Second, func() string { return slotState(s) })
}

func slotState[T any](s *Slot[T]) string {
	st := s.state.Load()
	return fmt.Sprintf("{phase %d closed %v solo %#x takers %d putters %d}",
		st&slotPhase, st&slotClosed != 0, s.solo.v.Load(), s.takers.Waiters(), s.putters.Waiters())
}

// slotTakersWaiting is how many takers wait: on the Event, and on the
// solo word (claimed or parked).
func slotTakersWaiting[T any](s *Slot[T]) int {
	n := s.takers.Waiters()
	if w := s.solo.v.Load(); w == wordAwake || w > wordAwake {
		n++
	}
	return n
}

// setSlotNotify makes Put wake a sleeping taker with Notify (or, with
// false, by the rule) until restore is called; only while no Slot is in
// use.
func setSlotNotify(notify bool) (restore func()) {
	return setHooks(func(h *testHooks) { h.slotNotify = notify })
}

// slotAllocsPerRun is testing.AllocsPerRun without its GOMAXPROCS(1):
// the mallocs of the whole process (both sides of a round trip) per call
// of f.
func slotAllocsPerRun(runs int, f func()) float64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / float64(runs)
}

// slotScale scales a stress count down under the race detector.
func slotScale(n int) int {
	if testutil.Race {
		return max(n/20, 50)
	}
	return n
}

// eachSlotPolicy runs f under each way Put may wake a sleeping taker:
// the rule (Handoff), and Notify.
func eachSlotPolicy(t *testing.T, f func(t *testing.T)) {
	for _, p := range []struct {
		name   string
		notify bool
	}{{"handoff", false}, {"notify", true}} {
		t.Run(p.name, func(t *testing.T) {
			defer setSlotNotify(p.notify)()
			f(t)
		})
	}
}

// TestSlotZeroValue walks the zero Slot through its contract with the
// calls that never wait.
func TestSlotZeroValue(t *testing.T) {
	var s Slot[int]
	if _, err := s.TryTake(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake on the zero Slot: %v, want ErrEmpty", err)
	}
	if s.Len() != 0 {
		t.Fatalf("Len %d, want 0", s.Len())
	}
	if err := s.TryPut(1); err != nil {
		t.Fatalf("TryPut: %v", err)
	}
	if err := s.TryPut(2); !errors.Is(err, ErrFull) {
		t.Fatalf("second TryPut: %v, want ErrFull", err)
	}
	if s.Len() != 1 {
		t.Fatalf("Len %d, want 1", s.Len())
	}
	if v, err := s.TryTake(); v != 1 || err != nil {
		t.Fatalf("TryTake: %d, %v; want 1, nil", v, err)
	}
	if err := s.Put(context.Background(), 3); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if v, err := s.Take(context.Background()); v != 3 || err != nil {
		t.Fatalf("Take: %d, %v; want 3, nil", v, err)
	}
	if _, err := s.TryTake(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake after Take: %v, want ErrEmpty", err)
	}
}

// TestSlotCloseLossless: a value inside at Close is still taken, once;
// after it every take reports ErrClosed, and every put, waiting or not,
// reports ErrClosed and stores nothing. Close is idempotent.
func TestSlotCloseLossless(t *testing.T) {
	var s Slot[string]
	if err := s.Put(context.Background(), "kept"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if err := s.TryPut("late"); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryPut after Close: %v, want ErrClosed", err)
	}
	if err := s.Put(context.Background(), "late"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
	if v, err := s.Take(context.Background()); v != "kept" || err != nil {
		t.Fatalf("Take after Close: %q, %v; want the value put before", v, err)
	}
	if v, err := s.Take(context.Background()); v != "" || !errors.Is(err, ErrClosed) {
		t.Fatalf("second Take after Close: %q, %v; want ErrClosed", v, err)
	}
	if _, err := s.TryTake(); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryTake after Close: %v, want ErrClosed", err)
	}
	if s.Len() != 0 {
		t.Fatalf("Len %d after the last Take, want 0", s.Len())
	}
}

// TestSlotKeepsNoReference: a taken value is cleared from the slot, so
// the slot does not keep what it handed out alive.
func TestSlotKeepsNoReference(t *testing.T) {
	var s Slot[*int]
	_ = s.TryPut(new(int))
	if _, err := s.TryTake(); err != nil {
		t.Fatal(err)
	}
	if s.v != nil {
		t.Fatal("the slot still references the value it handed out")
	}
}

// TestSlotCtx: a done ctx does nothing, whatever the slot holds; a wait
// that ends with its ctx returns ctx.Err() and moves nothing.
func TestSlotCtx(t *testing.T) {
	var s Slot[int]
	stop := slotWatchdog(t, &s)
	defer stop()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Put(done, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a done ctx: %v", err)
	}
	if s.Len() != 0 {
		t.Fatal("Put with a done ctx stored its value")
	}
	_ = s.TryPut(2)
	if _, err := s.Take(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Take with a done ctx: %v", err)
	}
	if s.Len() != 1 {
		t.Fatal("Take with a done ctx took the value")
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	if err := s.Put(short, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Put on a full slot until its deadline: %v", err)
	}
	if v, _ := s.TryTake(); v != 2 {
		t.Fatalf("slot holds %d after a Put timed out, want 2", v)
	}
	short3, cancel3 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel3()
	if _, err := s.Take(short3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on an empty slot until its deadline: %v", err)
	}
	// The slot still works, and has no waiter left registered.
	if slotTakersWaiting(&s) != 0 || s.putters.Waiters() != 0 {
		t.Fatalf("waiters left registered: %s", slotState(&s))
	}
	go func() { _ = s.Put(context.Background(), 4) }()
	if v, err := s.Take(context.Background()); v != 4 || err != nil {
		t.Fatalf("Take after the timeouts: %d, %v", v, err)
	}
}

// TestSlotCloseWakesBlocked: Close wakes Puts waiting on a full slot
// (ErrClosed, nothing stored) and Takes waiting on an empty one
// (ErrClosed); the value inside at Close is still taken.
func TestSlotCloseWakesBlocked(t *testing.T) {
	const k = 8
	for _, full := range []bool{true, false} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			var s Slot[int]
			stop := slotWatchdog(t, &s)
			defer stop()
			if full {
				_ = s.TryPut(-1)
			}
			errs := make(chan error, k)
			for i := range k {
				go func() {
					if full {
						errs <- s.Put(context.Background(), i)
					} else {
						_, err := s.Take(context.Background())
						errs <- err
					}
				}()
			}
			waiting := func() int { return slotTakersWaiting(&s) }
			if full {
				waiting = s.putters.Waiters
			}
			for waiting() < k { // every call is waiting, or about to
				runtime.Gosched()
			}
			s.Close()
			for range k {
				if err := <-errs; !errors.Is(err, ErrClosed) {
					t.Fatalf("a waiting call returned %v at Close, want ErrClosed", err)
				}
			}
			v, err := s.Take(context.Background())
			switch {
			case full && (v != -1 || err != nil):
				t.Fatalf("Take after Close: %d, %v; want the value inside", v, err)
			case !full && !errors.Is(err, ErrClosed):
				t.Fatalf("Take after Close: %d, %v; want ErrClosed", v, err)
			}
		})
	}
}

// slotValue is wide, so a torn copy (two callers in v at once) shows.
type slotValue [4]uint64

func mkSlotValue(n uint64) slotValue { return slotValue{n, ^n, n * 3, n + 7} }

func (v slotValue) check() (uint64, error) {
	if v != mkSlotValue(v[0]) {
		return 0, fmt.Errorf("torn value %v", v)
	}
	return v[0], nil
}

// TestSlotCountEvery: several putters and takers, with every mix of the
// waiting and non-waiting calls, and Close in the middle of the traffic;
// every value whose Put returned nil is taken exactly once, no other
// value is taken, and no value is torn.
func TestSlotCountEvery(t *testing.T) {
	eachSlotPolicy(t, func(t *testing.T) {
		for _, c := range []struct{ putters, takers int }{{1, 1}, {1, 4}, {4, 1}, {4, 4}, {8, 2}} {
			t.Run(fmt.Sprintf("%dP%dC", c.putters, c.takers), func(t *testing.T) {
				slotCountEvery(t, c.putters, c.takers, slotScale(20000), false)
			})
		}
		t.Run("close", func(t *testing.T) {
			for range slotScale(200) / 10 {
				slotCountEvery(t, 3, 3, 200, true)
			}
		})
	})
}

func slotCountEvery(t *testing.T, putters, takers, per int, closeEarly bool) {
	var s Slot[slotValue]
	stop := slotWatchdog(t, &s)
	defer stop()
	n := putters * per
	put := make([]atomic.Int32, n)   // 1: its Put returned nil
	taken := make([]atomic.Int32, n) // how many times it was taken
	var bad atomic.Value
	var pwg, twg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for p := range putters {
		pwg.Go(func() {
			for i := range per {
				v := uint64(p*per + i)
				var err error
				switch i % 4 {
				case 0:
					for err = s.TryPut(mkSlotValue(v)); errors.Is(err, ErrFull); err = s.TryPut(mkSlotValue(v)) {
						runtime.Gosched()
					}
				case 1:
					err = s.Put(ctx, mkSlotValue(v)) // a cancellable ctx takes the wait list
				default:
					err = s.Put(context.Background(), mkSlotValue(v))
				}
				switch {
				case err == nil:
					put[v].Store(1)
				case errors.Is(err, ErrClosed):
					return
				default:
					bad.Store(fmt.Errorf("Put: %v", err))
					return
				}
			}
		})
	}
	for c := range takers {
		twg.Go(func() {
			for i := 0; ; i++ {
				var v slotValue
				var err error
				switch (i + c) % 4 {
				case 0:
					for v, err = s.TryTake(); errors.Is(err, ErrEmpty); v, err = s.TryTake() {
						runtime.Gosched()
					}
				case 1:
					v, err = s.Take(ctx)
				default:
					v, err = s.Take(context.Background())
				}
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					bad.Store(fmt.Errorf("Take: %v", err))
					return
				}
				k, cerr := v.check()
				if cerr != nil || k >= uint64(n) {
					bad.Store(fmt.Errorf("took %v (%v)", v, cerr))
					return
				}
				taken[k].Add(1)
			}
		})
	}
	if closeEarly {
		for i := 0; i < 50; i++ {
			runtime.Gosched()
		}
		s.Close()
	}
	pwg.Wait()
	s.Close()
	twg.Wait()
	if err := bad.Load(); err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i := range n {
		p, k := put[i].Load(), taken[i].Load()
		if k != p {
			t.Fatalf("value %d: put %d times, taken %d times", i, p, k)
		}
		ok += int(p)
	}
	if !closeEarly && ok != n {
		t.Fatalf("%d of %d values put", ok, n)
	}
	if slotTakersWaiting(&s) != 0 || s.putters.Waiters() != 0 {
		t.Fatalf("waiters left registered: %s", slotState(&s))
	}
}

// TestSlotCtxRacesPut: a Take whose ctx ends just as a Put comes either
// returns the value or returns ctx.Err() and leaves the value in the
// slot: nothing is lost, nothing taken twice.
func TestSlotCtxRacesPut(t *testing.T) {
	eachSlotPolicy(t, func(t *testing.T) {
		var s Slot[int]
		stop := slotWatchdog(t, &s)
		defer stop()
		rounds := slotScale(5000)
		var got, left int
		for i := range rounds {
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			var v int
			go func() {
				var err error
				v, err = s.Take(ctx)
				res <- err
			}()
			if i%2 == 0 {
				runtime.Gosched()
			}
			go cancel()
			if err := s.Put(context.Background(), i+1); err != nil {
				t.Fatal(err)
			}
			err := <-res
			switch {
			case err == nil:
				if v != i+1 {
					t.Fatalf("round %d: took %d", i, v)
				}
				got++
			case errors.Is(err, context.Canceled):
				w, terr := s.TryTake()
				if w != i+1 || terr != nil {
					t.Fatalf("round %d: the cancelled Take left %d, %v in the slot", i, w, terr)
				}
				left++
			default:
				t.Fatalf("round %d: Take: %v", i, err)
			}
			if s.Len() != 0 {
				t.Fatalf("round %d: slot not empty", i)
			}
		}
		t.Logf("%d rounds: %d taken by the racing Take, %d left for the next", rounds, got, left)
	})
}

// TestSlotCtxRacesPutBlocked: a Put waiting on a full slot whose ctx
// ends as a Take empties it either stores its value or returns ctx.Err()
// and stores nothing.
func TestSlotCtxRacesPutBlocked(t *testing.T) {
	var s Slot[int]
	stop := slotWatchdog(t, &s)
	defer stop()
	for i := range slotScale(5000) {
		_ = s.TryPut(-1)
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() { res <- s.Put(ctx, i) }()
		if i%2 == 0 {
			runtime.Gosched()
		}
		go cancel()
		if v, err := s.Take(context.Background()); v != -1 || err != nil {
			t.Fatalf("round %d: Take %d, %v", i, v, err)
		}
		err := <-res
		v, terr := s.TryTake()
		switch {
		case err == nil && (v != i || terr != nil):
			t.Fatalf("round %d: Put returned nil, slot then held %d, %v", i, v, terr)
		case errors.Is(err, context.Canceled) && !errors.Is(terr, ErrEmpty):
			t.Fatalf("round %d: Put returned ctx.Err(), slot then held %d, %v", i, v, terr)
		case err != nil && !errors.Is(err, context.Canceled):
			t.Fatalf("round %d: Put: %v", i, err)
		}
	}
}

// TestSlotRaceWindows runs the stress with the race windows of the
// Event and of the solo word widened to a reschedule (the eventGap and
// slotGap hooks), where a lost wakeup would take a preemption at the
// wrong instruction to show.
func TestSlotRaceWindows(t *testing.T) {
	defer setHooks(func(h *testHooks) { h.eventGap, h.slotGap = runtime.Gosched, runtime.Gosched })()
	eachSlotPolicy(t, func(t *testing.T) {
		slotCountEvery(t, 3, 3, slotScale(3000), false)
		for range 10 {
			slotCountEvery(t, 2, 2, 100, true)
		}
	})
}

// TestSlotGOMAXPROCS: the stress at GOMAXPROCS 1, 2 and 4 whatever
// -test.cpu says, so the auto rule is exercised on both sides of its
// choice in every run.
func TestSlotGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(procs), func(t *testing.T) {
			runtime.GOMAXPROCS(procs)
			slotCountEvery(t, 2, 2, slotScale(10000), false)
		})
	}
}

// TestSlotNoAlloc: Put and Take allocate nothing, neither when they find
// the slot ready nor when they wait (a parked round trip between two
// goroutines, with a ctx that cannot be cancelled and with one that
// can).
func TestSlotNoAlloc(t *testing.T) {
	if testutil.Race {
		t.Skip("the race detector allocates")
	}
	var s Slot[func()]
	f := func() {}
	bg := context.Background()
	if a := testing.AllocsPerRun(1000, func() {
		_ = s.TryPut(f)
		_, _ = s.TryTake()
		_ = s.Put(bg, f)
		_, _ = s.Take(bg)
	}); a != 0 {
		t.Errorf("%v allocations per put and take in one goroutine", a)
	}
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ctx := range []context.Context{bg, cctx} {
		name := "background"
		if ctx.Done() != nil {
			name = "cancellable"
		}
		t.Run(name, func(t *testing.T) {
			eachSlotPolicy(t, func(t *testing.T) {
				var ping, pong Slot[int]
				stop := slotWatchdog(t, &ping)
				defer stop()
				quit := make(chan struct{})
				go func() {
					defer close(quit)
					for {
						v, err := ping.Take(ctx)
						if err != nil {
							return
						}
						_ = pong.Put(ctx, v+1)
					}
				}()
				round := func() {
					_ = ping.Put(ctx, 1)
					_, _ = pong.Take(ctx)
				}
				// Steady state, as TestEventWaitNoAlloc waits for: the
				// runtime's and the wait list's caches fill first. A
				// stray allocation of the runtime's is allowed, 1 in 100.
				var a float64
				for try := 0; try < 5; try++ {
					if a = slotAllocsPerRun(2000, round); a <= 0.01 {
						break
					}
				}
				if a > 0.01 {
					t.Errorf("%v allocations per parked put and take", a)
				}
				ping.Close()
				<-quit
			})
		})
	}
}

// BenchmarkSlotPingPong is a parked round trip through two Slots: the
// worker's Take wakes on the caller's Put, and the caller's Take on the
// worker's. A channel pair beside it for the ratio.
func BenchmarkSlotPingPong(b *testing.B) {
	b.Run("slot", func(b *testing.B) {
		var ping, pong Slot[int]
		go func() {
			for {
				v, err := ping.Take(context.Background())
				if err != nil {
					return
				}
				_ = pong.Put(context.Background(), v)
			}
		}()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = ping.Put(context.Background(), i)
			_, _ = pong.Take(context.Background())
		}
		ping.Close()
	})
	b.Run("chan", func(b *testing.B) {
		ping, pong := make(chan int), make(chan int)
		go func() {
			for v := range ping {
				pong <- v
			}
		}()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ping <- i
			<-pong
		}
		close(ping)
	})
}

// BenchmarkSlotRule measures the rule Put applies to a taker it wakes
// from a park (slotHandoff): Handoff, the rule, against Notify, in the
// shapes a Slot is made for. One op is one value handed over and, in
// the pool shapes, one task run. Compare the two with -count and
// benchstat, at -cpu 1,2 (a Slot reads no GOMAXPROCS, so -cpu's setting
// after init is the one measured).
//
//   - pool-Ww-Ss: W workers, each parked on a Slot of its own, and S
//     submitters that take an idle worker off a mutex-protected stack
//     (waiting on a Cond while there is none) and put it a short task;
//     the worker runs it and pushes itself back: knitbench's handoff
//     suite, and examples/antspool, without the harness.
//   - sleep-Ss: the same with 10,000 workers and tasks that sleep 1 ms:
//     ants' own benchmark (BenchmarkAntsPool) scaled down, so the
//     submitters bound the rate.
//   - stream: one putter and one taker passing values through one Slot.
func BenchmarkSlotRule(b *testing.B) {
	type shape struct {
		name                string
		workers, submitters int
		sleep               time.Duration
	}
	shapes := []shape{
		{"pool-1w-1s", 1, 1, 0}, {"pool-1w-2s", 1, 2, 0}, {"pool-2w-1s", 2, 1, 0}, {"pool-2w-8s", 2, 8, 0},
		{"sleep-1s", 10_000, 1, time.Millisecond}, {"sleep-2s", 10_000, 2, time.Millisecond},
	}
	for _, sh := range shapes {
		for _, pol := range []struct {
			name   string
			notify bool
		}{{"handoff", false}, {"notify", true}} {
			b.Run(sh.name+"/"+pol.name, func(b *testing.B) {
				defer setSlotNotify(pol.notify)()
				slotRulePool(b, sh.workers, sh.submitters, sh.sleep)
			})
		}
	}
	for _, pol := range []struct {
		name   string
		notify bool
	}{{"handoff", false}, {"notify", true}} {
		b.Run("stream/"+pol.name, func(b *testing.B) {
			defer setSlotNotify(pol.notify)()
			var s Slot[int]
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					if _, err := s.Take(context.Background()); err != nil {
						return
					}
				}
			}()
			for i := 0; b.Loop(); i++ {
				_ = s.Put(context.Background(), i)
			}
			s.Close()
			<-done
		})
	}
}

// slotRulePool runs b.N tasks through W workers parked on Slots of their
// own, fed by S submitters through a stack of idle workers.
func slotRulePool(b *testing.B, workers, submitters int, sleep time.Duration) {
	type worker struct{ s Slot[func()] }
	var (
		mu      sync.Mutex
		avail   sync.Cond
		idle    []*worker
		waiting int
		ran     sync.WaitGroup
		exited  sync.WaitGroup
	)
	avail.L = &mu
	task := func() {
		if sleep > 0 {
			time.Sleep(sleep)
		}
		ran.Done()
	}
	for range workers {
		w := new(worker)
		idle = append(idle, w)
		exited.Go(func() {
			for {
				f, err := w.s.Take(context.Background())
				if err != nil {
					return
				}
				f()
				mu.Lock()
				idle = append(idle, w)
				if waiting > 0 {
					avail.Signal()
				}
				mu.Unlock()
			}
		})
	}
	submit := func() {
		mu.Lock()
		for len(idle) == 0 {
			waiting++
			avail.Wait()
			waiting--
		}
		w := idle[len(idle)-1]
		idle = idle[:len(idle)-1]
		mu.Unlock()
		_ = w.s.TryPut(task)
	}
	if sleep > 0 { // every worker parked once, as in a pool that has run a while
		ran.Add(workers)
		for range workers {
			submit()
		}
		ran.Wait()
	}
	b.ResetTimer()
	ran.Add(b.N)
	var subs sync.WaitGroup
	for s := range submitters {
		subs.Go(func() {
			for i := s; i < b.N; i += submitters {
				submit()
			}
		})
	}
	subs.Wait()
	ran.Wait()
	b.StopTimer()
	mu.Lock()
	for len(idle) < workers { // the last tasks' workers are still pushing themselves back
		mu.Unlock()
		runtime.Gosched()
		mu.Lock()
	}
	for _, w := range idle {
		w.s.Close()
	}
	mu.Unlock()
	exited.Wait()
}
