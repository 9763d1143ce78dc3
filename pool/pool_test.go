package pool

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
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
	p := New(Config{})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	defer func() {
		if recover() == nil {
			t.Fatal("CallBatch with a short out did not panic")
		}
	}()
	tk.CallBatch([]int{1, 2}, make([]Future[int], 1))
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
	p := New(Config{QueueSize: 4})
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
		p.Go(func() { time.Sleep(10 * time.Microsecond); ran.Add(1) })
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
		{"w1-default", Config{}},
		{"w1-spin1ms", Config{Spin: time.Millisecond}},
		{"w4", Config{Workers: 4}},
		{"w4-spin", Config{Workers: 4, Spin: 100 * time.Microsecond}},
		{"w4-nosteal", Config{Workers: 4, NoSteal: true}},
		{"w2-futex", Config{Workers: 2, Backend: knit.BackendFutex}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			n := len(p.workers)
			tk := NewTask(p, func(x int) int { return x })
			for i := range 50 {
				tk.Call(i).Wait(context.Background())
			}
			// Settle: a worker readied by the last call's ring may still
			// show as parked until it runs, wakes and parks again. Wait
			// for two snapshots 20 ms apart to agree with all parked.
			var before Stats
			if !eventually(10*time.Second, func() bool {
				s1 := p.Stats()
				time.Sleep(20 * time.Millisecond)
				before = p.Stats()
				return s1 == before && before.Parked == n
			}) {
				t.Fatalf("workers not parked: %+v", p.Stats())
			}
			bell := &p.bell
			if !p.steal {
				bell = &p.workers[0].bell
			}
			if bell.Waiters() == 0 {
				t.Fatal("parked, but no waiter registered on the doorbell")
			}
			// Parked for good: no polling timeout wakes anyone.
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
	p := New(Config{Spin: 20 * time.Millisecond})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	for i := range 200 {
		tk.Call(i).Wait(context.Background())
	}
	if s := p.Stats(); s.SpinHits == 0 {
		t.Fatalf("no spin hit in 200 back-to-back calls: %+v", s)
	}
	p2 := New(Config{Spin: -1})
	defer p2.Close()
	tk2 := NewTask(p2, func(x int) int { return x })
	for i := range 50 {
		tk2.Call(i).Wait(context.Background())
	}
	if s := p2.Stats(); s.SpinHits != 0 {
		t.Fatalf("spin hits with Spin < 0: %+v", s)
	}
}

func TestSpinPolicy(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, c := range []struct {
		cfg   Config
		procs int
		want  time.Duration
	}{
		{Config{}, 8, DefaultSpin},
		{Config{}, minProcsToSpin, DefaultSpin},
		{Config{}, minProcsToSpin - 1, 0},
		{Config{Workers: 2}, 8, 0},
		{Config{Workers: 15}, 64, 0},
		{Config{Spin: -1}, 8, 0},
		{Config{Spin: time.Millisecond}, 1, time.Millisecond},
		{Config{Workers: 4, Spin: time.Millisecond}, 8, time.Millisecond},
	} {
		runtime.GOMAXPROCS(c.procs)
		if got := c.cfg.spinFor(max(c.cfg.Workers, 1)); got != c.want {
			t.Errorf("spinFor(%+v) at GOMAXPROCS %d = %v, want %v", c.cfg, c.procs, got, c.want)
		}
	}
}

// TestNoGoroutineLeak: pools of every shape leave nothing running after
// Close or Shutdown.
func TestNoGoroutineLeak(t *testing.T) {
	watchdog(t, 30*time.Second)
	runtime.GC()
	base := runtime.NumGoroutine()
	for _, c := range configs() {
		p := New(c.cfg)
		tk := NewTask(p, func(x int) int { return x })
		for i := range 100 {
			tk.Call(i).Wait(context.Background())
			p.Go(func() {})
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
	p := New(Config{})
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
