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
	"unsafe"
)

// Stress tests of Call streams (callstream.go). They count: every call
// runs exactly once, every Future yields its own value (or, for a refused
// or abandoned call, ErrClosed and no run), and Stats agree.

// Behaviours of a call, by its argument x (an id): see stressTask.fn.
const (
	rvPanicMod  = 97 // x%97 == 5 panics
	rvGoexitMod = 89 // x%89 == 7 calls runtime.Goexit (top-level ids only)
	rvNestMod   = 13 // x%13 == 0: Calls the task again (child id x+base) and Waits
	rvFanMod    = 61 // x%61 == 11: Calls the task 20 times (children) and WaitAll
)

// stressTask is the task the stress tests drive. Ids below base are the
// submitters'; a nested call's children use ids base+x*32+k. runs counts
// each id's runs; the value of id x is 2x+1.
type stressTask struct {
	tk    *Task[int, int]
	base  int
	runs  []atomic.Int32
	bad   atomic.Int64
	first atomic.Value // first error
	// collateral counts nesting calls (nest or fan) that failed with
	// Goexit's *PanicError: waiting, they ran a Goexit call of another
	// submitter nested (settle), which ends the waiting call too, as a
	// task run by helpWait always could.
	collateral atomic.Int64
	// noGoexit makes the Goexit calls panic instead: on a pool whose
	// queue fills, a Goexit run by settle loses a popped job (see
	// TestCallStreamSettleGoexitKeepsPoppedJob).
	noGoexit bool
}

func newStressTask(p *Pool, base int) *stressTask {
	r := &stressTask{base: base, runs: make([]atomic.Int32, base+base*32)}
	r.tk = NewTask(p, r.fn)
	return r
}

func (r *stressTask) fail(err error) {
	r.bad.Add(1)
	r.first.CompareAndSwap(nil, err)
}

func (r *stressTask) fn(x int) int {
	r.runs[x].Add(1)
	if x >= r.base {
		return 2*x + 1 // a child: plain
	}
	switch {
	case x%rvPanicMod == 5:
		panic(fmt.Sprint("stream boom ", x))
	case x%rvGoexitMod == 7:
		if r.noGoexit {
			panic("goexit-as-panic")
		}
		runtime.Goexit()
	case x%rvNestMod == 0:
		c := r.base + x*32
		f := r.tk.Call(c)
		if v, err := f.Wait(context.Background()); err != nil || v != 2*c+1 {
			r.fail(fmt.Errorf("nested child %d of %d: %d, %v", c, x, v, err))
		}
	case x%rvFanMod == 11:
		fs := make([]Future[int], 20)
		for k := range fs {
			fs[k] = r.tk.Call(r.base + x*32 + 1 + k)
		}
		vs := make([]int, len(fs))
		if n, err := WaitAll(context.Background(), fs, vs); n != len(fs) || err != nil {
			r.fail(fmt.Errorf("fan of %d: WaitAll = %d, %v", x, n, err))
		}
		for k, v := range vs {
			if c := r.base + x*32 + 1 + k; v != 2*c+1 {
				r.fail(fmt.Errorf("fan child %d of %d: %d", c, x, v))
			}
		}
	}
	return 2*x + 1
}

// describe tells what is behind f: for a stalled future, where it sits.
func (r *stressTask) describe(f Future[int]) string {
	if f.r == nil {
		return fmt.Sprintf("no result (gen %d)", f.gen)
	}
	w := f.r.word.Load()
	d := fmt.Sprintf("gen %d, word gen %d flags %#x", f.gen, w>>stateBits, w&(1<<stateBits-1))
	switch o := f.r.owner.(type) {
	case *streamHome:
		s := (*callStream[int, int])(unsafe.Pointer(uintptr(unsafe.Pointer(o)) - unsafe.Offsetof(callStream[int, int]{}.streamHome)))
		for i := range s.elems {
			if &s.elems[i].result == f.r {
				st := s.st.Load()
				d += fmt.Sprintf("; stream %p call %d of %d (arg %d): st epoch %d tail %d active %v pending %v, head %d, gen %d", s, i, s.n, s.elems[i].in, st/stEpoch, st&stTail, st&stActive != 0, st&stPending != 0, head(st), s.gen)
			}
		}
		d += fmt.Sprintf("; open %p, task streams %d", r.tk.open.Load(), r.tk.streams.Load())
	default:
		d += fmt.Sprintf("; owner %T", o)
	}
	return d
}

