package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestCallManySubmitters checks every call's result and the exact counts
// with several goroutines calling at once, on every pool shape.
func TestCallManySubmitters(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, c := range configs() {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			sq := NewTask(p, func(x int) int { return x*x + 1 })
			const submitters = 8
			per := scale(2000)
			var wg sync.WaitGroup
			errs := make(chan error, submitters)
			for g := range submitters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.Background()
					var fs [7]Future[int]
					for i := 0; i < per; i += len(fs) {
						// Several calls in flight per submitter.
						m := min(len(fs), per-i)
						for k := range m {
							fs[k] = sq.Call(g*per + i + k)
						}
						for k := range m {
							x := g*per + i + k
							v, err := fs[k].Wait(ctx)
							if err != nil || v != x*x+1 {
								errs <- errors.New("wrong result")
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			p.Close()
			s := p.Stats()
			want := uint64(submitters * per)
			if s.Submitted != want || s.Completed != want || s.QueueDepth != 0 || s.Panicked != 0 {
				t.Fatalf("stats %+v, want %d submitted and completed", s, want)
			}
		})
	}
}

// TestGoExactlyOnce runs Go tasks from many submitters and checks each
// ran exactly once.
func TestGoExactlyOnce(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, c := range configs() {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			const submitters = 6
			per := scale(3000)
			runs := make([]atomic.Int32, submitters*per)
			var wg sync.WaitGroup
			for g := range submitters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range per {
						id := g*per + i
						if err := p.Go(func() { runs[id].Add(1) }); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			p.Close()
			for i := range runs {
				if n := runs[i].Load(); n != 1 {
					t.Fatalf("task %d ran %d times", i, n)
				}
			}
			if s := p.Stats(); s.Submitted != uint64(len(runs)) || s.Completed != uint64(len(runs)) {
				t.Fatalf("stats %+v, want %d", s, len(runs))
			}
		})
	}
}

// TestCallBatch checks batch results, including batches larger than a
// chunk and than the queues (which must block, not drop).
func TestCallBatch(t *testing.T) {
	watchdog(t, 30*time.Second)
	for _, c := range configs() {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			neg := NewTask(p, func(x int) int { return -x })
			ctx := context.Background()
			for _, n := range []int{0, 1, 25, 100, 129, 300} {
				ins := make([]int, n)
				for i := range ins {
					ins[i] = i + 1
				}
				out := make([]Future[int], n)
				if got := neg.CallBatch(ins, out); got != n {
					t.Fatalf("CallBatch(%d) accepted %d", n, got)
				}
				for i, f := range out {
					if v, err := f.Wait(ctx); err != nil || v != -(i+1) {
						t.Fatalf("batch %d call %d: %v, %v", n, i, v, err)
					}
				}
			}
		})
	}
}

func TestCallBatchShortOut(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	defer func() {
		if recover() == nil {
			t.Fatal("CallBatch with a short out did not panic")
		}
	}()
	tk.CallBatch([]int{1, 2}, make([]Future[int], 1))
}

// TestCallBatchHonoursLen: an out whose capacity would hold the batch but
// whose length does not makes CallBatch panic, and nothing is written
// into the caller's array past len(out).
func TestCallBatchHonoursLen(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	backing := make([]Future[int], 4)
	out := backing[:1]
	func() {
		defer func() {
			v := recover()
			if msg, _ := v.(string); !strings.Contains(msg, "len(out)") {
				t.Errorf("CallBatch with len(out) < len(ins): panic %v", v)
			}
		}()
		tk.CallBatch([]int{1, 2, 3}, out)
	}()
	for i, f := range backing[1:] {
		if f != (Future[int]{}) {
			t.Fatalf("CallBatch wrote backing[%d] past len(out)", i+1)
		}
	}
}

// gate is a task that blocks its worker until released.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 64), release: make(chan struct{})} }

func (g *gate) block() {
	g.entered <- struct{}{}
	<-g.release
}

