package pool

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// streamModel is a seq of 0..n-1 that counts what was read from it, and
// an fn (x*3+1, uneven in length) that counts its calls and the calls
// running; the tests check MapStream against them.
type streamModel struct {
	n       int
	read    atomic.Int64
	calls   []atomic.Int32
	running atomic.Int64
}

func newStreamModel(n int) *streamModel { return &streamModel{n: n, calls: make([]atomic.Int32, n)} }

func (m *streamModel) seq(yield func(int) bool) {
	for i := range m.n {
		m.read.Add(1)
		if !yield(i) {
			return
		}
	}
}

func (m *streamModel) fn(x int) (int, error) {
	m.running.Add(1)
	defer m.running.Add(-1)
	m.calls[x].Add(1)
	if x%7 == 0 {
		busy(time.Duration(rand.IntN(30)) * time.Microsecond)
	}
	return x*3 + 1, nil
}

// TestMapStreamOrder: every result, in input order, each element's fn
// called once, and never more read from seq than the window holds ahead
// of what was yielded.
func TestMapStreamOrder(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		for _, n := range []int{0, 1, 5, scale(3000)} {
			m := newStreamModel(n)
			window := int64(mapStreamPerWorker * len(p.workersNow()))
			i := 0
			for v, err := range MapStream(context.Background(), p, m.seq, m.fn) {
				if err != nil || v != i*3+1 {
					t.Fatalf("n=%d: result %d = %d, %v", n, i, v, err)
				}
				i++
				if ahead := m.read.Load() - int64(i); ahead > window {
					t.Fatalf("n=%d: %d elements read ahead of the %d yielded, window %d", n, ahead, i, window)
				}
			}
			if i != n {
				t.Fatalf("n=%d: %d results", n, i)
			}
			for x := range m.calls {
				if c := m.calls[x].Load(); c != 1 {
					t.Fatalf("n=%d: fn(%d) called %d times", n, x, c)
				}
			}
			out, err := MapSeq(context.Background(), p, m.seq, func(x int) (int, error) { return x * 3, nil })
			if err != nil || len(out) != n || out == nil {
				t.Fatalf("MapSeq n=%d: %d results, %v", n, len(out), err)
			}
			for x, v := range out {
				if v != x*3 {
					t.Fatalf("MapSeq out[%d] = %d", x, v)
				}
			}
		}
	})
}

// TestMapStreamYieldsWhileComputing: the first result is yielded while
// later elements are still running. Elements 1 to W-1 (element 1 with a
// single worker) block until the loop body has the first result, so a
// stream that held its results back until the end would never finish.
//
// Fewer blockers than workers, so that one worker is always left to run
// element 0. When every element after the first blocked, the test hung
// about once in 300 runs under -race (w3-q2 and w4): a worker that had
// looked at its own queue just before element 0 arrived stole element 1,
// the others stole or popped later elements, and element 0 sat at the
// head of a queue whose worker was blocked in another element, which no
// pool can avoid when tasks wait on each other outside the pool.
func TestMapStreamYieldsWhileComputing(t *testing.T) {
	watchdog(t, 20*time.Second)
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		gotFirst := make(chan struct{})
		w := len(p.workersNow())
		blockers := max(w-1, 1)
		n := 4 * mapStreamPerWorker * w
		seq := func(yield func(int) bool) {
			for i := range n {
				if !yield(i) {
					return
				}
			}
		}
		k := 0
		for v, err := range MapStream(context.Background(), p, seq, func(x int) (int, error) {
			if x > 0 && x <= blockers {
				<-gotFirst
			}
			return x, nil
		}) {
			if err != nil || v != k {
				t.Fatalf("result %d = %d, %v", k, v, err)
			}
			if k == 0 {
				close(gotFirst)
			}
			k++
		}
		if k != n {
			t.Fatalf("%d results of %d", k, n)
		}
	})
}