// wait is f.Wait that reports a stall.
func (r *stressTask) wait(f Future[int]) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := f.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		panic("future stalled: " + r.describe(f))
	}
	return v, err
}

// check checks the result of top-level call x.
func (r *stressTask) check(x, v int, err error) {
	var pe *PanicError
	switch {
	case x%rvPanicMod == 5 || x%rvGoexitMod == 7:
		if !errors.As(err, &pe) {
			r.fail(fmt.Errorf("call %d: %d, %v, want a *PanicError", x, v, err))
		}
	case (x%rvNestMod == 0 || x%rvFanMod == 11) && errors.As(err, &pe) && pe.Value == goexitValue:
		r.collateral.Add(1)
	case err != nil || v != 2*x+1:
		r.fail(fmt.Errorf("call %d: %d, %v, want %d", x, v, err, 2*x+1))
	}
}

// expected returns how many ids must have run once, and the panics
// (panics and Goexits) among them, for top-level ids [0, n).
func (r *stressTask) expected(n int) (runs, panics int) {
	for x := range n {
		runs++
		switch {
		case x%rvPanicMod == 5 || x%rvGoexitMod == 7:
			panics++
		case x%rvNestMod == 0:
			runs++
		case x%rvFanMod == 11:
			runs += 20
		}
	}
	return runs, panics
}

// verify checks, after Close, that every id below n (and its children)
// ran exactly once and nothing else ran, and that Stats agree.
func (r *stressTask) verify(t *testing.T, p *Pool, n int) {
	t.Helper()
	if r.bad.Load() != 0 {
		t.Fatalf("%d wrong results; first: %v", r.bad.Load(), r.first.Load())
	}
	total := 0
	for x := range r.runs {
		k := int(r.runs[x].Load())
		total += k
		if k > 1 {
			t.Fatalf("id %d ran %d times", x, k)
		}
		if x < n && k != 1 {
			t.Fatalf("call %d ran %d times", x, k)
		}
	}
	runs, panics := r.expected(n)
	panics += int(r.collateral.Load())
	// A parent ended by Goexit (collateral) may have ended before its
	// children were queued (a Call waiting for room runs queued tasks).
	if c := int(r.collateral.Load()); total > runs || total < runs-21*c {
		t.Fatalf("%d runs, want %d (%d parents ended by another call's Goexit)", total, runs, c)
	}
	s := p.Stats()
	if s.Completed != uint64(total) || s.Submitted != s.Completed || s.QueueDepth != 0 || s.Panicked != uint64(panics) || s.Abandoned != 0 {
		t.Fatalf("stats %+v; want %d completed, %d panicked", s, runs, panics)
	}
}