// TestTryGoFull fills the only queue behind a blocked worker.
func TestTryGoFull(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1, QueueSize: 4})
	g := newGate()
	if err := p.Go(g.block); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	var ran atomic.Int32
	n := 0
	for p.TryGo(func() { ran.Add(1) }) {
		n++
		if n > 4 {
			t.Fatal("TryGo accepted more than the queue holds")
		}
	}
	if n != 4 {
		t.Fatalf("TryGo accepted %d, want 4", n)
	}
	if s := p.Stats(); s.QueueDepth != 4 || s.Submitted != 5 {
		t.Fatalf("stats %+v", s)
	}
	// Go blocks while full and goes through once the worker drains.
	goDone := make(chan error)
	go func() { goDone <- p.Go(func() { ran.Add(1) }) }()
	select {
	case err := <-goDone:
		t.Fatalf("Go returned %v while the queue was full", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(g.release)
	if err := <-goDone; err != nil {
		t.Fatal(err)
	}
	p.Close()
	if ran.Load() != 5 {
		t.Fatalf("ran %d, want 5", ran.Load())
	}
}

func TestClosed(t *testing.T) {
	p := New(Config{Workers: 2})
	tk := NewTask(p, func(x int) int { return x })
	p.Close()
	p.Close() // idempotent
	if err := p.Go(func() { t.Error("ran after Close") }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Go after Close: %v", err)
	}
	if !errors.Is(ErrClosed, knit.ErrClosed) {
		t.Fatal("ErrClosed does not match knit.ErrClosed")
	}
	if p.TryGo(func() {}) {
		t.Fatal("TryGo after Close succeeded")
	}
	f := tk.Call(1)
	for range 2 {
		if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("Call after Close: %v", err)
		}
	}
	out := make([]Future[int], 3)
	if n := tk.CallBatch([]int{1, 2, 3}, out); n != 0 {
		t.Fatalf("CallBatch after Close accepted %d", n)
	}
	for _, f := range out {
		if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("CallBatch after Close: %v", err)
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after Close: %v", err)
	}
}

// TestConcurrentClose: every Close returns, and only after the workers
// exited.
func TestConcurrentClose(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 3})
	var ran atomic.Int32
	for range 100 {
		p.Go(func() { time.Sleep(10 * time.Microsecond); ran.Add(1) }) // still running when Close starts, most runs
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Close()
			if ran.Load() != 100 {
				t.Errorf("Close returned with %d of 100 tasks run", ran.Load())
			}
		}()
	}
	wg.Wait()
}

// TestIdleWorkersPark: a started, unloaded pool ends up with every worker
// parked, and stays parked: no polling timeout wakes it.
func TestIdleWorkersPark(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"w1-default", Config{Workers: 1}},
		{"w1-spin1ms", Config{Workers: 1, Park: knit.Park{Spin: time.Millisecond}}},
		{"w4", Config{Workers: 4}},
		{"w4-spin", Config{Workers: 4, Park: knit.Park{Spin: 100 * time.Microsecond}}},
		{"w4-nosteal", Config{Workers: 4, NoSteal: true}},
		{"w2-futex", Config{Workers: 2, Park: knit.Park{Backend: knit.BackendFutex}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			n := len(p.workersNow())
			tk := NewTask(p, func(x int) int { return x })
			for i := range 50 {
				if v, err := tk.Call(i).Wait(context.Background()); err != nil || v != i {
					t.Fatalf("Call(%d) = %d, %v", i, v, err)
				}
			}
			before, ok := settleParked(p, 10*time.Second)
			if !ok {
				t.Fatalf("workers not parked: %+v", p.Stats())
			}
			for i, w := range p.workersNow() {
				if w.bell.Waiters() == 0 {
					t.Fatalf("worker %d parked, but no waiter registered on its doorbell", i)
				}
			}
			// Parked for good: no polling timeout wakes anyone. The sleep
			// is the window watched, not a wait for something to happen:
			// a loaded machine can shorten what it shows, never fail it.
			time.Sleep(50 * time.Millisecond)
			if after := p.Stats(); after != before {
				t.Fatalf("idle workers woke up: before %+v after %+v", before, after)
			}
			if before.Parks < uint64(n) {
				t.Fatalf("Parks = %d, want >= %d", before.Parks, n)
			}
		})
	}
}

