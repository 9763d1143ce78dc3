package pool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// The nesting tests run tasks that wait on their own pool. Done the plain
// way each would park its worker for good; the pool must run the awaited
// tasks on the waiting workers instead. They run at one worker, and at two
// workers with both workers nesting at once (each outer task waits at a
// barrier until the other has started, so neither worker is free to run
// the inner tasks). A failure is a hang, which the watchdog turns into a
// goroutine dump.

// nestShapes are the pools the nesting tests run on.
func nestShapes() []shape {
	return []shape{
		{"w1", Config{Workers: 1}},
		{"w1-q1", Config{Workers: 1, QueueSize: 1}},
		{"w2", Config{Workers: 2}},
		{"w2-q2", Config{Workers: 2, QueueSize: 2}},
		{"w2-nosteal", Config{Workers: 2, NoSteal: true}},
		{"w2-spin", Config{Workers: 2, Park: knit.Park{Spin: 20 * time.Microsecond}}},
	}
}

// runNested runs outer on every worker of p at once (each call starts
// only when all have started, so every worker is inside outer) and
// returns their errors.
func runNested(t *testing.T, p *Pool, outer func(i int) error) {
	t.Helper()
	n := len(p.workersNow())
	var barrier sync.WaitGroup
	barrier.Add(n)
	errs := make([]error, n)
	var done sync.WaitGroup
	done.Add(n)
	for i := range n {
		if err := p.Go(func() {
			defer done.Done()
			barrier.Done()
			barrier.Wait()
			errs[i] = outer(i)
		}); err != nil {
			t.Fatal(err)
		}
	}
	done.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("outer task %d: %v", i, err)
		}
	}
}

func TestNestedFutureWait(t *testing.T) {
	watchdog(t, 20*time.Second)
	eachShape(t, nestShapes(), func(t *testing.T, p *Pool) {
		sq := NewTask(p, func(x int) int { return x * x })
		ctx := context.Background()
		runNested(t, p, func(i int) error {
			for k := range 50 {
				if v, err := sq.Call(k).Wait(ctx); v != k*k || err != nil {
					return fmt.Errorf("Call(%d) = %v, %v", k, v, err)
				}
				f := Submit(ctx, p, func() (int, error) { return k + i, nil })
				if v, err := f.Wait(ctx); v != k+i || err != nil {
					return fmt.Errorf("Submit %d = %v, %v", k, v, err)
				}
			}
			// Several in flight, more than the queues hold.
			fs := make([]Future[int], 20)
			for k := range fs {
				fs[k] = Submit(ctx, p, func() (int, error) { return k, nil })
			}
			for k, f := range fs {
				if v, err := f.Wait(ctx); v != k || err != nil {
					return fmt.Errorf("batch %d = %v, %v", k, v, err)
				}
			}
			return nil
		})
	})
}

func TestNestedGroupAndMap(t *testing.T) {
	watchdog(t, 20*time.Second)
	eachShape(t, nestShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		runNested(t, p, func(i int) error {
			g, _ := NewGroup(ctx, p)
			var ran atomic.Int32
			for range 40 {
				g.Go(func() error { ran.Add(1); return nil })
			}
			if err := g.Wait(); err != nil || ran.Load() != 40 {
				return fmt.Errorf("group: %v, ran %d", err, ran.Load())
			}
			in := make([]int, 300)
			for k := range in {
				in[k] = k
			}
			out, err := Map(ctx, p, in, func(x int) (int, error) { return x + i, nil })
			if err != nil {
				return err
			}
			for k, v := range out {
				if v != k+i {
					return fmt.Errorf("Map out[%d] = %d", k, v)
				}
			}
			return nil
		})
	})
}

// TestNestedBlockingSubmit: a task submitting more than the queues hold
// to its own pool runs queued tasks instead of waiting for room.
func TestNestedBlockingSubmit(t *testing.T) {
	watchdog(t, 20*time.Second)
	eachShape(t, nestShapes(), func(t *testing.T, p *Pool) {
		tk := NewTask(p, func(x int) int { return x })
		var ran atomic.Int64
		inc := func() { ran.Add(1) }
		runNested(t, p, func(i int) error {
			for range 100 {
				if err := p.Go(inc); err != nil {
					return err
				}
			}
			ins := make([]int, 200)
			outs := make([]Future[int], 200)
			if n := tk.CallBatch(ins, outs); n != len(ins) {
				return fmt.Errorf("CallBatch accepted %d", n)
			}
			for _, f := range outs {
				if _, err := f.Wait(context.Background()); err != nil {
					return err
				}
			}
			g, _ := NewGroup(context.Background(), p)
			for range 100 {
				g.Go(func() error { inc(); return nil })
			}
			return g.Wait()
		})
		p.Close()
		if want := int64(200 * len(p.workersNow())); ran.Load() != want {
			t.Fatalf("ran %d, want %d", ran.Load(), want)
		}
	})
}

