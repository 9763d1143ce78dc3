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

// TestSubmitResults: values, errors unchanged, panics with their stack,
// on every pool shape.
func TestSubmitResults(t *testing.T) {
	watchdog(t, 20*time.Second)
	ctx := context.Background()
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		for i := range scale(500) {
			f := Submit(ctx, p, func() (string, error) { return fmt.Sprint(i), nil })
			if v, err := f.Wait(ctx); v != fmt.Sprint(i) || err != nil {
				t.Fatalf("call %d: %q, %v", i, v, err)
			}
		}
		wrapped := fmt.Errorf("wrapped: %w", errBoom)
		if _, err := Submit(ctx, p, func() (int, error) { return 7, wrapped }).Wait(ctx); err != wrapped || !errors.Is(err, errBoom) {
			t.Fatalf("error not returned unchanged: %v", err)
		}
		_, err := Submit(ctx, p, func() (int, error) { panic("bad") }).Wait(ctx)
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "bad" || !bytes.Contains(pe.Stack, []byte("TestSubmitResults")) {
			t.Fatalf("panic: %v", err)
		}
		if _, err := Submit(ctx, p, func() (int, error) { panic(errBoom) }).Wait(ctx); !errors.Is(err, errBoom) {
			t.Fatalf("panic(err) does not unwrap: %v", err)
		}
		p.Close()
		if s := p.Stats(); s.Panicked != 2 || s.Completed != s.Submitted {
			t.Fatalf("stats %+v", s)
		}
	})
}

// TestSubmitRefused: after Close, Wait returns ErrClosed at once and fn
// never runs; a ctx done before Submit gives ctx.Err(), fn never runs.
func TestSubmitRefused(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := Submit(ctx, p, func() (int, error) { t.Error("ran with a cancelled ctx"); return 0, nil })
	if _, err := f.Wait(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
	p.Close()
	f = Submit(context.Background(), p, func() (int, error) { t.Error("ran after Close"); return 0, nil })
	select {
	case <-f.Done():
	default:
		t.Fatal("Done of a refused call is not closed")
	}
	if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestSubmitCtxWhileFull: a Submit waiting for room gives up when its ctx
// ends (fn never runs, Wait returns ctx.Err()); a call queued behind a
// busy worker whose ctx ends before it is taken is given up too.
func TestSubmitCtxWhileFull(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1, QueueSize: 1})
	g := newGate()
	p.Go(g.block)
	<-g.entered
	var ran atomic.Int32
	qctx, qcancel := context.WithCancel(context.Background())
	queued := Submit(qctx, p, func() (int, error) { ran.Add(1); return 1, nil }) // fills the queue

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	blocked := Submit(ctx, p, func() (int, error) { ran.Add(1); return 2, nil })
	// Returned only once ctx ended: a clock read here instead would fail
	// whenever this goroutine is held off the CPU after WithTimeout.
	if ctx.Err() == nil {
		t.Fatal("Submit returned before its context ended although the queue was full")
	}
	if _, err := blocked.Wait(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("given up while full: %v", err)
	}
	qcancel()
	close(g.release)
	if _, err := queued.Wait(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("given up while queued: %v", err)
	}
	p.Close()
	if ran.Load() != 0 {
		t.Fatalf("%d given-up calls ran", ran.Load())
	}
}

// TestSubmitAllocs: Submit+Wait allocates at most the caller's closure; a
// closure that captures nothing makes it allocation-free. Future.Done is
// the only part that allocates, and only when called.
func TestSubmitAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		static := func() (int, error) { return 3, nil }
		for range 100 {
			if v, err := Submit(ctx, p, static).Wait(ctx); v != 3 || err != nil {
				t.Fatal(v, err)
			}
		}
		if a := testing.AllocsPerRun(500, func() {
			if v, err := Submit(ctx, p, static).Wait(ctx); v != 3 || err != nil {
				t.Fatal(v, err)
			}
		}); a != 0 {
			t.Errorf("Submit+Wait, static closure: %v allocs", a)
		}
		x := 0
		if a := testing.AllocsPerRun(500, func() {
			x++
			y := x
			if v, err := Submit(ctx, p, func() (int, error) { return y, nil }).Wait(ctx); v != y || err != nil {
				t.Fatal(v, err)
			}
		}); a > 1 {
			t.Errorf("Submit+Wait, capturing closure: %v allocs, want <= 1", a)
		}
		fs := make([]Future[int], 64)
		if a := testing.AllocsPerRun(50, func() {
			for i := range fs {
				fs[i] = Submit(ctx, p, static)
			}
			for _, f := range fs {
				if v, err := f.Wait(ctx); v != 3 || err != nil {
					t.Fatal(v, err)
				}
			}
		}); a != 0 {
			t.Errorf("64 Submits, then 64 Waits: %v allocs", a)
		}
	})
}

// TestSubmitExactlyOnce: many submitters, Close at a random moment.
// Every call either ran exactly once and returned its value, or was
// refused with ErrClosed and never ran.
func TestSubmitExactlyOnce(t *testing.T) {
	watchdog(t, 60*time.Second)
	for round := range scale(40) {
		c := configs()[round%len(configs())]
		p := New(c.cfg)
		const submitters = 4
		per := scale(400)
		runs := make([]atomic.Int32, submitters*per)
		var got, refused atomic.Int64
		var wg sync.WaitGroup
		for s := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for i := range per {
					id := s*per + i
					f := Submit(ctx, p, func() (int, error) { runs[id].Add(1); return id, nil })
					v, err := f.Wait(ctx)
					switch {
					case err == nil && v == id:
						got.Add(1)
					case errors.Is(err, ErrClosed):
						refused.Add(1)
						if runs[id].Load() != 0 {
							t.Errorf("call %d refused but ran", id)
						}
					default:
						t.Errorf("call %d: %v, %v", id, v, err)
					}
				}
			}()
		}
		// Close at a random moment; the accounting holds at any.
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		p.Close()
		wg.Wait()
		ran := 0
		for i := range runs {
			switch runs[i].Load() {
			case 0:
			case 1:
				ran++
			default:
				t.Fatalf("call %d ran %d times", i, runs[i].Load())
			}
		}
		if int64(ran) != got.Load() || got.Load()+refused.Load() != int64(len(runs)) {
			t.Fatalf("%s: ran %d, returned %d, refused %d of %d", c.name, ran, got.Load(), refused.Load(), len(runs))
		}
	}
}