// TestSpinHits: a single worker that spins catches a call that arrives
// within its spin.
func TestSpinHits(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 1, Park: knit.Park{Spin: 20 * time.Millisecond}})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	for i := range 200 {
		if v, err := tk.Call(i).Wait(context.Background()); err != nil || v != i {
			t.Fatalf("Call(%d) = %d, %v", i, v, err)
		}
	}
	if s := p.Stats(); s.SpinHits == 0 {
		t.Fatalf("no spin hit in 200 back-to-back calls: %+v", s)
	}
	p2 := New(Config{Workers: 1, Park: knit.Park{Spin: -1}})
	defer p2.Close()
	tk2 := NewTask(p2, func(x int) int { return x })
	for i := range 50 {
		if v, err := tk2.Call(i).Wait(context.Background()); err != nil || v != i {
			t.Fatalf("Call(%d) = %d, %v", i, v, err)
		}
	}
	if s := p2.Stats(); s.SpinHits != 0 {
		t.Fatalf("spin hits with Park.Spin < 0: %+v", s)
	}
}

func TestSpinPolicy(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	defer spinpolicy.SetCPUs(64)() // CPUs enough for every GOMAXPROCS below: TestSpinPolicyAgrees varies them
	minProcs := spinpolicy.MinProcs
	for _, c := range []struct {
		cfg   Config
		procs int
		want  time.Duration
	}{
		{Config{Workers: 1}, 8, knit.DefaultWorkerSpin},
		{Config{Workers: 1}, minProcs, knit.DefaultWorkerSpin},
		{Config{Workers: 1}, minProcs - 1, 0},
		{Config{}, 1, 0},        // GOMAXPROCS 1: one worker, too few Ps to spin
		{Config{}, minProcs, 0}, // GOMAXPROCS workers: two or more park at once
		{Config{Workers: 2}, 8, 0},
		{Config{Workers: 15}, 64, 0},
		{Config{Workers: 1, Park: knit.Park{Spin: -1}}, 8, 0},
		{Config{Workers: 1, Park: knit.Park{Spin: knit.NoSpin}}, 8, 0},
		{Config{Park: knit.Park{Spin: -1}}, 8, 0},
		{Config{Park: knit.Park{Spin: time.Millisecond}}, 1, time.Millisecond},
		{Config{Workers: 4, Park: knit.Park{Spin: time.Millisecond}}, 8, time.Millisecond},
	} {
		runtime.GOMAXPROCS(c.procs)
		if got := c.cfg.spinFor(c.cfg.workers()); got != c.want {
			t.Errorf("spinFor(%+v) at GOMAXPROCS %d = %v, want %v", c.cfg, c.procs, got, c.want)
		}
	}
}

// TestConfigPark: Config.Park.Backend is where the workers park, the zero
// Config's is the Go scheduler, and the park itself never spins, whatever
// Park.Spin says (the worker's own spin, spinForWork, comes before it).
func TestConfigPark(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want knit.Backend
	}{
		{Config{}, knit.BackendAuto},
		{Config{Workers: 1, Park: knit.Park{Spin: time.Millisecond}}, knit.BackendAuto},
		{Config{Workers: 2, Park: knit.Park{Backend: knit.BackendFutex}}, knit.BackendFutex},
		{Config{Workers: 1, Park: knit.Park{Spin: knit.NoSpin, Backend: knit.BackendFutex}}, knit.BackendFutex},
	} {
		p := New(c.cfg)
		if p.park.Backend != c.want || p.park.Spin != knit.NoSpin {
			t.Errorf("New(%+v) parks with %+v, want Backend %v and Spin knit.NoSpin", c.cfg, p.park, c.want)
		}
		p.Close()
	}
}

// TestZeroConfigWorkers: the zero Config starts GOMAXPROCS workers, and a
// single worker at GOMAXPROCS 1 gets the single-worker policy.
func TestZeroConfigWorkers(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		p := New(Config{})
		if s := p.Stats(); s.Workers != procs {
			t.Errorf("GOMAXPROCS %d: zero Config started %d workers", procs, s.Workers)
		}
		if p.set.Load().steal != (procs > 1) {
			t.Errorf("GOMAXPROCS %d: steal = %v", procs, p.set.Load().steal)
		}
		p.Close()
	}
}

