package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupRunsAll: every task runs once, Wait returns nil, and the
// group's context ends when Wait returns, on every pool shape.
func TestGroupRunsAll(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		for _, n := range []int{0, 1, 7, scale(5000)} {
			g, ctx := NewGroup(context.Background(), p)
			runs := make([]atomic.Int32, n)
			for i := range n {
				g.Go(func() error { runs[i].Add(1); return nil })
			}
			if ctx.Err() != nil {
				t.Fatal("group context done before Wait")
			}
			if err := g.Wait(); err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			for i := range runs {
				if runs[i].Load() != 1 {
					t.Fatalf("n=%d: task %d ran %d times", n, i, runs[i].Load())
				}
			}
			if !errors.Is(ctx.Err(), context.Canceled) {
				t.Fatalf("group context after Wait: %v", ctx.Err())
			}
		}
	})
}

// TestGroupFirstError: Wait returns the first error, the context's cause
// is that error, and tasks still queued when it failed do not run.
func TestGroupFirstError(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	g, ctx := NewGroup(context.Background(), p)
	release := make(chan struct{})
	g.Go(func() error { <-release; return errBoom })
	var later atomic.Int32
	for range 10 {
		g.Go(func() error { later.Add(1); return errors.New("later") })
	}
	close(release)
	if err := g.Wait(); err != errBoom {
		t.Fatalf("Wait = %v, want the first error", err)
	}
	if context.Cause(ctx) != errBoom {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
	if later.Load() != 0 {
		t.Fatalf("%d tasks queued behind the failure ran", later.Load())
	}
}

// TestGroupPanic: a panic fails the group as a *PanicError with the stack.
func TestGroupPanic(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	g, _ := NewGroup(context.Background(), p)
	g.Go(func() error { panic("group task") })
	err := g.Wait()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "group task" || !bytes.Contains(pe.Stack, []byte("TestGroupPanic")) {
		t.Fatalf("Wait = %v", err)
	}
}

// TestGroupRefusals: Go on a closed pool and Go with a cancelled parent
// context make the refusal the group's error, and the task does not run.
func TestGroupRefusals(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	g, _ := NewGroup(ctx, p)
	cancel()
	g.Go(func() error { t.Error("ran with a cancelled context"); return nil })
	if err := g.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled parent: %v", err)
	}
	p.Close()
	g2, _ := NewGroup(context.Background(), p)
	g2.Go(func() error { t.Error("ran after Close"); return nil })
	if err := g2.Wait(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed pool: %v", err)
	}
}

// TestGroupParentCancelledWhileQueued: tasks queued when the parent
// context ends are skipped, and the group's error is the cancellation.
func TestGroupParentCancelledWhileQueued(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	g, _ := NewGroup(ctx, p)
	entered, release := make(chan struct{}), make(chan struct{})
	g.Go(func() error { close(entered); <-release; return nil })
	<-entered
	var ran atomic.Int32
	for range 5 {
		g.Go(func() error { ran.Add(1); return nil })
	}
	cancel()
	close(release)
	if err := g.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v", err)
	}
	if ran.Load() != 0 {
		t.Fatalf("%d tasks ran after the parent was cancelled", ran.Load())
	}
}

