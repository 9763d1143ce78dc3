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
)

// batchShapes are the pool shapes the CallBatch tests run on: one worker
// (a packet is one run), several (runs claimed by several workers, with
// and without stealing), and queues too small for the helper entries.
func batchShapes() []shape {
	return []shape{
		{"w1", Config{Workers: 1}},
		{"w1-q1", Config{Workers: 1, QueueSize: 1}},
		{"w2", Config{Workers: 2}},
		{"w3-q2", Config{Workers: 3, QueueSize: 2}},
		{"w4-nosteal", Config{Workers: 4, NoSteal: true}},
	}
}

// TestCallBatchWaitsWithinBatch: a call waits for a later call of its
// own batch, directly (a chain: call i waits for call i+1) or through a
// Submit (the first call of each packet waits for a task that waits for
// the packet's last call). The worker that runs a packet holds the calls
// it has claimed and not run, the results it has not published, and the
// packet's unclaimed calls (its queue entries may all be on stacks like
// this one); it must give them up before it waits, or the pool
// deadlocks (the watchdog's dump names it).
func TestCallBatchWaitsWithinBatch(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, via := range []string{"chain", "submit"} {
		t.Run(via, func(t *testing.T) {
			eachShape(t, batchShapes(), func(t *testing.T, p *Pool) {
				ctx := context.Background()
				for _, n := range []int{2, 7, 33, 100, 300} {
					out := make([]Future[int], n)
					// A packet's futures are all written before it is
					// queued; a later packet's may not be yet.
					last := func(i int) int { return min((i/batchChunk+1)*batchChunk, n) - 1 }
					tk := NewTask(p, func(i int) int {
						if i == last(i) {
							return 1
						}
						if via == "chain" {
							v, err := out[i+1].Wait(ctx)
							if err != nil {
								panic(err)
							}
							return v + 1
						}
						if i%batchChunk != 0 {
							return 1
						}
						v, err := Submit(ctx, p, func() (int, error) { return out[last(i)].Wait(ctx) }).Wait(ctx)
						if err != nil {
							panic(err)
						}
						return v + 1
					})
					ins := make([]int, n)
					for i := range ins {
						ins[i] = i
					}
					if got := tk.CallBatch(ins, out); got != n {
						t.Fatalf("CallBatch(%d) accepted %d", n, got)
					}
					// The first call of each packet heads the waits:
					// waiting for it takes its value; the calls that
					// waited took the others'.
					for i := 0; i < n; i += batchChunk {
						want := 2
						if via == "chain" {
							want = last(i) - i + 1
						}
						if v, err := out[i].Wait(ctx); v != want || err != nil {
							t.Fatalf("n=%d: call %d = %v, %v; want %d", n, i, v, err, want)
						}
						if via == "submit" {
							for k := i + 1; k < last(i); k++ {
								if v, err := out[k].Wait(ctx); v != 1 || err != nil {
									t.Fatalf("n=%d: call %d = %v, %v", n, k, v, err)
								}
							}
						}
					}
				}
			})
		})
	}
}

// TestCallBatchResultsOneByOne: each result of a batch is ready when its
// call returns, and a caller parked on it is woken then, not when its run
// of calls ends: here a call blocks until its caller has seen the result
// of the call before it (taken at once, or by a Wait parked before the
// call was let go). Results or rings held back to the end of a run would
// hang it.
func TestCallBatchResultsOneByOne(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, batchShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		for _, park := range []bool{false, true} {
			gates := make([]chan struct{}, 40)
			for i := range gates {
				gates[i] = make(chan struct{})
			}
			tk := NewTask(p, func(i int) int {
				<-gates[i]
				return i
			})
			ins := make([]int, len(gates))
			for i := range ins {
				ins[i] = i
			}
			fs := make([]Future[int], len(ins))
			tk.CallBatch(ins, fs)
			for i, f := range fs {
				if !park {
					close(gates[i])
					if v, err := f.Wait(ctx); v != i || err != nil {
						t.Fatalf("call %d: %v, %v", i, v, err)
					}
					continue
				}
				got := make(chan error, 1)
				go func() {
					v, err := f.Wait(ctx)
					if err == nil && v != i {
						err = fmt.Errorf("value %d", v)
					}
					got <- err
				}()
				// Release the call only once its Wait has parked: one not
				// parked yet would take the value at once, untested.
				if !eventually(10*time.Second, func() bool { return blockedIn("pool.Future[...].wait(") == 1 }) {
					t.Fatalf("the Wait on call %d never parked", i)
				}
				close(gates[i])
				if err := <-got; err != nil {
					t.Fatalf("parked wait on call %d: %v", i, err)
				}
			}
		}
	})
}