// TestConfigBounds: New panics on a field outside its documented range,
// and the message names the field; the bounds themselves are accepted.
func TestConfigBounds(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string // "" : no panic
	}{
		{Config{Workers: -1}, "Config.Workers"},
		{Config{Workers: MaxWorkers + 1}, "Config.Workers"},
		{Config{Workers: 1, QueueSize: -1}, "Config.QueueSize"},
		{Config{Workers: 1, QueueSize: 1<<30 + 1}, "Config.QueueSize"},
		{Config{Workers: 1, QueueSize: 1}, ""},
		{Config{Workers: 3, QueueSize: 3}, ""},
		{Config{Workers: 1, Park: knit.Park{Spin: -5 * time.Second}}, ""},
	} {
		func() {
			defer func() {
				v := recover()
				switch {
				case c.want == "" && v != nil:
					t.Errorf("New(%+v) panicked: %v", c.cfg, v)
				case c.want != "" && v == nil:
					t.Errorf("New(%+v) did not panic", c.cfg)
				case c.want != "":
					msg, _ := v.(string)
					if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "pool: New") {
						t.Errorf("New(%+v) panicked with %q, want a message naming %s", c.cfg, msg, c.want)
					}
				}
			}()
			New(c.cfg).Close()
		}()
	}
}

