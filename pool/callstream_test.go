package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// The tests of Call streams (callstream.go): pools of one worker (a
// single runner) and of several (shared runners), where Call appends to
// the task's stream.

// streamShapes are one-worker pools under each timer policy and backend,
// and a queue just large enough to stream, and pools of several workers.
func streamShapes() []shape {
	return []shape{
		{"w1", Config{Workers: 1}},
		{"w1-spin", Config{Workers: 1, Park: knit.Park{Spin: 20 * time.Microsecond}}},
		{"w1-parked", Config{Workers: 1, Park: knit.Park{Spin: knit.NoSpin}}},
		{"w1-futex", Config{Workers: 1, Park: knit.Park{Backend: knit.BackendFutex}}},
		{"w1-q8", Config{Workers: 1, QueueSize: minStreamCap}},
		{"w2", Config{Workers: 2}},
		{"w2-parked", Config{Workers: 2, Park: knit.Park{Spin: knit.NoSpin}}},
		{"w3-futex", Config{Workers: 3, Park: knit.Park{Backend: knit.BackendFutex}}},
		{"w4-q8", Config{Workers: 4, QueueSize: minStreamCap}},
	}
}

// TestCallStreamExactlyOnce: submitters make bursts of calls of random
// sizes (across streams and past the two a task may have in flight) and
// take the results in order, in reverse, through WaitAll, or after
// Done; some futures are never taken. Every call runs exactly once and
// every taken value is its own, at several GOMAXPROCS.
func TestCallStreamExactlyOnce(t *testing.T) {
	watchdog(t, 120*time.Second)
	for _, procs := range []int{1, 2, 4} {
		for _, c := range streamShapes() {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, c.name), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				p := New(c.cfg)
				defer p.Close()
				const submitters = 4
				per := scale(3000)
				runs := make([]atomic.Int32, submitters*per)
				tk := NewTask(p, func(x int) int { runs[x].Add(1); return x + 1 })
				var wg sync.WaitGroup
				errs := make(chan error, submitters)
				for g := range submitters {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx := context.Background()
						rng := rand.New(rand.NewPCG(uint64(g), uint64(procs)))
						fs := make([]Future[int], 300)
						vs := make([]int, 300)
						for i := 0; i < per; {
							m := min(1+rng.IntN(300), per-i)
							for k := range m {
								fs[k] = tk.Call(g*per + i + k)
							}
							check := func(k, v int, err error) bool {
								if x := g*per + i + k; err != nil || v != x+1 {
									errs <- fmt.Errorf("call %d: %d, %v", x, v, err)
									return false
								}
								return true
							}
							switch rng.IntN(5) {
							case 0: // in order
								for k := range m {
									if v, err := fs[k].Wait(ctx); !check(k, v, err) {
										return
									}
								}
							case 1: // in reverse
								for k := m - 1; k >= 0; k-- {
									if v, err := fs[k].Wait(ctx); !check(k, v, err) {
										return
									}
								}
							case 2:
								if n, err := WaitAll(ctx, fs[:m], vs); n != m || err != nil {
									errs <- fmt.Errorf("WaitAll = %d, %v", n, err)
									return
								}
								for k := range m {
									if !check(k, vs[k], nil) {
										return
									}
								}
							case 3: // Done first
								for k := range m {
									<-fs[k].Done()
									if v, err := fs[k].Wait(ctx); !check(k, v, err) {
										return
									}
								}
							case 4: // the last one never taken
								for k := range m - 1 {
									if v, err := fs[k].Wait(ctx); !check(k, v, err) {
										return
									}
								}
							}
							i += m
							if rng.IntN(8) == 0 {
								time.Sleep(time.Duration(rng.IntN(20)) * time.Microsecond)
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
				for x := range runs {
					if n := runs[x].Load(); n != 1 {
						t.Fatalf("call %d ran %d times", x, n)
					}
				}
				if s := p.Stats(); s.Completed != uint64(len(runs)) || s.Submitted != s.Completed || s.QueueDepth != 0 {
					t.Fatalf("stats %+v, want %d completed", s, len(runs))
				}
			})
		}
	}
}