// TestMapStreamStops: a failing element, a panic, a break in the loop
// body and the end of ctx each end the stream: the results before it in
// order, the error once, nothing after; seq is read no further than the
// window; and when the loop ends no fn of the stream is running, nothing
// is queued, and no goroutine was left.
func TestMapStreamStops(t *testing.T) {
	watchdog(t, 60*time.Second)
	errStop := errors.New("stop")
	eachShape(t, configs(), func(t *testing.T, p *Pool) {
		base := runtime.NumGoroutine()
		window := int64(mapStreamPerWorker * len(p.workersNow()))
		for _, how := range []string{"error", "panic", "break", "ctx"} {
			for _, at := range []int{0, 3, 100} {
				m := newStreamModel(1000)
				ctx, cancel := context.WithCancel(context.Background())
				fn := func(x int) (int, error) {
					if x == at {
						switch how {
						case "error":
							m.calls[x].Add(1)
							return 0, errStop
						case "panic":
							m.calls[x].Add(1)
							panic(errStop)
						}
					}
					return m.fn(x)
				}
				var got []int
				var gotErr error
				errs := 0
				if how == "ctx" && at == 0 {
					cancel() // done before the loop: it reads nothing
				}
				for v, err := range MapStream(ctx, p, m.seq, fn) {
					if err != nil {
						gotErr = err
						errs++
						continue // a stream yields nothing after its error
					}
					got = append(got, v)
					if how == "break" && len(got) == at {
						break
					}
					if how == "ctx" && len(got) == at {
						cancel()
					}
				}
				if how == "break" && at == 0 {
					// A break before the first result needs one: the
					// loop read everything.
					cancel()
					continue
				}
				if r := m.running.Load(); r != 0 {
					t.Fatalf("%s at %d: %d calls still running after the loop", how, at, r)
				}
				switch how {
				case "error", "panic":
					if errs != 1 || !errors.Is(gotErr, errStop) {
						t.Fatalf("%s at %d: %d errors, %v", how, at, errs, gotErr)
					}
					var pe *PanicError
					if (how == "panic") != errors.As(gotErr, &pe) {
						t.Fatalf("%s at %d: error %v", how, at, gotErr)
					}
				case "ctx":
					if errs != 1 || !errors.Is(gotErr, context.Canceled) {
						t.Fatalf("ctx at %d: %d errors, %v", at, errs, gotErr)
					}
				case "break":
					if errs != 0 {
						t.Fatalf("break at %d: error %v", at, gotErr)
					}
				}
				if len(got) != at {
					t.Fatalf("%s at %d: %d results before the end", how, at, len(got))
				}
				for i, v := range got {
					if v != i*3+1 {
						t.Fatalf("%s at %d: result %d = %d", how, at, i, v)
					}
				}
				if r := m.read.Load(); r > int64(at)+window {
					t.Fatalf("%s at %d: read %d elements, window %d", how, at, r, window)
				}
				cancel()
			}
		}
		if !eventually(10*time.Second, func() bool { s := p.Stats(); return s.QueueDepth == 0 && s.Completed+s.Skipped == s.Submitted }) {
			t.Fatalf("tasks left behind: %+v", p.Stats())
		}
		// The pool's own workers are in base: the stream made no goroutine.
		if !eventually(5*time.Second, func() bool { return runtime.NumGoroutine() <= base }) {
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), base, allStacks())
		}
	})
}

