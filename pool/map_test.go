package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestMapOrder: results in input order, each element called once, for
// lengths around the run sizes, on every pool shape.
func TestMapOrder(t *testing.T) {
	watchdog(t, 30*time.Second)
	ctx := context.Background()
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		for _, n := range []int{0, 1, 2, 63, 64, 65, 1000, scale(20000)} {
			in := make([]int, n)
			for i := range in {
				in[i] = i
			}
			calls := make([]atomic.Int32, n)
			out, err := Map(ctx, p, in, func(x int) (string, error) {
				calls[x].Add(1)
				return fmt.Sprint(x * 3), nil
			})
			if err != nil || len(out) != n || out == nil {
				t.Fatalf("n=%d: len %d, nil %v, err %v", n, len(out), out == nil, err)
			}
			for i := range out {
				if out[i] != fmt.Sprint(i*3) || calls[i].Load() != 1 {
					t.Fatalf("n=%d: out[%d] = %q after %d calls", n, i, out[i], calls[i].Load())
				}
			}
		}
	})
}

// TestMapFirstErrorSkipsRest: with one worker the elements run in order,
// so the calls stop right after the failing one.
func TestMapFirstErrorSkipsRest(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	in := make([]int, 5000)
	for i := range in {
		in[i] = i
	}
	var calls atomic.Int32
	out, err := Map(context.Background(), p, in, func(x int) (int, error) {
		calls.Add(1)
		if x == 10 {
			return 0, errBoom
		}
		return x, nil
	})
	if err != errBoom || out != nil {
		t.Fatalf("Map = %v, %v; want nil, the error", out, err)
	}
	if calls.Load() != 11 {
		t.Fatalf("%d calls, want 11: the rest must be skipped", calls.Load())
	}
}

// TestMapErrorParallel: with several workers, the first error is
// returned and the elements not yet started are skipped. How many run
// between the failing call's return and the moment its job records the
// error depends on the scheduler (a worker preempted there lets the
// others run on), so the check is that the run stopped well short of the
// end, with elements that take a few microseconds each. The input is long
// enough that half of it is at least a quarter second of the other
// workers' calls: with 20,000 elements, half (10 ms of calls) was once
// overrun under qemu-aarch64 (12,068 calls), while a Map that never
// stopped would make all 2^20 calls and fail here whatever the timing.
// A Map that stops costs the same at any length.
func TestMapErrorParallel(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		in := make([]int, 1<<20)
		var calls atomic.Int32
		_, err := Map(context.Background(), p, in, func(int) (int, error) {
			if calls.Add(1) == 100 {
				return 0, errBoom
			}
			busy(2 * time.Microsecond)
			return 0, nil
		})
		if err != errBoom {
			t.Fatalf("Map error %v", err)
		}
		if n := calls.Load(); n > int32(len(in))/2 {
			t.Fatalf("%d calls of %d after the failure at 100", n, len(in))
		}
	})
}