// TestCallStreamFillRace: callers preempted between a call's reservation
// and its fill (a large argument widens the window) leave the runner
// waiting for the fill, at one P and at two; nothing is lost or run twice.
func TestCallStreamFillRace(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := New(Config{Workers: 1})
			defer p.Close()
			type big [1 << 9]int
			var ran atomic.Int64
			tk := NewTask(p, func(b big) int { ran.Add(1); return b[0] + b[len(b)-1] })
			const submitters = 6
			per := scale(2000)
			var wg sync.WaitGroup
			var bad atomic.Int64
			for g := range submitters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var fs [16]Future[int]
					var b big
					for i := 0; i < per; i += len(fs) {
						for k := range fs {
							b[0], b[len(b)-1] = g, i+k
							fs[k] = tk.Call(b)
						}
						for k := range fs {
							if v, err := fs[k].Wait(context.Background()); err != nil || v != g+i+k {
								bad.Add(1)
							}
						}
					}
				}()
			}
			wg.Wait()
			if bad.Load() != 0 || ran.Load() != submitters*int64((per+15)/16*16) {
				t.Fatalf("%d wrong results; %d runs", bad.Load(), ran.Load())
			}
		})
	}
}

// TestCallStreamNested: a call that waits on a later call of its own
// stream (the runner holds it) does not deadlock its one worker: the
// wait settles the stream (runs its later calls nested, then leaves it).
// Recursive calls through the same task, and WaitAll inside a call, too.
func TestCallStreamNested(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, streamShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		// Call 0 waits for call 1, whose future it gets once both are
		// appended; call 1 waits likewise for call 2.
		chs := []chan Future[int]{make(chan Future[int], 1), make(chan Future[int], 1)}
		tk := NewTask(p, func(x int) int {
			if x < len(chs) {
				v, err := (<-chs[x]).Wait(ctx)
				if err != nil {
					return -1
				}
				return v + 1
			}
			return 100
		})
		for round := range 20 {
			f0 := tk.Call(0)
			f1 := tk.Call(1)
			chs[0] <- f1
			if round%2 == 0 {
				runtime.Gosched() // let call 0 start waiting before call 2 exists
			}
			f2 := tk.Call(2)
			chs[1] <- f2
			// f1 and f2 are taken by the calls that wait on them.
			if v, err := f0.Wait(ctx); err != nil || v != 102 {
				t.Fatalf("round %d: call 0 = %d, %v", round, v, err)
			}
		}
		// Recursion through the task itself.
		var fib *Task[int, int]
		fib = NewTask(p, func(n int) int {
			if n < 2 {
				return n
			}
			a, b := fib.Call(n-1), fib.Call(n-2)
			va, _ := a.Wait(ctx)
			vb, _ := b.Wait(ctx)
			return va + vb
		})
		if v, err := fib.Call(16).Wait(ctx); v != 987 || err != nil {
			t.Fatalf("fib(16) = %d, %v", v, err)
		}
		// A call that makes a burst of calls of its own task and waits for
		// all of them.
		var fan *Task[int, int]
		fan = NewTask(p, func(n int) int {
			if n == 0 {
				return 1
			}
			fs := make([]Future[int], n)
			for i := range fs {
				fs[i] = fan.Call(0)
			}
			vs := make([]int, n)
			if k, err := WaitAll(ctx, fs, vs); k != n || err != nil {
				return -1
			}
			sum := 0
			for _, v := range vs {
				sum += v
			}
			return sum
		})
		fs := make([]Future[int], 10)
		for i := range fs {
			fs[i] = fan.Call(50 * i)
		}
		for i, f := range fs {
			if v, err := f.Wait(ctx); v != max(50*i, 1) || err != nil {
				t.Fatalf("fan(%d) = %d, %v", 50*i, v, err)
			}
		}
	})
}