// TestNestedRecursive: a recursive computation, every level waiting on
// the next, on one and two workers.
func TestNestedRecursive(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, nestShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		var fib func(n int) (int, error)
		fib = func(n int) (int, error) {
			if n < 2 {
				return n, nil
			}
			a := Submit(ctx, p, func() (int, error) { return fib(n - 1) })
			b, err := fib(n - 2)
			if err != nil {
				return 0, err
			}
			va, err := a.Wait(ctx)
			return va + b, err
		}
		v, err := Submit(ctx, p, func() (int, error) { return fib(16) }).Wait(ctx)
		if v != 987 || err != nil {
			t.Fatalf("fib(16) = %v, %v", v, err)
		}
	})
}

// TestNestedWakesOnNewWork: a group task holds worker B until a task
// that is not queued yet runs, while worker A parks in the group's Wait.
// The unblocking task is queued from outside only once A has parked: no
// worker is idle, so the publish must wake A, parked in a wait of its
// own. (At one worker the shape cannot exist: a task that blocks until a
// later task runs holds the only worker, nested or not.)
func TestNestedWakesOnNewWork(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []Config{{Workers: 2}, {Workers: 2, NoSteal: true}, {Workers: 2, QueueSize: 1}} {
		t.Run(fmt.Sprintf("nosteal=%v,q=%d", c.NoSteal, c.QueueSize), func(t *testing.T) {
			for range scale(20) {
				p := New(c)
				g, _ := NewGroup(context.Background(), p)
				unblock := make(chan struct{})
				entered := make(chan struct{})
				g.Go(func() error { // round-robin: worker 0's queue
					close(entered)
					<-unblock
					return nil
				})
				<-entered
				outer := make(chan error, 1)
				p.Go(func() { outer <- g.Wait() }) // worker 1's queue
				// Until A is in its wait; the watchdog is the deadline.
				for p.set.Load().b0.nested.Load() == 0 {
					time.Sleep(100 * time.Microsecond)
				}
				if c.NoSteal {
					p.Go(func() {}) // worker 0's queue: the next lands on worker 1's
				}
				g.Go(func() error { close(unblock); return nil })
				if err := <-outer; err != nil {
					t.Fatal(err)
				}
				p.Close()
			}
		})
	}
}

// TestCloseFromTaskPanics: Close and Shutdown called from a task panic
// with a message saying why, instead of waiting for themselves.
func TestCloseFromTaskPanics(t *testing.T) {
	watchdog(t, 10*time.Second)
	for _, method := range []string{"Close", "Shutdown"} {
		p := New(Config{Workers: 1})
		msg := make(chan string, 1)
		p.Go(func() {
			defer func() {
				s, _ := recover().(string)
				msg <- s
			}()
			if method == "Close" {
				p.Close()
			} else {
				p.Shutdown(context.Background())
			}
		})
		got := <-msg
		if !strings.Contains(got, method+" called from a task") {
			t.Errorf("%s from a task: panic %q", method, got)
		}
		p.Close() // from outside: fine
	}
}

// TestNestedCtx: a nested Wait still honours its context. The call it
// waits for is running on the other worker, blocked until the test lets
// it go, and nothing is queued: the waiting worker has nothing to help
// with, parks, and only its context can end the wait. (At one worker the
// wait would run the call itself, and a running task is never cut short.)
func TestNestedCtx(t *testing.T) {
	watchdog(t, 10*time.Second)
	for _, c := range []Config{{Workers: 2}, {Workers: 2, NoSteal: true}} {
		p := New(c)
		res := make(chan error, 1)
		started, release := make(chan struct{}), make(chan struct{})
		if c.NoSteal {
			p.Go(func() {}) // round-robin: worker 0; the outer task goes to worker 1, its call to worker 0
		}
		p.Go(func() {
			f := Submit(context.Background(), p, func() (int, error) {
				close(started)
				<-release
				return 0, nil
			})
			<-started // the call runs on the other worker, so this one is free to wait
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			_, err := f.Wait(ctx)
			res <- err
		})
		if err := <-res; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("NoSteal %v: nested Wait past its deadline: %v", c.NoSteal, err)
		}
		close(release)
		p.Close()
	}
}