// drive makes calls [lo, hi) in patterns chosen by rng and checks
// them: bursts taken in order, in reverse, by WaitAll over this burst and
// the rest of the last one (futures of two streams, some of slots), after
// Done, by two racing Waits on copies; Call/Wait alternating; and futures
// left for later.
func (r *stressTask) drive(rng *rand.Rand, lo, hi int) {
	ctx := context.Background()
	var held []Future[int] // futures of the last burst not yet taken
	var heldX []int
	fs := make([]Future[int], 0, 300)
	xs := make([]int, 0, 300)
	for x := lo; x < hi; {
		m := min(1+rng.IntN(200), hi-x)
		fs, xs = fs[:0], xs[:0]
		for k := range m {
			fs = append(fs, r.tk.Call(x+k))
			xs = append(xs, x+k)
		}
		x += m
		switch rng.IntN(7) {
		case 0:
			for k, f := range fs {
				v, err := r.wait(f)
				r.check(xs[k], v, err)
			}
		case 1:
			for k := len(fs) - 1; k >= 0; k-- {
				v, err := r.wait(fs[k])
				r.check(xs[k], v, err)
			}
		case 2: // WaitAll over the held futures and this burst
			all := append(append([]Future[int](nil), held...), fs...)
			ax := append(append([]int(nil), heldX...), xs...)
			held, heldX = nil, nil
			vs := make([]int, len(all))
			for i := 0; i < len(all); {
				n, err := WaitAll(ctx, all[i:], vs[i:])
				if err == nil {
					for k := i; k < len(all); k++ {
						r.check(ax[k], vs[k], nil)
					}
					break
				}
				// Stopped at a failed call (a panic): it was taken.
				r.check(ax[i+n-1], vs[i+n-1], err)
				for k := i; k < i+n-1; k++ {
					r.check(ax[k], vs[k], nil)
				}
				i += n
			}
		case 3:
			for k, f := range fs {
				<-f.Done()
				v, err := r.wait(f)
				r.check(xs[k], v, err)
				if _, err := r.wait(f); !errors.Is(err, ErrFutureUsed) {
					r.fail(fmt.Errorf("call %d: second Wait: %v", xs[k], err))
				}
				select {
				case <-f.Done():
				default:
					r.fail(fmt.Errorf("call %d: Done of a taken future not closed", xs[k]))
				}
			}
		case 4: // two Waits race on copies: exactly one takes the value
			for k, f := range fs {
				var wg sync.WaitGroup
				var got [2]error
				var vals [2]int
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						vals[i], got[i] = r.wait(f)
					}()
				}
				wg.Wait()
				used := 0
				for i := range 2 {
					if errors.Is(got[i], ErrFutureUsed) {
						used++
					} else {
						r.check(xs[k], vals[i], got[i])
					}
				}
				if used != 1 {
					r.fail(fmt.Errorf("call %d: racing Waits: %v, %v", xs[k], got[0], got[1]))
				}
			}
		case 5: // keep some for a later WaitAll (another stream's futures)
			n := rng.IntN(len(fs) + 1)
			for k := range n {
				v, err := r.wait(fs[k])
				r.check(xs[k], v, err)
			}
			for k := n; k < len(fs); k++ {
				held = append(held, fs[k])
				heldX = append(heldX, xs[k])
			}
		case 6: // Call, Wait, alternating (the runner leaves and comes back)
			for k, f := range fs {
				v, err := r.wait(f)
				r.check(xs[k], v, err)
				if rng.IntN(16) == 0 {
					runtime.Gosched()
				}
			}
		}
		if rng.IntN(10) == 0 {
			time.Sleep(time.Duration(rng.IntN(30)) * time.Microsecond)
		}
	}
	for k, f := range held {
		v, err := r.wait(f)
		r.check(heldX[k], v, err)
	}
}

// TestCallStreamStress: several submitters drive one task through every
// pattern above, with panics, Goexits, nested and fanned-out calls of the
// same task, at GOMAXPROCS 1, 2 and 4.
func TestCallStreamStress(t *testing.T) {
	watchdog(t, 240*time.Second)
	for _, procs := range []int{1, 2, 4} {
		for _, c := range streamShapes() {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, c.name), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				p := New(c.cfg)
				defer p.Close()
				const submitters = 4
				per := scale(2500)
				r := newStressTask(p, submitters*per)
				r.noGoexit = c.cfg.QueueSize == minStreamCap
				var wg sync.WaitGroup
				for g := range submitters {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r.drive(rand.New(rand.NewPCG(uint64(g), uint64(procs)*7+uint64(len(c.name)))), g*per, (g+1)*per)
					}()
				}
				wg.Wait()
				p.Close()
				r.verify(t, p, submitters*per)
			})
		}
	}
}