// TestMapStreamNested: a task ranging over a stream on its own pool, at
// one worker too, runs the stream's elements instead of waiting for a
// worker.
func TestMapStreamNested(t *testing.T) {
	watchdog(t, 20*time.Second)
	eachShape(t, nestShapes(), func(t *testing.T, p *Pool) {
		runNested(t, p, func(i int) error {
			seq := slices.Values([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
			sum := 0
			for v, err := range MapStream(context.Background(), p, seq, func(x int) (int, error) { return x + i, nil }) {
				if err != nil {
					return err
				}
				sum += v
			}
			if want := 78 + 12*i; sum != want {
				return fmt.Errorf("sum %d, want %d", sum, want)
			}
			out, err := MapSeq(context.Background(), p, seq, func(x int) (int, error) { return x, nil })
			if err != nil || len(out) != 12 {
				return fmt.Errorf("MapSeq: %v, %v", out, err)
			}
			return nil
		})
	})
}

// TestMapSeqClosed: a closed pool's stream yields ErrClosed once.
func TestMapSeqClosed(t *testing.T) {
	p := New(Config{Workers: 2})
	p.Close()
	var seq iter.Seq[int] = slices.Values([]int{1, 2, 3})
	if _, err := MapSeq(context.Background(), p, seq, func(x int) (int, error) { return x, nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("MapSeq on a closed pool = %v", err)
	}
}

// TestMapStreamSkipsQueued: elements still queued when the loop is left
// (a break, an error, the end of ctx) do not run: they are skipped, and
// Stats counts them in SkippedCtx. With one worker, for break and error,
// that worker ranges over the stream from a task, so an element runs only
// when the stream's own waits run it: the first in the wait for the first
// result, which fills the window, the rest, still queued, in the wait
// after the loop, where they must find their context ended. (Ranged over
// from outside, the worker that ran the first element would race the
// loop for the next.) For ctx the loop ranges from outside, with the
// first element blocked until ctx has ended.
func TestMapStreamSkipsQueued(t *testing.T) {
	watchdog(t, 20*time.Second)
	errStop := errors.New("stop")
	for _, how := range []string{"break", "error", "ctx"} {
		t.Run(how, func(t *testing.T) {
			p := New(Config{Workers: 1})
			defer p.Close()
			window := mapStreamPerWorker * len(p.workersNow())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls, read atomic.Int64
			seq := func(yield func(int) bool) {
				for i := 0; ; i++ {
					read.Add(1)
					if !yield(i) {
						return
					}
				}
			}
			gate := make(chan struct{})
			fn := func(x int) (int, error) {
				calls.Add(1)
				if x == 0 && how == "error" {
					return 0, errStop
				}
				if x == 0 && how == "ctx" {
					<-gate
				}
				return x, nil
			}
			base := p.Stats().SkippedCtx
			loop := func() error {
				for _, err := range MapStream(ctx, p, seq, fn) {
					if err != nil {
						return err
					}
					if how == "break" {
						break
					}
				}
				return nil
			}
			var err error
			if how == "ctx" {
				// The worker is in element 0; once the rest of the window
				// is queued behind it, end ctx, then let element 0 return.
				go func() {
					defer close(gate)
					if !eventually(10*time.Second, func() bool {
						return calls.Load() == 1 && p.Stats().QueueDepth == window-1
					}) {
						t.Errorf("the window never filled: %d calls, %+v", calls.Load(), p.Stats())
					}
					cancel()
				}()
				err = loop()
			} else {
				_, err = Submit(context.Background(), p, func() (int, error) { return 0, loop() }).Wait(context.Background())
			}
			switch how {
			case "break":
				if err != nil {
					t.Fatalf("break: %v", err)
				}
			case "error":
				if !errors.Is(err, errStop) {
					t.Fatalf("error: %v", err)
				}
			case "ctx":
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("ctx: %v", err)
				}
			}
			if c := calls.Load(); c != 1 {
				t.Errorf("%d fn calls after the loop, want 1: the %d elements queued behind the first must not run", c, window-1)
			}
			// A worker counts a skip after the skipped call's Wait returns.
			if !eventually(10*time.Second, func() bool { s := p.Stats(); return s.Completed+s.Skipped == s.Submitted }) {
				t.Fatalf("tasks left behind: %+v", p.Stats())
			}
			if s := p.Stats().SkippedCtx - base; s != uint64(window-1) {
				t.Errorf("SkippedCtx %d, want %d (read %d)", s, window-1, read.Load())
			}
		})
	}
}

// TestMapStreamWindow: seq is read only while the window has room: at
// every element seq produces, and at every result the loop body gets, at
// most four elements per worker have been read and not yet yielded. Each
// fn blocks until the test opens its gate, which it does only once the
// stream can read no further (the window full, or seq at its end), so the
// window does fill. Only shapes whose queues hold a whole window: with
// smaller ones the submit waits for room first.
func TestMapStreamWindow(t *testing.T) {
	watchdog(t, 60*time.Second)
	var shapes []shape
	for _, c := range configs() {
		if c.cfg.QueueSize == 0 {
			shapes = append(shapes, c)
		}
	}
	eachShape(t, shapes, func(t *testing.T, p *Pool) {
		window := int64(mapStreamPerWorker * len(p.workersNow()))
		n := int(5*window + 3)
		gates := make([]chan struct{}, n)
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		var produced, yielded atomic.Int64
		var over atomic.Bool // reported once
		check := func(where string) {
			if ahead := produced.Load() - yielded.Load(); ahead > window && over.CompareAndSwap(false, true) {
				t.Errorf("at a %s: %d read and %d yielded, %d ahead of a window of %d", where, produced.Load(), yielded.Load(), ahead, window)
			}
		}
		seq := func(yield func(int) bool) {
			for i := range n {
				produced.Add(1)
				check("read")
				if !yield(i) {
					return
				}
			}
		}
		opened := make(chan struct{})
		go func() {
			defer close(opened)
			open := 0
			defer func() {
				for ; open < n; open++ {
					close(gates[open])
				}
			}()
			for open < n {
				var upto int
				if !eventually(20*time.Second, func() bool {
					pr := produced.Load()
					upto = int(pr)
					return upto > open && (upto == n || pr-yielded.Load() >= window)
				}) {
					t.Errorf("stuck: %d read, %d yielded, %d opened", produced.Load(), yielded.Load(), open)
					return
				}
				for ; open < upto; open++ {
					close(gates[open])
				}
			}
		}()
		i := 0
		for v, err := range MapStream(context.Background(), p, seq, func(x int) (int, error) {
			<-gates[x]
			return x, nil
		}) {
			if err != nil || v != i {
				t.Fatalf("result %d = %d, %v", i, v, err)
			}
			check("yield")
			yielded.Add(1)
			i++
		}
		<-opened
		if i != n {
			t.Fatalf("%d results of %d", i, n)
		}
	})
}
