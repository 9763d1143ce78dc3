package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupSetLimit: with SetLimit(n), the group never has more than n
// tasks active (accepted and not finished: the model is a count the
// tasks keep, checked against the group's own after every Go), every
// task runs once, and on every pool shape.
func TestGroupSetLimit(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		for _, limit := range []int{1, 2, 3, 7} {
			g, _ := NewGroup(context.Background(), p)
			g.SetLimit(limit)
			n := scale(400)
			runs := make([]atomic.Int32, n)
			var running, maxRunning atomic.Int64
			for i := range n {
				g.Go(func() error {
					r := running.Add(1)
					for {
						m := maxRunning.Load()
						if r <= m || maxRunning.CompareAndSwap(m, r) {
							break
						}
					}
					if i%5 == 0 {
						busy(time.Duration(rand.IntN(20)) * time.Microsecond)
					}
					runs[i].Add(1)
					running.Add(-1)
					return nil
				})
				if a := g.pending.Load(); a > int64(limit) {
					t.Fatalf("limit %d: %d tasks active after Go", limit, a)
				}
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			if m := maxRunning.Load(); m > int64(limit) {
				t.Fatalf("limit %d: %d tasks ran at once", limit, m)
			}
			for i := range runs {
				if runs[i].Load() != 1 {
					t.Fatalf("limit %d: task %d ran %d times", limit, i, runs[i].Load())
				}
			}
		}
	})
}

// TestGroupTryGo: TryGo reports false at the limit and with every queue
// full, leaving the group's error alone, true with room; refused by a
// closed pool or a done context it reports false and the refusal is the
// group's error.
func TestGroupTryGo(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 1, QueueSize: 2})
	ctx := context.Background()
	g, _ := NewGroup(ctx, p)
	g.SetLimit(2)
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	block := func() error { entered <- struct{}{}; <-release; return nil }
	if !g.TryGo(block) || !g.TryGo(func() error { return nil }) {
		t.Fatal("TryGo below the limit returned false")
	}
	<-entered
	var ran atomic.Int32
	if g.TryGo(func() error { ran.Add(1); return nil }) {
		t.Fatal("TryGo at the limit returned true")
	}
	close(release)
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait after a TryGo at the limit = %v, want nil", err)
	}
	if ran.Load() != 0 {
		t.Fatal("a task TryGo turned away ran")
	}

	// No limit, every queue full: false, and no error.
	g2, _ := NewGroup(ctx, p)
	gt := newGate()
	p.Go(gt.block)
	<-gt.entered
	for p.TryGo(func() {}) {
	}
	if g2.TryGo(func() error { ran.Add(1); return nil }) {
		t.Fatal("TryGo with every queue full returned true")
	}
	close(gt.release)
	if err := g2.Wait(); err != nil {
		t.Fatalf("Wait after a TryGo on full queues = %v", err)
	}

	// A done context: false, and the context's cause is the group's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	g3, _ := NewGroup(cctx, p)
	if g3.TryGo(func() error { ran.Add(1); return nil }) {
		t.Fatal("TryGo with a done context returned true")
	}
	if err := g3.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after a TryGo with a done context = %v", err)
	}
	// A closed pool: false, and ErrClosed.
	p.Close()
	g4, _ := NewGroup(ctx, p)
	if g4.TryGo(func() error { ran.Add(1); return nil }) {
		t.Fatal("TryGo on a closed pool returned true")
	}
	if err := g4.Wait(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait after a TryGo on a closed pool = %v", err)
	}
	if ran.Load() != 0 {
		t.Fatalf("%d refused tasks ran", ran.Load())
	}
}

// TestGroupSetLimitRules: SetLimit(n >= 0) while tasks are active panics
// as errgroup's does; SetLimit(-1) while they are active removes the
// limit and frees a Go waiting on it; a limit of zero makes Go wait until
// the group's context ends, which refuses the task.
func TestGroupSetLimitRules(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	ctx := context.Background()
	g, _ := NewGroup(ctx, p)
	g.SetLimit(1)
	release := make(chan struct{})
	g.Go(func() error { <-release; return nil })
	func() {
		defer func() {
			msg, _ := recover().(string)
			if !strings.Contains(msg, "SetLimit(3) while 1 tasks") {
				t.Errorf("SetLimit while active: panic %q", msg)
			}
		}()
		g.SetLimit(3)
	}()
	second := make(chan struct{})
	go func() {
		g.Go(func() error { return nil }) // waits: the limit is 1
		close(second)
	}()
	if !eventually(10*time.Second, func() bool { return g.room.Waiters() > 0 }) {
		t.Fatal("the second Go did not wait at the limit")
	}
	select {
	case <-second:
		t.Fatal("Go returned at the limit")
	default:
	}
	g.SetLimit(-1) // allowed while active: frees the waiting Go
	<-second
	close(release)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	pctx, cancel := context.WithCancel(ctx)
	g0, _ := NewGroup(pctx, p)
	g0.SetLimit(0)
	var ran atomic.Int32
	done := make(chan struct{})
	go func() {
		g0.Go(func() error { ran.Add(1); return nil })
		close(done)
	}()
	if !eventually(10*time.Second, func() bool { return g0.room.Waiters() > 0 }) {
		t.Fatal("Go at a limit of zero did not wait")
	}
	cancel()
	<-done
	if err := g0.Wait(); !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Fatalf("limit 0: Wait = %v, %d ran", err, ran.Load())
	}
}