// TestNoGoroutineLeak: pools of every shape, used through every API
// (nested waits included), leave nothing running after Close or
// Shutdown: neither the goroutine count nor any worker goroutine.
func TestNoGoroutineLeak(t *testing.T) {
	watchdog(t, 30*time.Second)
	runtime.GC()
	base := runtime.NumGoroutine()
	for _, c := range configs() {
		p := New(c.cfg)
		tk := NewTask(p, func(x int) int { return x })
		ctx := context.Background()
		for i := range 100 {
			if v, err := tk.Call(i).Wait(ctx); err != nil || v != i {
				t.Fatalf("%s: Call(%d) = %d, %v", c.name, i, v, err)
			}
			p.Go(func() {})
			f := Submit(ctx, p, func() (int, error) { return i, nil })
			<-f.Done()
			if v, err := f.Wait(ctx); err != nil || v != i {
				t.Fatalf("%s: Submit's Wait = %d, %v, want %d", c.name, v, err, i)
			}
		}
		g, _ := NewGroup(ctx, p)
		for range 50 {
			g.Go(func() error {
				_, err := Map(ctx, p, []int{1, 2, 3}, func(x int) (int, error) { return x, nil }) // nested
				return err
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if i := len(c.name); i%2 == 0 {
			p.Close()
		} else if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	checkNoLeak(t, base)
}

func TestNilFuncPanics(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	for name, f := range map[string]func(){
		"Go":      func() { p.Go(nil) },
		"TryGo":   func() { p.TryGo(nil) },
		"NewTask": func() { NewTask[int, int](p, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s(nil) did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestHintNoneStopsWorkerSpin: under knit.HintNone a worker never spins
// for work, even in a pool made with a spin budget before the choice
// changed; and a pool made under none resolves its budget to zero.
func TestHintNoneStopsWorkerSpin(t *testing.T) {
	watchdog(t, 60*time.Second)
	const budget = 20 * time.Second
	p := New(Config{Workers: 1, Park: knit.Park{Spin: budget}})
	defer p.Close()
	if err := knit.SetHint(knit.HintNone); err != nil {
		t.Fatal(err)
	}
	defer knit.SetHint(knit.HintAuto)
	// An idle worker's own spin would take the whole budget: the test's
	// call of it must return at once (a bound of half the budget leaves
	// any loaded machine room).
	start := time.Now()
	if j := p.workersNow()[0].spinForWork(budget); j != nil {
		t.Fatalf("spinForWork found a job in an idle pool: %v", j)
	}
	if el := time.Since(start); el >= budget/2 {
		t.Errorf("spinForWork under HintNone took %v of a %v budget", el, budget)
	}
	q := New(Config{Workers: 1, Park: knit.Park{Spin: budget}})
	defer q.Close()
	if q.set.Load().spin != 0 {
		t.Errorf("a pool made under HintNone with Park.Spin %v resolved it to %v, want 0", budget, q.set.Load().spin)
	}
}

// TestDoneContextDoesNothing: every pool call that takes a ctx does
// nothing when the ctx is done before the call and returns ctx.Err():
// GoContext, Submit and CallContext queue nothing, Map runs nothing, and Future.Wait
// and WaitAll take no result, even one that is ready, and leave their
// futures usable.
func TestDoneContextDoesNothing(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	var ran atomic.Int32
	if err := p.GoContext(done, func() { ran.Add(1) }); !errors.Is(err, context.Canceled) {
		t.Errorf("GoContext = %v", err)
	}
	if _, err := Submit(done, p, func() (int, error) { ran.Add(1); return 1, nil }).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Submit's Wait = %v", err)
	}
	if _, err := Map(done, p, []int{1, 2}, func(x int) (int, error) { ran.Add(1); return x, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Map = %v", err)
	}
	seq := func(yield func(int) bool) {
		ran.Add(1) // read from: a done ctx reads nothing
		yield(1)
	}
	if _, err := MapSeq(done, p, seq, func(x int) (int, error) { ran.Add(1); return x, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("MapSeq = %v", err)
	}
	yields := 0
	for _, err := range MapStream(done, p, seq, func(x int) (int, error) { ran.Add(1); return x, nil }) {
		if yields++; !errors.Is(err, context.Canceled) {
			t.Errorf("MapStream yielded %v", err)
		}
	}
	if yields != 1 {
		t.Errorf("MapStream with a done ctx yielded %d times, want once", yields)
	}
	for name, mk := range map[string]func(context.Context, *Pool) (*Group, context.Context){"NewGroup": NewGroup, "NewGroupCollect": NewGroupCollect} {
		g, _ := mk(done, p)
		g.Go(func() error { ran.Add(1); return nil })
		if g.TryGo(func() error { ran.Add(1); return nil }) {
			t.Errorf("%s: TryGo with a done ctx accepted the task", name)
		}
		if err := g.Wait(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Wait = %v", name, err)
		}
	}
	sq := NewTask(p, func(x int) int { return x * x })
	cc := NewTask(p, func(x int) int { ran.Add(1); return x })
	before := p.Stats().Submitted
	if _, err := cc.CallContext(done, 3).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("CallContext's Wait = %v", err)
	}
	if s := p.Stats(); s.Submitted != before {
		t.Errorf("CallContext with a done ctx queued a task: %+v", s)
	}
	f := sq.Call(3)
	fs := []Future[int]{sq.Call(4)}
	if v, err := f.Wait(ctx); v != 9 || err != nil { // the result is ready now
		t.Fatal(v, err)
	}
	f = sq.Call(5)
	for !eventually(10*time.Second, func() bool { return p.Stats().Completed >= 3 }) {
		t.Fatal("calls did not complete")
	}
	if _, err := f.Wait(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a done ctx on a ready result = %v", err)
	}
	if v, err := f.Wait(ctx); v != 25 || err != nil {
		t.Errorf("the Future after a Wait with a done ctx: %d, %v; want it usable", v, err)
	}
	out := make([]int, 1)
	if n, err := WaitAll(done, fs, out); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("WaitAll with a done ctx = %d, %v", n, err)
	}
	if n, err := WaitAll(ctx, fs, out); n != 1 || err != nil || out[0] != 16 {
		t.Errorf("WaitAll after one with a done ctx = %d, %v, %v", n, err, out)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d functions ran from calls with a done ctx", n)
	}
}

// TestRoomWakes: producers that outrun the workers wait for room, and a
// worker rings them once it has popped half a queue since it saw them
// waiting (worker.popped). With queues of 1, 2 and 4, one to three
// workers and more producers than workers, every task runs: a ring that
// came too late, or never, leaves a producer asleep beside empty queues,
// and the watchdog fires.
func TestRoomWakes(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, qs := range []int{1, 2, 4} {
		for _, w := range []int{1, 2, 3} {
			for _, noSteal := range []bool{false, true} {
				t.Run(fmt.Sprintf("q%d-w%d-nosteal=%v", qs, w, noSteal), func(t *testing.T) {
					p := New(Config{Workers: w, QueueSize: qs, NoSteal: noSteal})
					defer p.Close()
					const producers, each = 4, 3000
					var ran atomic.Int64
					var wg sync.WaitGroup
					for range producers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for k := range each {
								f := func() { ran.Add(1) }
								if k%7 == 0 {
									// A slower task now and then, so producers
									// fill the queues and wait.
									f = func() {
										for range 200 {
											_ = time.Now()
										}
										ran.Add(1)
									}
								}
								if err := p.Go(f); err != nil {
									t.Errorf("Go: %v", err)
									return
								}
							}
						}()
					}
					wg.Wait()
					if !eventually(20*time.Second, func() bool { return ran.Load() == producers*each }) {
						t.Fatalf("%d of %d tasks ran; stats %+v", ran.Load(), producers*each, p.Stats())
					}
				})
			}
		}
	}
}