// TestCallBatchPanicAndGoexit: a call that panics, or calls
// runtime.Goexit, fails alone; every other call of its batch returns its
// value, the worker lives on (a Goexit's replacement runs the rest of the
// batch), and the counters add up.
func TestCallBatchPanicAndGoexit(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, kind := range []string{"panic", "goexit", "goexit-nested"} {
		t.Run(kind, func(t *testing.T) {
			eachShape(t, batchShapes(), func(t *testing.T, p *Pool) {
				ctx := context.Background()
				inner := NewTask(p, func(int) int { runtime.Goexit(); return 0 })
				tk := NewTask(p, func(x int) int {
					if x < 0 {
						switch kind {
						case "panic":
							panic(errBoom)
						case "goexit":
							runtime.Goexit()
						default: // waits on a call that ends its goroutine
							_, err := inner.Call(0).Wait(ctx)
							panic(fmt.Sprintf("unreachable: %v", err))
						}
					}
					return x + 1
				})
				calls := 0
				for _, n := range []int{1, 5, 100, 200} {
					for _, bad := range []int{0, n / 2, n - 1} {
						ins := make([]int, n)
						for i := range ins {
							ins[i] = i
						}
						ins[bad] = -1
						out := make([]Future[int], n)
						tk.CallBatch(ins, out)
						calls += n
						for i, f := range out {
							v, err := f.Wait(ctx)
							if i != bad {
								if v != i+1 || err != nil {
									t.Fatalf("n=%d bad=%d: call %d = %v, %v", n, bad, i, v, err)
								}
								continue
							}
							var pe *PanicError
							if !errors.As(err, &pe) {
								t.Fatalf("n=%d: failing call: %v, %v", n, v, err)
							}
							if kind == "panic" && !errors.Is(err, errBoom) {
								t.Fatalf("n=%d: panic: %v", n, err)
							}
							// Nested, the inner call may run on another
							// worker: the outer call then panics on its error.
							if kind == "goexit" && pe.Value != goexitValue {
								t.Fatalf("n=%d: goexit: %v", n, pe.Value)
							}
						}
					}
				}
				// Every worker survived: all of them still run calls.
				if v, err := tk.Call(1).Wait(ctx); v != 2 || err != nil {
					t.Fatalf("after: %v, %v", v, err)
				}
				p.Close()
				s := p.Stats()
				want := uint64(calls + 1)
				if kind == "goexit-nested" {
					want += 12 // the inner calls
				}
				if s.Completed != want || s.Submitted != want || s.Panicked != 12*map[bool]uint64{true: 2, false: 1}[kind == "goexit-nested"] {
					t.Fatalf("stats %+v, want %d completed", s, want)
				}
			})
		})
	}
}