// TestCallStreamNeverWaited: futures never waited on keep their stream
// out of reuse; calls still run once, the retired ring fills, and streams
// keep working (every later future is its own).
func TestCallStreamNeverWaited(t *testing.T) {
	watchdog(t, 60*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	var ran atomic.Int64
	tk := NewTask(p, func(x int) int { ran.Add(1); return x * 3 })
	ctx := context.Background()
	n := 0
	for round := range 40 {
		fs := make([]Future[int], 150)
		for i := range fs {
			fs[i] = tk.Call(n + i)
		}
		for i, f := range fs {
			if i == round%len(fs) {
				continue // never taken
			}
			if v, err := f.Wait(ctx); err != nil || v != 3*(n+i) {
				t.Fatalf("round %d call %d: %d, %v", round, n+i, v, err)
			}
		}
		n += len(fs)
	}
	p.Close()
	if ran.Load() != int64(n) {
		t.Fatalf("%d runs, want %d", ran.Load(), n)
	}
}

// TestCallStreamStaleFutures: futures taken long ago, while their
// stream is reused again and again, keep answering ErrFutureUsed (never
// another call's value) from other goroutines, through Wait, WaitAll and
// Done.
func TestCallStreamStaleFutures(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := New(Config{Workers: 1})
			defer p.Close()
			tk := NewTask(p, func(x int) int { return x })
			ctx := context.Background()
			stale := make(chan Future[int], 1024)
			stop := make(chan struct{})
			var bad atomic.Int64
			var checked atomic.Int64
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var keep []Future[int]
					for {
						select {
						case <-stop:
							return
						case f := <-stale:
							keep = append(keep, f)
							if len(keep) > 64 {
								keep = keep[1:]
							}
						}
						for _, f := range keep {
							if v, err := f.Wait(ctx); !errors.Is(err, ErrFutureUsed) {
								bad.Add(1)
								t.Errorf("stale Wait: %d, %v", v, err)
							}
							select {
							case <-f.Done():
							default:
								bad.Add(1)
							}
							out := make([]int, 1)
							if n, err := WaitAll(ctx, []Future[int]{f}, out); n != 1 || !errors.Is(err, ErrFutureUsed) {
								bad.Add(1)
								t.Errorf("stale WaitAll: %d, %v", n, err)
							}
							checked.Add(1)
						}
					}
				}()
			}
			fs := make([]Future[int], 100)
			for i := range scale(400) {
				for k := range fs {
					fs[k] = tk.Call(i*1000 + k)
				}
				for k, f := range fs {
					if v, err := f.Wait(ctx); err != nil || v != i*1000+k {
						t.Fatalf("call %d: %d, %v", i*1000+k, v, err)
					}
					if k%7 == 0 {
						select {
						case stale <- f:
						default:
						}
					}
				}
			}
			close(stop)
			wg.Wait()
			if bad.Load() != 0 {
				t.Fatalf("%d stale futures answered wrong", bad.Load())
			}
			t.Logf("%d stale checks", checked.Load())
		})
	}
}

// TestCallStreamNestedGoexit: a call that waits on a later call of its
// own stream, which calls runtime.Goexit while run nested (settled): both
// fail with a *PanicError (on a pool of several workers, call 1 may run
// on another and fail alone), the calls after them run on the replacement
// goroutine, nothing hangs, and the counts agree.
func TestCallStreamNestedGoexit(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, streamShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		var ran atomic.Int64
		ch := make(chan Future[int], 1)
		tk := NewTask(p, func(x int) int {
			ran.Add(1)
			switch x {
			case 0: // waits on call 1, run nested
				v, _ := (<-ch).Wait(ctx)
				return v
			case 1:
				runtime.Goexit()
			}
			return x
		})
		before := p.Stats()
		const rounds = 30
		// With several workers, call 1 may run on another worker than
		// call 0's: then call 0 returns, and only call 1 fails.
		single := len(p.workersNow()) == 1
		panics := uint64(0)
		for round := range rounds {
			f0 := tk.Call(0)
			f1 := tk.Call(1)
			ch <- f1
			var rest [6]Future[int]
			for k := range rest {
				rest[k] = tk.Call(10 + k)
			}
			var pe *PanicError
			panics++
			if v, err := f0.Wait(ctx); errors.As(err, &pe) {
				panics++
			} else if single || err != nil || v != 0 {
				t.Fatalf("round %d: call 0: %d, %v, want a *PanicError (Goexit ends it too)", round, v, err)
			}
			if _, err := f1.Wait(ctx); !errors.Is(err, ErrFutureUsed) && !errors.As(err, &pe) {
				t.Fatalf("round %d: call 1: %v", round, err)
			}
			for k, f := range rest {
				if v, err := f.Wait(ctx); err != nil || v != 10+k {
					t.Fatalf("round %d: call %d: %d, %v", round, 10+k, v, err)
				}
			}
		}
		if !eventually(10*time.Second, func() bool {
			s := p.Stats()
			return s.Completed-before.Completed == rounds*8 && s.Submitted == s.Completed && s.Panicked-before.Panicked == panics
		}) {
			t.Fatalf("stats %+v, before %+v; ran %d", p.Stats(), before, ran.Load())
		}
	})
}