// TestCallStreamPanics: a call of a stream that panics or calls
// runtime.Goexit fails alone, with a *PanicError; the calls after it in
// the stream run, on the worker or on its replacement, also when the
// failing call runs nested (settled from an outer call's wait; on several
// workers a Goexit run nested ends the waiting call too).
func TestCallStreamPanics(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, streamShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		var inner *Task[int, int]
		inner = NewTask(p, func(x int) int {
			switch {
			case x%10 == 3:
				panic("boom")
			case x%10 == 7:
				runtime.Goexit()
			case x >= 1000: // waits on a burst of calls that includes a panic
				// (not a Goexit: run nested, it would end this call too)
				var fs []Future[int]
				for i := range 10 {
					if i != 7 {
						fs = append(fs, inner.Call(i))
					}
				}
				sum := 0
				for _, f := range fs {
					if v, err := f.Wait(ctx); err == nil {
						sum += v
					}
				}
				return sum
			}
			return x
		})
		before := p.Stats()
		// On several workers call 1000's waits may run a queued call of
		// the first 60 nested (helpWait runs queued tasks), one that calls
		// runtime.Goexit among them, which ends call 1000 too, as it
		// would any task waiting below it.
		single := len(p.workersNow()) == 1
		panics := uint64(12 + 1)
		fs := make([]Future[int], 60)
		for i := range fs {
			fs[i] = inner.Call(i)
		}
		fs = append(fs, inner.Call(1000))
		for i, f := range fs {
			v, err := f.Wait(ctx)
			var pe *PanicError
			switch {
			case i == 60:
				if !single && errors.As(err, &pe) {
					panics++
				} else if err != nil || v != 0+1+2+4+5+6+8+9 {
					t.Fatalf("nested burst: %d, %v", v, err)
				}
			case i%10 == 3 || i%10 == 7:
				if !errors.As(err, &pe) {
					t.Fatalf("call %d: %d, %v, want a *PanicError", i, v, err)
				}
			case err != nil || v != i:
				t.Fatalf("call %d: %d, %v", i, v, err)
			}
		}
		if !eventually(10*time.Second, func() bool {
			s := p.Stats()
			return s.Completed-before.Completed == 60+1+9 && s.Submitted == s.Completed && s.Panicked-before.Panicked == panics
		}) {
			t.Fatalf("stats %+v, before %+v", p.Stats(), before)
		}
	})
}

// TestCallStreamShutdown: calls queued in streams (two streams' worth and
// more, which go in slots) behind a blocked worker are abandoned by
// Shutdown's expiry and counted one by one; Close runs them instead.
func TestCallStreamShutdown(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, shutdown := range []bool{true, false} {
		t.Run(fmt.Sprintf("shutdown=%v", shutdown), func(t *testing.T) {
			p := New(Config{Workers: 1})
			g := newGate()
			p.Go(g.block)
			<-g.entered
			var ran atomic.Int32
			tk := NewTask(p, func(x int) int { ran.Add(1); return x })
			const calls = 2*batchChunk + 44
			fs := make([]Future[int], calls)
			for i := range fs {
				fs[i] = tk.Call(i)
			}
			if shutdown {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				defer cancel()
				var se *ShutdownError
				if err := p.Shutdown(ctx); !errors.As(err, &se) || se.Abandoned != calls {
					t.Fatalf("Shutdown = %v, want %d abandoned", err, calls)
				}
			} else {
				go p.Close()
			}
			close(g.release)
			for i, f := range fs {
				v, err := f.Wait(context.Background())
				if shutdown && !errors.Is(err, ErrClosed) || !shutdown && (err != nil || v != i) {
					t.Fatalf("call %d: %d, %v", i, v, err)
				}
			}
			p.Close()
			s := p.Stats()
			want := map[bool]int32{true: 0, false: calls}[shutdown]
			if ran.Load() != want || s.Completed != uint64(want+1) || s.Submitted != calls+1 || s.Abandoned != uint64(calls-want) {
				t.Fatalf("ran %d; stats %+v", ran.Load(), s)
			}
			if f := tk.Call(1); f.r != nil {
				t.Fatal("a Call after Close was accepted")
			} else if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
				t.Fatalf("a Call after Close: %v", err)
			}
		})
	}
}