// TestCallBatchShutdownAbandons: packets queued behind blocked workers
// are abandoned by Shutdown's expiry: every call fails with ErrClosed,
// none runs, and the abandoned count is the calls'.
func TestCallBatchShutdownAbandons(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []shape{{"w1", Config{Workers: 1}}, {"w3", Config{Workers: 3}}, {"w3-nosteal", Config{Workers: 3, NoSteal: true}}} {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			g := newGate()
			for range len(p.workersNow()) {
				p.Go(g.block)
			}
			for range len(p.workersNow()) {
				<-g.entered
			}
			var ran atomic.Int32
			tk := NewTask(p, func(x int) int { ran.Add(1); return x })
			const n = 300
			out := make([]Future[int], n)
			if got := tk.CallBatch(make([]int, n), out); got != n {
				t.Fatalf("accepted %d", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			var se *ShutdownError
			if err := p.Shutdown(ctx); !errors.As(err, &se) || se.Abandoned != n {
				t.Fatalf("Shutdown = %v, want %d abandoned", err, n)
			}
			for i, f := range out {
				if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			close(g.release)
			p.Close()
			if ran.Load() != 0 {
				t.Fatalf("%d abandoned calls ran", ran.Load())
			}
			if s := p.Stats(); s.Abandoned != n || s.Completed != uint64(len(p.workersNow())) {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// TestCallBatchFutures: batch futures behave as Call's: Done closes when
// the value is ready, a second Wait (or one on a copy) is refused, a
// recycled packet does not answer a stale future, and a taken packet
// keeps neither arguments nor results.
func TestCallBatchFutures(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	gate := make(chan struct{})
	tk := NewTask(p, func(b *[64]byte) *[64]byte { <-gate; return b })
	ctx := context.Background()
	ins := make([]*[64]byte, 20)
	for i := range ins {
		ins[i] = new([64]byte)
	}
	out := make([]Future[*[64]byte], len(ins))
	tk.CallBatch(ins, out)
	dones := make([]<-chan struct{}, len(out))
	for i, f := range out {
		dones[i] = f.Done()
		select {
		case <-dones[i]:
			t.Fatalf("Done %d closed before the call ran", i)
		default:
		}
	}
	close(gate)
	for i, f := range out {
		<-dones[i]
		cp := f
		if v, err := f.Wait(ctx); v != ins[i] || err != nil {
			t.Fatalf("call %d: %v, %v", i, v, err)
		}
		if _, err := cp.Wait(ctx); !errors.Is(err, ErrFutureUsed) {
			t.Fatalf("copy of call %d: %v", i, err)
		}
	}
	// Every future taken: the packet is free, and clean, once the
	// worker's queue entry has left it too (it drops its reference after
	// it published the last result, which the Waits may see first).
	var pk *packet[*[64]byte, *[64]byte]
	if !eventually(5*time.Second, func() bool {
		var ok bool
		pk, ok = tk.packetList(1).get()
		return ok
	}) {
		t.Fatal("packet not recycled")
	}
	for i := range pk.elems {
		if e := &pk.elems[i]; e.in != nil || e.out != nil || e.err != nil {
			t.Fatalf("recycled packet slot %d still holds the call's values", i)
		}
	}
	tk.putPacket(pk)
	// The packet is reused by the next batch; the old futures stay spent.
	out2 := make([]Future[*[64]byte], len(ins))
	tk.CallBatch(ins, out2)
	if out2[0].r != out[0].r {
		t.Fatal("packet not reused")
	}
	if _, err := out[0].Wait(ctx); !errors.Is(err, ErrFutureUsed) {
		t.Fatalf("stale future: %v", err)
	}
	for i, f := range out2 {
		if v, err := f.Wait(ctx); v != ins[i] || err != nil {
			t.Fatalf("reused packet, call %d: %v, %v", i, v, err)
		}
	}
}

// TestCallBatchConcurrent: callers batch, wait in any order and on
// copies at once, on every shape; every call's value arrives exactly
// once and the counters add up.
func TestCallBatchConcurrent(t *testing.T) {
	watchdog(t, 60*time.Second)
	eachShape(t, append(batchShapes(), shape{"w2-spin", Config{Workers: 2, Park: knit.Park{Spin: 20 * time.Microsecond}}}), func(t *testing.T, p *Pool) {
		var ran atomic.Int64
		tk := NewTask(p, func(x int) int { ran.Add(1); return 2*x + 1 })
		const callers = 4
		rounds := scale(300)
		var wg sync.WaitGroup
		var calls atomic.Int64
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for r := range rounds {
					n := 1 + (r*31+c*7)%150
					ins := make([]int, n)
					for i := range ins {
						ins[i] = c<<24 | r<<8 | i
					}
					out := make([]Future[int], n)
					tk.CallBatch(ins, out)
					calls.Add(int64(n))
					var got atomic.Int64
					var inner sync.WaitGroup
					// Two waiters per future, from the back: one wins.
					for w := range 2 {
						inner.Add(1)
						go func() {
							defer inner.Done()
							for i := n - 1; i >= 0; i-- {
								v, err := out[i].Wait(ctx)
								switch {
								case err == nil && v == 2*ins[i]+1:
									got.Add(1)
								case errors.Is(err, ErrFutureUsed):
								default:
									t.Errorf("waiter %d call %d: %v, %v", w, i, v, err)
								}
							}
						}()
					}
					inner.Wait()
					if got.Load() != int64(n) {
						t.Errorf("caller %d round %d: %d values for %d calls", c, r, got.Load(), n)
						return
					}
				}
			}()
		}
		wg.Wait()
		p.Close()
		if s := p.Stats(); s.Completed != uint64(calls.Load()) || ran.Load() != calls.Load() || s.Submitted != s.Completed {
			t.Fatalf("ran %d of %d; stats %+v", ran.Load(), calls.Load(), s)
		}
	})
}

// TestWaitAll: values in order; a failing call stops it with the count
// taken and that call's error, the later futures still usable; a context
// that ends stops it before the pending future, which stays usable;
// futures of every kind mixed (batch, Call, Submit, refused) are taken
// once and their slots recycled once.
func TestWaitAll(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, batchShapes(), func(t *testing.T, p *Pool) {
		ctx := context.Background()
		tk := NewTask(p, func(x int) int {
			if x < 0 {
				panic(errBoom)
			}
			return x + 1
		})
		for _, n := range []int{0, 1, 99, 300} {
			ins := make([]int, n)
			for i := range ins {
				ins[i] = i
			}
			fs := make([]Future[int], n)
			tk.CallBatch(ins, fs)
			out := make([]int, n+1) // longer is fine
			if k, err := WaitAll(ctx, fs, out); k != n || err != nil {
				t.Fatalf("n=%d: WaitAll = %d, %v", n, k, err)
			}
			for i := range n {
				if out[i] != i+1 {
					t.Fatalf("n=%d: out[%d] = %d", n, i, out[i])
				}
			}
			// Every future is spent now, and a second WaitAll says so.
			if k, err := WaitAll(ctx, fs, out); n > 0 && (k != 1 || !errors.Is(err, ErrFutureUsed)) {
				t.Fatalf("n=%d: second WaitAll = %d, %v", n, k, err)
			}
		}
		// A failure in the middle.
		ins := []int{0, 1, -1, 3, 4}
		fs := make([]Future[int], len(ins))
		tk.CallBatch(ins, fs)
		out := make([]int, len(ins))
		if k, err := WaitAll(ctx, fs, out); k != 3 || !errors.Is(err, errBoom) {
			t.Fatalf("WaitAll over a panic = %d, %v", k, err)
		}
		if k, err := WaitAll(ctx, fs[3:], out[3:]); k != 2 || err != nil || out[3] != 4 || out[4] != 5 {
			t.Fatalf("WaitAll of the rest = %d, %v, %v", k, err, out)
		}
		// Every kind of future, mixed, and the slots they free reused.
		for round := range 20 {
			var mixed []Future[int]
			batch := make([]Future[int], 40)
			tk.CallBatch(make([]int, 40), batch)
			for i, f := range batch {
				mixed = append(mixed, f, tk.Call(i))
				if i%10 == 0 {
					mixed = append(mixed, Submit(ctx, p, func() (int, error) { return 1, nil }))
				}
			}
			out := make([]int, len(mixed))
			if k, err := WaitAll(ctx, mixed, out); k != len(mixed) || err != nil {
				t.Fatalf("round %d: mixed WaitAll = %d, %v", round, k, err)
			}
		}
		// A context that ends while a call runs.
		gate := make(chan struct{})
		slow := NewTask(p, func(x int) int {
			if x == 1 {
				<-gate
			}
			return x
		})
		fs = make([]Future[int], 3)
		slow.CallBatch([]int{0, 1, 2}, fs)
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if k, err := WaitAll(cctx, fs, out); k != 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitAll past its context = %d, %v", k, err)
		}
		close(gate)
		if k, err := WaitAll(ctx, fs[1:], out); k != 2 || err != nil || out[0] != 1 || out[1] != 2 {
			t.Fatalf("WaitAll after the context = %d, %v, %v", k, err, out[:2])
		}
	})
	// Refused futures and the zero Future.
	p := New(Config{Workers: 1})
	tk := NewTask(p, func(x int) int { return x })
	p.Close()
	fs := make([]Future[int], 3)
	tk.CallBatch([]int{1, 2, 3}, fs)
	if k, err := WaitAll(context.Background(), fs, make([]int, 3)); k != 1 || !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitAll of refused calls = %d, %v", k, err)
	}
	if k, err := WaitAll(context.Background(), make([]Future[int], 2), make([]int, 2)); k != 1 || !errors.Is(err, ErrZeroFuture) {
		t.Fatalf("WaitAll of zero Futures = %d, %v", k, err)
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "len(out)") {
			t.Fatalf("short out: panic %v", v)
		}
	}()
	WaitAll(context.Background(), fs, make([]int, 2))
}

// TestWaitAllCopies: two WaitAlls over the same futures take every value
// exactly once between them, and the packets come back to the task.
func TestWaitAllCopies(t *testing.T) {
	watchdog(t, 30*time.Second)
	eachShape(t, batchShapes(), func(t *testing.T, p *Pool) {
		tk := NewTask(p, func(x int) int { return x })
		for round := range scale(200) {
			n := 1 + round%150
			fs := make([]Future[int], n)
			tk.CallBatch(make([]int, n), fs)
			var got atomic.Int64
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rest := fs
					out := make([]int, n)
					for len(rest) > 0 {
						k, err := WaitAll(context.Background(), rest, out)
						if err == nil {
							got.Add(int64(k))
						} else if errors.Is(err, ErrFutureUsed) {
							got.Add(int64(k - 1))
						} else {
							t.Error(err)
							return
						}
						rest = rest[k:]
					}
				}()
			}
			wg.Wait()
			if got.Load() != int64(n) {
				t.Fatalf("round %d: %d values for %d calls", round, got.Load(), n)
			}
		}
	})
}