// TestCallStreamResizeChurn: Resize toggles between streaming (one
// worker) and not while submitters drive the task through every pattern
// (nested calls, fans, panics, Goexits included).
func TestCallStreamResizeChurn(t *testing.T) {
	watchdog(t, 120*time.Second)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := New(Config{Workers: 1})
			defer p.Close()
			const submitters = 3
			per := scale(3000)
			r := newStressTask(p, submitters*per)
			stop := make(chan struct{})
			resized := make(chan struct{})
			go func() {
				defer close(resized)
				rng := rand.New(rand.NewPCG(9, uint64(procs)))
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					p.Resize([]int{1, 2, 1, 3, 1, 1}[i%6])
					time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
				}
			}()
			var wg sync.WaitGroup
			for g := range submitters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.drive(rand.New(rand.NewPCG(uint64(g), 3)), g*per, (g+1)*per)
				}()
			}
			wg.Wait()
			close(stop)
			<-resized
			p.Close()
			r.verify(t, p, submitters*per)
		})
	}
}

// TestCallStreamCloseShutdownRace: Close or Shutdown (with a deadline
// of 0 to 40 µs) races callers in the middle of bursts. Every future
// either gives its own value (its call ran once) or ErrClosed (its call
// never ran); Stats count each run call completed and each abandoned
// call abandoned, none twice.
func TestCallStreamCloseShutdownRace(t *testing.T) {
	watchdog(t, 120*time.Second)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			rounds := scale(300)
			var totRan, totAbandoned, totRefused int64
			for round := range rounds {
				cfg := streamShapes()[round%len(streamShapes())].cfg
				p := New(cfg)
				const callers = 3
				const per = 4000
				runs := make([]atomic.Int32, callers*per)
				tk := NewTask(p, func(x int) int {
					runs[x].Add(1)
					if x%50 == 0 {
						time.Sleep(time.Microsecond) // a long call now and then
					}
					return 2*x + 1
				})
				var ok, abandoned, refused, bad atomic.Int64
				var firstBad atomic.Value
				var wg sync.WaitGroup
				for g := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(round), uint64(g)))
						ctx := context.Background()
						fs := make([]Future[int], 0, 64)
						x := g * per
						for x < (g+1)*per {
							m := min(1+rng.IntN(64), (g+1)*per-x)
							fs = fs[:0]
							for k := range m {
								fs = append(fs, tk.Call(x+k))
							}
							closed := false
							for k, f := range fs {
								v, err := f.Wait(ctx)
								switch {
								case err == nil && v == 2*(x+k)+1:
									ok.Add(1)
								case errors.Is(err, ErrClosed) && f.r == nil:
									refused.Add(1)
									closed = true
								case errors.Is(err, ErrClosed):
									abandoned.Add(1)
									closed = true
								default:
									bad.Add(1)
									firstBad.CompareAndSwap(nil, fmt.Errorf("call %d: %d, %v", x+k, v, err))
								}
							}
							x += m
							if closed {
								return
							}
						}
					}()
				}
				time.Sleep(time.Duration(rng2(round)%200) * time.Microsecond)
				if round%2 == 0 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(round%5)*10*time.Microsecond)
					_ = p.Shutdown(ctx)
					cancel()
				}
				p.Close()
				wg.Wait()
				if bad.Load() != 0 {
					t.Fatalf("round %d: %d wrong results; first: %v", round, bad.Load(), firstBad.Load())
				}
				ran := int64(0)
				for x := range runs {
					switch n := runs[x].Load(); {
					case n > 1:
						t.Fatalf("round %d: call %d ran %d times", round, x, n)
					case n == 1:
						ran++
					}
				}
				if ran != ok.Load() {
					t.Fatalf("round %d: %d calls ran, %d returned a value", round, ran, ok.Load())
				}
				if s := p.Stats(); s.Completed != uint64(ran) || s.Abandoned != uint64(abandoned.Load()) || s.Submitted != s.Completed+s.Abandoned || s.QueueDepth != 0 {
					t.Fatalf("round %d: ran %d, abandoned %d; stats %+v", round, ran, abandoned.Load(), s)
				}
				totRan += ran
				totAbandoned += abandoned.Load()
				totRefused += refused.Load()
			}
			t.Logf("%d rounds: %d ran, %d abandoned, %d refused", rounds, totRan, totAbandoned, totRefused)
		})
	}
}

