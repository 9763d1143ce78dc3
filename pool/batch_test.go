package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
			for range len(p.workers) {
				p.Go(g.block)
			}
			for range len(p.workers) {
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
			if s := p.Stats(); s.Abandoned != n || s.Completed != uint64(len(p.workers)) {
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
	// Every future taken: the packet is free, and clean.
	pk, ok := tk.packetList(1).get()
	if !ok {
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
	eachShape(t, append(batchShapes(), shape{"w2-spin", Config{Workers: 2, Spin: 20 * time.Microsecond}}), func(t *testing.T, p *Pool) {
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