// TestGroupLimitNested: Go at the limit from a task of the pool's only
// worker runs the group's queued tasks instead of parking the worker.
func TestGroupLimitNested(t *testing.T) {
	watchdog(t, 20*time.Second)
	eachShape(t, nestShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		var ran atomic.Int64
		runNested(t, p, func(i int) error {
			g, _ := NewGroup(ctx, p)
			g.SetLimit(2)
			for range 50 {
				g.Go(func() error { ran.Add(1); return nil })
			}
			return g.Wait()
		})
		if want := int64(50 * len(p.workersNow())); ran.Load() != want {
			t.Fatalf("ran %d, want %d", ran.Load(), want)
		}
	})
}

// TestGroupCollect checks a collecting group against a model: every task
// runs (a failure skips nothing and cancels nothing), and Wait returns
// the errors of exactly the failing tasks, panics included, joined.
func TestGroupCollect(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		for _, limit := range []int{-1, 3} {
			g, gctx := NewGroupCollect(context.Background(), p)
			g.SetLimit(limit)
			n := scale(300)
			runs := make([]atomic.Int32, n)
			want := map[string]bool{}
			var sawCancel atomic.Bool
			for i := range n {
				kind := i % 7
				switch kind {
				case 3:
					want[fmt.Sprintf("task %d", i)] = true
				case 5:
					want[fmt.Sprintf("pool: task panicked: panic %d", i)] = true
				}
				g.Go(func() error {
					runs[i].Add(1)
					if gctx.Err() != nil {
						sawCancel.Store(true)
					}
					switch kind {
					case 3:
						return fmt.Errorf("task %d", i)
					case 5:
						panic(fmt.Sprintf("panic %d", i))
					}
					return nil
				})
			}
			err := g.Wait()
			for i := range runs {
				if runs[i].Load() != 1 {
					t.Fatalf("task %d ran %d times", i, runs[i].Load())
				}
			}
			if sawCancel.Load() {
				t.Fatal("a failure cancelled a collecting group's context")
			}
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("Wait = %v, want errors.Join's error", err)
			}
			got := map[string]bool{}
			for _, e := range joined.Unwrap() {
				if got[e.Error()] {
					t.Fatalf("error %q twice", e)
				}
				got[e.Error()] = true
			}
			if len(got) != len(want) {
				t.Fatalf("%d errors, want %d", len(got), len(want))
			}
			for e := range want {
				if !got[e] {
					t.Fatalf("missing error %q", e)
				}
			}
			var pe *PanicError
			if !errors.As(err, &pe) {
				t.Fatal("errors.As finds no *PanicError in the joined error")
			}
		}
		g, _ := NewGroupCollect(context.Background(), p)
		if err := g.Wait(); err != nil {
			t.Fatalf("empty collecting group: %v", err)
		}
	})
}

// TestGroupCollectRefusals: refusals are joined once each, however many
// tasks they turned away; tasks skipped because the parent ended add its
// cause once.
func TestGroupCollectRefusals(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	g, _ := NewGroupCollect(ctx, p)
	gt := newGate()
	g.Go(func() error { gt.block(); return errBoom })
	<-gt.entered
	var ran atomic.Int32
	for range 5 {
		g.Go(func() error { ran.Add(1); return nil })
	}
	cancel() // the five are skipped
	for range 3 {
		g.Go(func() error { ran.Add(1); return nil }) // refused
	}
	close(gt.release)
	err := g.Wait()
	es := err.(interface{ Unwrap() []error }).Unwrap()
	if len(es) != 2 || !errors.Is(err, errBoom) || !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Fatalf("Wait = %v (%d errors), %d ran; want errBoom and Canceled once", err, len(es), ran.Load())
	}
	if s := p.Stats(); s.SkippedCtx != 5 || s.Completed != 1 {
		t.Fatalf("stats %+v", s)
	}
	p.Close()
	g2, _ := NewGroupCollect(context.Background(), p)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); g2.Go(func() error { return nil }) }()
	}
	wg.Wait()
	if err := g2.Wait(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 1 || !errors.Is(err, ErrClosed) {
		t.Fatalf("closed pool: Wait = %v, want ErrClosed once", err)
	}
}