func rng2(i int) int { return int((uint32(i)*2654435761 + 12345) & 0x7fffffff) }

// TestResizeFreesCallBehindBlocked: on a one-worker pool whose queues
// are too small to stream, a call that blocks until a later call of its
// task runs is freed by Resize: the added worker steals the later call
// from the queue. (A stream keeps its calls with its worker; Task.Call's
// doc says so.)
func TestResizeFreesCallBehindBlocked(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 1, QueueSize: minStreamCap - 1})
	defer p.Close()
	started, unblock := make(chan struct{}), make(chan struct{})
	var once sync.Once
	tk := NewTask(p, func(x int) int {
		if x == 0 {
			close(started)
			select {
			case <-unblock:
			case <-time.After(10 * time.Second):
				return -1 // give up, so that the pool can close
			}
			return 0
		}
		once.Do(func() { close(unblock) })
		return x
	})
	f0 := tk.Call(0)
	<-started
	f1 := tk.Call(1) // would unblock call 0
	p.Resize(2)      // a second worker: it takes call 1
	if v, err := f1.Wait(context.Background()); err != nil || v != 1 {
		t.Fatalf("call 1 after Resize(2): %d, %v", v, err)
	}
	if v, err := f0.Wait(context.Background()); err != nil || v != 0 {
		t.Fatalf("call 0: %d, %v", v, err)
	}
}