// TestSubmitShutdownAbandons: a Submit still queued when Shutdown's
// context ends fails with ErrClosed and never runs.
func TestSubmitShutdownAbandons(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1})
	g := newGate()
	p.Go(g.block)
	<-g.entered
	f := Submit(context.Background(), p, func() (int, error) { t.Error("abandoned call ran"); return 0, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := p.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown returned nil with a blocked worker")
	}
	if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("abandoned: %v", err)
	}
	close(g.release)
	p.Close()
}

// TestFutureDone: Done is closed once the result is ready, for Submit and
// Task.Call futures; after the value is taken; for a refused call. The
// zero Future's is nil. Copies share the channel.
func TestFutureDone(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	ctx := context.Background()
	isClosed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	if c := (Future[int]{}).Done(); c != nil {
		t.Fatal("zero Future's Done is not nil") // a nil channel: see TestZeroFuture
	}

	g := newGate()
	p.Go(g.block)
	<-g.entered
	f := Submit(ctx, p, func() (int, error) { return 5, nil })
	tf := NewTask(p, func(x int) int { return x }).Call(6)
	d1, d2 := f.Done(), f.Done()
	if d1 != d2 {
		t.Fatal("two Dones of one call return different channels")
	}
	if isClosed(d1) || isClosed(tf.Done()) {
		t.Fatal("Done closed while the call is queued")
	}
	close(g.release)
	select {
	case <-d1:
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the call ran")
	}
	<-tf.Done()
	if v, err := f.Wait(ctx); v != 5 || err != nil {
		t.Fatal(v, err)
	}
	if v, err := tf.Wait(ctx); v != 6 || err != nil {
		t.Fatal(v, err)
	}
	if !isClosed(f.Done()) {
		t.Fatal("Done open after the value was taken")
	}
	// The slot is recycled: the next call on it gets a fresh channel.
	f2 := Submit(ctx, p, func() (int, error) { return 7, nil })
	<-f2.Done()
	if v, err := f2.Wait(ctx); v != 7 || err != nil {
		t.Fatal(v, err)
	}
}

// TestFutureDoneRace: Done on one copy while another goroutine Waits on
// another copy, and calls recycle their slots all the while: every Done
// channel closes, and nothing races.
func TestFutureDoneRace(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		for i := range scale(3000) {
			f := Submit(ctx, p, func() (int, error) { return i, nil })
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				if v, err := f.Wait(ctx); v != i || err != nil {
					t.Errorf("call %d: %v, %v", i, v, err)
				}
			}()
			select {
			case <-f.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("call %d: Done never closed", i)
			}
			wg.Wait()
		}
	})
}

// TestCallContext: CallContext gives up when its context ends while the
// queues are full (fn does not run, the Future reports ctx.Err(), nothing
// is counted as submitted); with room it is Call; on a closed pool its
// Future reports ErrClosed.
func TestCallContext(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []Config{{Workers: 1, QueueSize: 1}, {Workers: 2, QueueSize: 1}, {Workers: 2, QueueSize: 1, NoSteal: true}} {
		t.Run(fmt.Sprintf("w%d-nosteal=%v", c.Workers, c.NoSteal), func(t *testing.T) {
			p := New(c)
			var ran atomic.Int32
			tk := NewTask(p, func(x int) int { ran.Add(1); return x * 2 })
			ctx := context.Background()
			if v, err := tk.CallContext(ctx, 4).Wait(ctx); v != 8 || err != nil {
				t.Fatalf("CallContext with room = %v, %v", v, err)
			}
			g := newGate()
			for range c.Workers {
				p.Go(g.block)
			}
			for range c.Workers {
				<-g.entered
			}
			for p.TryGo(func() {}) { // fill every queue
			}
			before := p.Stats()
			cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
			defer cancel()
			f := tk.CallContext(cctx, 1)
			if cctx.Err() == nil {
				t.Fatal("CallContext returned before its context ended, with every queue full")
			}
			if _, err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("given-up call's Wait = %v", err)
			}
			if _, err := f.Wait(ctx); !errors.Is(err, ErrFutureUsed) {
				t.Fatalf("second Wait = %v", err) // the slot was recycled
			}
			if s := p.Stats(); s.Submitted != before.Submitted {
				t.Fatalf("Submitted %d -> %d: a given-up call was counted", before.Submitted, s.Submitted)
			}
			close(g.release)
			if v, err := tk.CallContext(ctx, 5).Wait(ctx); v != 10 || err != nil {
				t.Fatalf("CallContext after the queues drained = %v, %v", v, err)
			}
			p.Close()
			if n := ran.Load(); n != 2 {
				t.Fatalf("fn ran %d times, want 2", n)
			}
			if _, err := tk.CallContext(ctx, 6).Wait(ctx); !errors.Is(err, ErrClosed) {
				t.Fatalf("CallContext on a closed pool = %v", err)
			}
		})
	}
}