// TestGroupBounded: a group never has more tasks outstanding than the
// queues hold plus one running per worker, and makes no goroutines.
func TestGroupBounded(t *testing.T) {
	watchdog(t, 20*time.Second)
	const workers, qs = 2, 4
	p := New(Config{Workers: workers, QueueSize: qs})
	defer p.Close()
	spawns := watchSpawns()
	g, _ := NewGroup(context.Background(), p)
	var finished, maxOut atomic.Int64
	for i := range scale(3000) {
		g.Go(func() error {
			spawns.check()
			time.Sleep(time.Duration(i%3) * time.Microsecond) // tasks of uneven length
			finished.Add(1)
			return nil
		})
		if out := int64(i+1) - finished.Load(); out > maxOut.Load() {
			maxOut.Store(out)
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if limit := int64(workers * (qs + 1)); maxOut.Load() > limit {
		t.Fatalf("%d tasks outstanding, more than the %d the queues and workers hold", maxOut.Load(), limit)
	}
	// Only this goroutine waits (in Go, while the queues are full).
	spawns.report(t, "the group")
}

// TestGroupConcurrentGo: tasks added from several goroutines and from the
// group's own tasks are all waited for.
func TestGroupConcurrentGo(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		g, _ := NewGroup(context.Background(), p)
		var ran atomic.Int64
		var wg sync.WaitGroup
		const adders = 4
		per := scale(500)
		for range adders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per {
					g.Go(func() error {
						g.Go(func() error { ran.Add(1); return nil }) // from a task
						ran.Add(1)
						return nil
					})
				}
			}()
		}
		wg.Wait()
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if want := int64(2 * adders * per); ran.Load() != want {
			t.Fatalf("ran %d, want %d", ran.Load(), want)
		}
	})
}

func TestGroupMisuse(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	g, _ := NewGroup(context.Background(), p)
	for name, f := range map[string]func(){
		"Go(nil)":          func() { g.Go(nil) },
		"zero Group Go":    func() { new(Group).Go(func() error { return nil }) },
		"zero Group Wait":  func() { new(Group).Wait() },
		"TryGo(nil)":       func() { g.TryGo(nil) },
		"zero Group TryGo": func() { new(Group).TryGo(func() error { return nil }) },
		"zero SetLimit":    func() { new(Group).SetLimit(1) },
		"Collect nil ctx":  func() { NewGroupCollect(nil, p) }, //lint:ignore SA1012 the nil is the point
		"NewGroup nil ctx": func() { NewGroup(nil, p) },        //lint:ignore SA1012 the nil is the point
		"NewGroup nil p":   func() { NewGroup(context.Background(), nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestGroupsAndMapsRaceClose: groups, maps and nested submits run from
// several goroutines while the pool is closed (or shut down with a short
// deadline) at a random moment. Nothing hangs; a Map returns all its
// results or ErrClosed; a group returns nil only if every task ran, and
// no task runs twice.
func TestGroupsAndMapsRaceClose(t *testing.T) {
	watchdog(t, 60*time.Second)
	for round := range scale(60) {
		c := configs()[round%len(configs())]
		p := New(c.cfg)
		ctx := context.Background()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					in := make([]int, 50+k%200)
					for i := range in {
						in[i] = i
					}
					out, err := Map(ctx, p, in, func(x int) (int, error) { return x + g, nil })
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("Map: %v", err)
						}
						return
					}
					for i, v := range out {
						if v != i+g {
							t.Errorf("Map out[%d] = %d", i, v)
							return
						}
					}
					grp, _ := NewGroup(ctx, p)
					runs := make([]atomic.Int32, 30)
					for i := range runs {
						grp.Go(func() error {
							runs[i].Add(1)
							// Nested: a submit and a wait on the same pool.
							f := Submit(ctx, p, func() (int, error) { return i, nil })
							if v, err := f.Wait(ctx); err != nil && !errors.Is(err, ErrClosed) || err == nil && v != i {
								return fmt.Errorf("nested Submit: %v, %v", v, err)
							}
							return nil
						})
					}
					err = grp.Wait()
					for i := range runs {
						if n := runs[i].Load(); n > 1 || err == nil && n != 1 {
							t.Errorf("group task %d ran %d times (Wait: %v)", i, n, err)
						}
					}
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("group: %v", err)
						}
						return
					}
				}
			}()
		}
		// Close at a random moment; the checks hold at any.
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		if round%2 == 0 {
			p.Close()
		} else {
			sctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(500))*time.Microsecond)
			p.Shutdown(sctx)
			cancel()
			p.Close()
		}
		wg.Wait()
	}
}