// TestCallStreamResize: Resize moves a pool between streaming (one
// worker) and queueing each call (several) while submitters make bursts
// of calls; every call runs once.
func TestCallStreamResize(t *testing.T) {
	watchdog(t, 60*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	const submitters = 3
	per := scale(20000)
	runs := make([]atomic.Int32, submitters*per)
	tk := NewTask(p, func(x int) int { runs[x].Add(1); return x })
	stop := make(chan struct{})
	resized := make(chan struct{})
	go func() {
		defer close(resized)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p.Resize([]int{1, 2, 1, 3}[i%4])
			time.Sleep(50 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fs [40]Future[int]
			for i := 0; i < per; i += len(fs) {
				m := min(len(fs), per-i)
				for k := range m {
					fs[k] = tk.Call(g*per + i + k)
				}
				for k := range m {
					if v, err := fs[k].Wait(context.Background()); err != nil || v != g*per+i+k {
						bad.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-resized
	if bad.Load() != 0 {
		t.Fatalf("%d wrong results", bad.Load())
	}
	for x := range runs {
		if n := runs[x].Load(); n != 1 {
			t.Fatalf("call %d ran %d times", x, n)
		}
	}
}

// TestCallStreamDone: a stream call's future is spent once taken, also
// after its stream was reused: its Wait says ErrFutureUsed (never another
// call's value) and its Done is closed.
func TestCallStreamDone(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	ctx := context.Background()
	f := tk.Call(7)
	g := f // a copy
	select {
	case <-f.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done never closed")
	}
	if v, err := f.Wait(ctx); v != 7 || err != nil {
		t.Fatal(v, err)
	}
	if _, err := g.Wait(ctx); !errors.Is(err, ErrFutureUsed) {
		t.Fatalf("second Wait: %v", err)
	}
	for i := range 10 * batchChunk { // the stream is reused several times
		if v, err := tk.Call(i).Wait(ctx); v != i || err != nil {
			t.Fatal(v, err)
		}
	}
	if _, err := g.Wait(ctx); !errors.Is(err, ErrFutureUsed) {
		t.Fatalf("Wait on a reused stream's future: %v", err)
	}
	select {
	case <-g.Done():
	default:
		t.Fatal("Done of a spent future is not closed")
	}
}

// TestCallStreamZeroAllocs: bursts of calls, taken by Wait or WaitAll,
// reuse their streams: no allocation in the steady state.
func TestCallStreamZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) { streamZeroAllocs(t, w) })
	}
}

func streamZeroAllocs(t *testing.T, workers int) {
	p := New(Config{Workers: workers})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x + 1 })
	ctx := context.Background()
	fs := make([]Future[int], 100)
	vs := make([]int, 100)
	burst := func(all bool) {
		for i := range fs {
			fs[i] = tk.Call(i)
		}
		if all {
			WaitAll(ctx, fs, vs)
			return
		}
		for _, f := range fs {
			f.Wait(ctx)
		}
	}
	for range 10 {
		burst(false)
	}
	if a := testing.AllocsPerRun(100, func() { burst(false) }); a != 0 {
		t.Errorf("100 Calls, then 100 Waits: %v allocs", a)
	}
	if a := testing.AllocsPerRun(100, func() { burst(true) }); a != 0 {
		t.Errorf("100 Calls, then WaitAll: %v allocs", a)
	}
	// AllocsPerRun rounds down: a stream allocated now and then (taken
	// for not reusable, or a Call that found the task's streams all busy
	// and took a slot) reads 0 over one burst. So 100 bursts a run too.
	if a := testing.AllocsPerRun(10, func() {
		for range 100 {
			burst(false)
		}
	}); a != 0 {
		t.Errorf("100 bursts of 100 Calls and Waits: %v allocs", a)
	}
}

// TestCallStreamCloseRace: Close races callers whose calls queue their
// stream (its runner has left it). A call either runs or is refused: its
// Future then has no result behind it (the stream's reservation was
// rolled back), since Close abandons nothing.
func TestCallStreamCloseRace(t *testing.T) {
	watchdog(t, 60*time.Second)
	rounds := scale(1000)
	var refused, ran int
	for r := range rounds {
		p := New(Config{Workers: 1})
		tk := NewTask(p, func(x int) int { return x + 1 })
		const callers = 3
		var wg sync.WaitGroup
		var bad, ok, closed atomic.Int64
		for g := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(r), uint64(g)))
				for i := 0; ; i++ {
					f := tk.Call(i)
					v, err := f.Wait(context.Background())
					switch {
					case err == nil && v == i+1:
						ok.Add(1)
					case errors.Is(err, ErrClosed) && f.r == nil:
						closed.Add(1)
						return
					default:
						bad.Add(1)
						return
					}
					if rng.IntN(4) == 0 {
						time.Sleep(time.Duration(rng.IntN(5)) * time.Microsecond) // the runner leaves
					}
				}
			}()
		}
		time.Sleep(time.Duration(r%50) * time.Microsecond)
		p.Close()
		wg.Wait()
		if bad.Load() != 0 {
			t.Fatalf("round %d: %d calls failed other than by a refusal", r, bad.Load())
		}
		if s := p.Stats(); s.Completed != uint64(ok.Load()) || s.Abandoned != 0 {
			t.Fatalf("round %d: %d calls returned a value; stats %+v", r, ok.Load(), s)
		}
		refused += int(closed.Load())
		ran += int(ok.Load())
	}
	t.Logf("%d rounds: %d calls ran, %d refused", rounds, ran, refused)
}