// busy spins for about d without yielding.
func busy(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestMapPanic: a panic comes back as a *PanicError; the pool survives.
func TestMapPanic(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	_, err := Map(context.Background(), p, []int{1, 2, 3}, func(x int) (int, error) {
		if x == 2 {
			panic(errBoom)
		}
		return x, nil
	})
	var pe *PanicError
	if !errors.As(err, &pe) || !errors.Is(err, errBoom) {
		t.Fatalf("Map = %v", err)
	}
	if out, err := Map(context.Background(), p, []int{4}, func(x int) (int, error) { return x, nil }); err != nil || out[0] != 4 {
		t.Fatal(out, err)
	}
}

// TestMapCtx: a context cancelled during the run stops the calls and is
// the error; a context done before Map runs nothing.
func TestMapCtx(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	in := make([]int, 100000)
	_, err := Map(ctx, p, in, func(int) (int, error) {
		if calls.Add(1) == 50 {
			cancel()
		}
		time.Sleep(time.Microsecond) // the call's work, not a wait
		return 0, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Map = %v", err)
	}
	if n := calls.Load(); n > int32(len(in))/10 {
		t.Fatalf("%d calls of %d after the cancel at 50", n, len(in))
	}
	if _, err := Map(ctx, p, in, func(int) (int, error) { t.Error("ran"); return 0, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: %v", err)
	}
}

// TestMapClosedAndAbandoned: a closed pool gives ErrClosed; a Map whose
// jobs Shutdown abandons wakes with ErrClosed.
func TestMapClosedAndAbandoned(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 1})
	g := newGate()
	p.Go(g.block)
	<-g.entered
	res := make(chan error)
	go func() {
		_, err := Map(context.Background(), p, []int{1, 2, 3}, func(x int) (int, error) { return x, nil })
		res <- err
	}()
	for p.Stats().QueueDepth == 0 { // Map has queued; the watchdog is the deadline
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	p.Shutdown(ctx)
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Fatalf("abandoned Map: %v", err)
	}
	close(g.release)
	p.Close()
	if _, err := Map(context.Background(), p, []int{1}, func(x int) (int, error) { return x, nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed pool: %v", err)
	}
}

// TestMapNoGoroutines: Map runs on the workers and starts no goroutine.
func TestMapNoGoroutines(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 3})
	defer p.Close()
	spawns := watchSpawns()
	in := make([]int, 3000)
	for i := range in {
		in[i] = rand.IntN(100)
	}
	_, err := Map(context.Background(), p, in, func(x int) (int, error) {
		spawns.check()
		return x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Only this goroutine waits (in Map).
	spawns.report(t, "Map")
}

// FuzzMap checks Map against a sequential model: elements whose value is
// divisible by fail fail with an error naming their index. With one
// worker the elements run in order, so the result is exactly the model's:
// the outputs, or the first failing element's error after exactly its
// index+1 calls. With three workers the outputs match when nothing fails,
// and otherwise the error is one of the failing elements'.
func FuzzMap(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5}, uint8(0))
	f.Add([]byte{7, 14, 3}, uint8(7))
	f.Add(make([]byte, 300), uint8(1))
	f.Add([]byte("the quick brown fox jumps over the lazy dog, many times over and over"), uint8(13))
	p1 := New(Config{Workers: 1})
	p3 := New(Config{Workers: 3, QueueSize: 2})
	f.Cleanup(func() { p1.Close(); p3.Close() })
	f.Fuzz(func(t *testing.T, data []byte, fail uint8) {
		in := make([]int, len(data))
		for i, b := range data {
			in[i] = int(b)
		}
		fails := func(x int) bool { return fail != 0 && x%int(fail) == 0 }
		firstFail := -1
		for i, x := range in {
			if fails(x) {
				firstFail = i
				break
			}
		}
		for _, p := range []*Pool{p1, p3} {
			var calls atomic.Int32
			out, err := Map(context.Background(), p, in, func(x int) (int, error) {
				calls.Add(1)
				if fails(x) {
					return 0, fmt.Errorf("element %d", x)
				}
				return x * 3, nil
			})
			switch {
			case firstFail < 0:
				if err != nil || len(out) != len(in) {
					t.Fatalf("workers %d: %v, %d results of %d", len(p.workersNow()), err, len(out), len(in))
				}
				for i := range in {
					if out[i] != in[i]*3 {
						t.Fatalf("workers %d: out[%d] = %d, want %d", len(p.workersNow()), i, out[i], in[i]*3)
					}
				}
			case len(p.workersNow()) == 1:
				if want := fmt.Sprintf("element %d", in[firstFail]); err == nil || err.Error() != want || out != nil {
					t.Fatalf("one worker: %v, %v; want %q", out, err, want)
				}
				if calls.Load() != int32(firstFail+1) {
					t.Fatalf("one worker: %d calls, want %d", calls.Load(), firstFail+1)
				}
			default:
				var x int
				if _, serr := fmt.Sscanf(fmt.Sprint(err), "element %d", &x); serr != nil || !fails(x) || out != nil {
					t.Fatalf("workers %d: %v, %v; want a failing element's error", len(p.workersNow()), out, err)
				}
			}
		}
	})
}