// TestCallStreamShutdownAbandonsBehindRunning: Shutdown's expiry
// abandons the calls waiting behind a running call, queued alone or in
// its stream: they never run, their futures fail with ErrClosed, and
// Stats counts them abandoned (ShutdownError.Abandoned counts the queued
// ones only; see its doc).
func TestCallStreamShutdownAbandonsBehindRunning(t *testing.T) {
	for _, qs := range []int{4, 0} {
		t.Run(fmt.Sprintf("qs=%d", qs), func(t *testing.T) {
			p := New(Config{Workers: 1, QueueSize: qs})
			entered := make(chan struct{})
			release := make(chan struct{})
			var ranAfter atomic.Int32
			var expired atomic.Bool
			tk := NewTask(p, func(x int) int {
				if x == 0 {
					close(entered)
					<-release
					return 0
				}
				if expired.Load() {
					ranAfter.Add(1)
				}
				return x
			})
			f0 := tk.Call(0)
			<-entered
			const queued = 3 // fits QueueSize 4
			fs := make([]Future[int], queued)
			for i := range fs {
				fs[i] = tk.Call(1 + i)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			err := p.Shutdown(ctx)
			expired.Store(true)
			close(release)
			var se *ShutdownError
			if !errors.As(err, &se) {
				t.Fatalf("Shutdown = %v, want a *ShutdownError", err)
			}
			f0.Wait(context.Background())
			abandoned := 0
			for _, f := range fs {
				if _, err := f.Wait(context.Background()); errors.Is(err, ErrClosed) {
					abandoned++
				}
			}
			p.Close()
			if st := p.Stats(); st.Abandoned != queued || abandoned != queued || ranAfter.Load() != 0 || se.Abandoned > queued {
				t.Fatalf("Shutdown abandoned %d, Stats %d (futures failed: %d) of %d queued calls; %d ran after Shutdown returned", se.Abandoned, st.Abandoned, abandoned, queued, ranAfter.Load())
			}
		})
	}
}

// TestCallStreamGoexitWhileQueueing: a task on the worker whose Call
// queues its task's stream holds stPending while p.submit waits for
// room, running queued tasks meanwhile; if one of them calls
// runtime.Goexit the calling goroutine ends there, and the reservation
// must be rolled back: the reserved call never ran for anyone (its Call
// never returned), and later Calls of the task stream again.
func TestCallStreamGoexitWhileQueueing(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 1, QueueSize: minStreamCap})
	defer p.Close()
	var ran atomic.Int64
	tk := NewTask(p, func(x int) int { ran.Add(1); return x })
	g := newGate()
	// The caller: a task on the worker that Calls once the queue is full.
	if err := p.Go(func() {
		g.block()
		tk.Call(1) // opens and queues the stream; the queue is full
	}); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	for i := 0; p.TryGo(func() { runtime.Goexit() }); i++ {
	}
	close(g.release)
	if !eventually(5*time.Second, func() bool { return p.Stats().QueueDepth == 0 }) {
		t.Fatalf("stats %+v", p.Stats())
	}
	time.Sleep(20 * time.Millisecond)
	s := tk.open.Load()
	if s == nil {
		t.Fatal("no stream opened")
	}
	ctx := context.Background()
	for i := range 100 {
		if v, err := tk.Call(100 + i).Wait(ctx); err != nil || v != 100+i {
			t.Fatalf("later call: %d, %v", v, err)
		}
	}
	st := s.st.Load()
	if st&stPending != 0 || t.Failed() {
		t.Fatalf("stream left pending (st %#x, tail %d) after the caller's goroutine ended in Goexit: its call 0 never runs (%d runs, want 101 with the reserved call), and later Calls never stream", st, st&stTail, ran.Load())
	}
}

// TestCallStreamSettleGoexitKeepsPoppedJob: a worker that must queue
// from inside a stream call while the queue is full runs queued jobs
// meanwhile (submitSlow); it settles the stream first, which runs the
// stream's later calls nested, and if one of them calls runtime.Goexit
// the goroutine ends: no job may have been popped yet, or its Future
// would never complete.
func TestCallStreamSettleGoexitKeepsPoppedJob(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 1, QueueSize: minStreamCap})
	defer func() { go p.Close() }()
	parentGo := make(chan struct{})
	entered := make(chan struct{})
	tk := NewTask(p, func(x int) int {
		switch x {
		case 0: // the parent: queues a Go task once the queue is full
			close(entered)
			<-parentGo
			_ = p.Go(func() {})
		case 1: // appended to the parent's stream, behind it
			runtime.Goexit()
		}
		return x
	})
	victims := NewTask(p, func(x int) int { return x })
	f0 := tk.Call(0)
	<-entered
	f1 := tk.Call(1)
	// Fill the queue with victims, each in a slot of its own.
	var vs []Future[int]
	for len(vs) < 64 && p.Stats().QueueDepth < minStreamCap {
		vs = append(vs, victims.CallContext(context.Background(), len(vs)))
	}
	close(parentGo)
	f0.Wait(context.Background())
	f1.Wait(context.Background())
	lost := 0
	for i, f := range vs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if v, err := f.Wait(ctx); err != nil || v != i {
			t.Errorf("victim %d: %d, %v", i, v, err)
			lost++
		}
		cancel()
	}
	if lost > 0 {
		t.Fatalf("%d of %d queued calls never completed; stats %+v", lost, len(vs), p.Stats())
	}
}
