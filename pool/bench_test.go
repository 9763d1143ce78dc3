package pool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/cputime"
)

// The benchmarks compare the pool with the standard library's shapes in
// the same run, as sub-benchmarks: on a noisy machine only side-by-side
// ratios mean anything. Each reports CPU time per operation from
// getrusage (cpu-µs/op) next to wall time, and allocations.
//
// go test's -count repeats each sub-benchmark back to back (A A A B B B),
// so for interleaved rounds (A B A B) run the test binary once per round:
//
//	go test -c -o pool.test ./pool/
//	for i in 1 2 3 4 5; do ./pool.test -test.run '^$' -test.bench .; done

// cpuMeter reports the process's CPU time per op over a benchmark loop.
type cpuMeter struct{ start time.Duration }

func startCPU(b *testing.B) cpuMeter {
	b.ReportAllocs()
	b.ResetTimer()
	return cpuMeter{cputime.Used()}
}

func (m cpuMeter) stop(b *testing.B, ops int) {
	b.StopTimer()
	b.ReportMetric(float64(cputime.Used()-m.start)/1e3/float64(ops), "cpu-µs/op")
}

// BenchmarkGo is the per-task overhead of fire-and-forget trivial tasks:
// submit b.N tasks, wait until all ran.
func BenchmarkGo(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("pool/w%d", w), func(b *testing.B) {
			p := New(Config{Workers: w})
			defer p.Close()
			var n atomic.Int64
			done := make(chan struct{})
			target := int64(b.N)
			f := func() {
				if n.Add(1) == target {
					close(done)
				}
			}
			m := startCPU(b)
			for range b.N {
				p.Go(f)
			}
			<-done
			m.stop(b, b.N)
		})
	}
	b.Run("goroutine+waitgroup", func(b *testing.B) {
		var n atomic.Int64
		f := func() { n.Add(1) }
		var wg sync.WaitGroup
		m := startCPU(b)
		for range b.N {
			wg.Add(1)
			go func() {
				f()
				wg.Done()
			}()
		}
		wg.Wait()
		m.stop(b, b.N)
	})
	b.Run("chanworker", func(b *testing.B) {
		// One worker goroutine fed by a buffered channel as deep as the
		// pool's queue.
		ch := make(chan func(), DefaultQueueSize)
		exited := make(chan struct{})
		go func() {
			for f := range ch {
				f()
			}
			close(exited)
		}()
		var n atomic.Int64
		done := make(chan struct{})
		target := int64(b.N)
		f := func() {
			if n.Add(1) == target {
				close(done)
			}
		}
		m := startCPU(b)
		for range b.N {
			ch <- f
		}
		<-done
		m.stop(b, b.N)
		close(ch)
		<-exited
	})
}

// BenchmarkCallWait is Knitting's IPC shape: submit N calls, then wait for
// all N; one op is the whole round of N. The batch rows submit with
// CallBatch and wait with WaitAll. The pool's worker either spins
// (Park.Spin knit.DefaultWorkerSpin, Knitting's single-worker default) or
// parks at once; the peer is a worker goroutine with request and response
// channels; the floor is two goroutines handing a word back and forth
// through one atomic (N=1 only).
func BenchmarkCallWait(b *testing.B) {
	sq := func(x int) int { return x*x + 1 }
	for _, n := range []int{1, 25, 50, 100} {
		for _, v := range []struct {
			name string
			cfg  Config
		}{
			{"spin", Config{Workers: 1, Park: knit.Park{Spin: knit.DefaultWorkerSpin}}},
			{"park", Config{Workers: 1, Park: knit.Park{Spin: knit.NoSpin}}},
		} {
			b.Run(fmt.Sprintf("n=%d/pool-%s", n, v.name), func(b *testing.B) {
				p := New(v.cfg)
				defer p.Close()
				tk := NewTask(p, sq)
				fs := make([]Future[int], n)
				ctx := context.Background()
				m := startCPU(b)
				for range b.N {
					for i := range fs {
						fs[i] = tk.Call(i)
					}
					for i := range fs {
						if r, _ := fs[i].Wait(ctx); r != i*i+1 {
							b.Fatal("wrong result")
						}
					}
				}
				m.stop(b, b.N)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
			})
			if n > 1 {
				b.Run(fmt.Sprintf("n=%d/pool-%s-batch", n, v.name), func(b *testing.B) {
					p := New(v.cfg)
					defer p.Close()
					tk := NewTask(p, sq)
					ins := make([]int, n)
					for i := range ins {
						ins[i] = i
					}
					fs := make([]Future[int], n)
					vs := make([]int, n)
					ctx := context.Background()
					m := startCPU(b)
					for range b.N {
						tk.CallBatch(ins, fs)
						if k, err := WaitAll(ctx, fs, vs); k != n || err != nil {
							b.Fatal(k, err)
						}
						for i, v := range vs {
							if v != i*i+1 {
								b.Fatal("wrong result")
							}
						}
					}
					m.stop(b, b.N)
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
				})
			}
		}
		if n > 1 {
			// The batch row with a Wait per future instead of WaitAll.
			b.Run(fmt.Sprintf("n=%d/pool-park-batch-waiteach", n), func(b *testing.B) {
				p := New(Config{Workers: 1, Park: knit.Park{Spin: knit.NoSpin}})
				defer p.Close()
				tk := NewTask(p, sq)
				ins := make([]int, n)
				for i := range ins {
					ins[i] = i
				}
				fs := make([]Future[int], n)
				ctx := context.Background()
				m := startCPU(b)
				for range b.N {
					tk.CallBatch(ins, fs)
					for i := range fs {
						if r, _ := fs[i].Wait(ctx); r != i*i+1 {
							b.Fatal("wrong result")
						}
					}
				}
				m.stop(b, b.N)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
			})
		}
		b.Run(fmt.Sprintf("n=%d/chanworker", n), func(b *testing.B) {
			req := make(chan int, 128)
			resp := make(chan int, 128)
			go func() {
				for x := range req {
					resp <- sq(x)
				}
			}()
			defer close(req)
			m := startCPU(b)
			for range b.N {
				for i := range n {
					req <- i
				}
				for i := range n {
					if r := <-resp; r != i*i+1 {
						b.Fatal("wrong result")
					}
				}
			}
			m.stop(b, b.N)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
		})
		if n == 1 {
			b.Run("n=1/floor-atomic", func(b *testing.B) {
				// The handoff floor: a spinning responder on one word.
				var word atomic.Uint64 // odd: a request is pending
				stop := make(chan struct{})
				go func() {
					runtime.LockOSThread()
					for {
						v := word.Load()
						if v&1 == 1 {
							word.Store(v + 1)
							continue
						}
						select {
						case <-stop:
							return
						default:
						}
						knit.Pause(1)
					}
				}()
				m := startCPU(b)
				for i := range b.N {
					word.Store(uint64(2*i + 1))
					for word.Load() != uint64(2*i+2) {
						knit.Pause(1)
					}
				}
				m.stop(b, b.N)
				close(stop)
			})
		}
	}
}

// BenchmarkIdle is the CPU a started, unloaded pool burns: each op is a
// 250 ms window with the pool idle after a short burst of calls (every
// worker has parked, a spinning one after its spin, before the window
// opens). The metric is the process's CPU time over wall time, in cores;
// the "baseline" sub-benchmark is the same window with no pool, so a
// pool's own cost is its figure minus the baseline's. The bench module's
// suite measures the 5-second version.
func BenchmarkIdle(b *testing.B) {
	const window = 250 * time.Millisecond
	measure := func(b *testing.B) {
		b.ResetTimer()
		t0, c0 := time.Now(), cputime.Used()
		for range b.N {
			time.Sleep(window)
		}
		b.ReportMetric(float64(cputime.Used()-c0)/float64(time.Since(t0)), "idle-cores")
	}
	// The window opens once every worker has parked, spin run out: a
	// fixed pause would let a loaded machine count the spin as idle CPU.
	settle := func(b *testing.B, p *Pool) {
		if _, ok := settleParked(p, 10*time.Second); !ok {
			b.Fatalf("workers not parked: %+v", p.Stats())
		}
	}
	b.Run("baseline", func(b *testing.B) { measure(b) })
	for _, w := range []int{1, 2, 4, 8, 15} {
		b.Run(fmt.Sprintf("w%d", w), func(b *testing.B) {
			p := New(Config{Workers: w})
			defer p.Close()
			tk := NewTask(p, func(x int) int { return x })
			for i := range 100 {
				tk.Call(i).Wait(context.Background())
			}
			settle(b, p)
			measure(b)
		})
	}
	// Knitting's single-worker policy forced on, whatever GOMAXPROCS:
	// the spin is paid once per idle transition, then the worker parks.
	b.Run("w1-spin50µs", func(b *testing.B) {
		p := New(Config{Workers: 1, Park: knit.Park{Spin: knit.DefaultWorkerSpin}})
		defer p.Close()
		tk := NewTask(p, func(x int) int { return x })
		for i := range 100 {
			tk.Call(i).Wait(context.Background())
		}
		settle(b, p)
		measure(b)
	})
}

// BenchmarkMixed runs tasks of very different lengths, CPU-bound,
// submitted round-robin with Go on as many workers as GOMAXPROCS, with
// and without stealing. x-ideal is the makespan over the ideal: the
// tasks' measured total run time divided by the workers. Two mixes of
// 2000 tasks per op:
//
//	pareto   Pareto(alpha 1.5) lengths from 20 µs, capped at 2 ms
//	skewed   every workers-th task 500 µs, the rest 20 µs, so round-robin
//	         puts every long task on the same queue
func BenchmarkMixed(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	r := rand.New(rand.NewPCG(3, 4))
	mixes := []struct {
		name string
		ds   []time.Duration
	}{{"pareto", make([]time.Duration, 2000)}, {"skewed", make([]time.Duration, 2000)}}
	for i := range 2000 {
		mixes[0].ds[i] = pareto(r, 20*time.Microsecond, 1.5, 2*time.Millisecond)
		mixes[1].ds[i] = 20 * time.Microsecond
		if i%workers == 0 {
			mixes[1].ds[i] = 500 * time.Microsecond
		}
	}
	for _, mix := range mixes {
		for _, noSteal := range []bool{false, true} {
			name := "steal"
			if noSteal {
				name = "nosteal"
			}
			b.Run(fmt.Sprintf("%s/%s/w%d", mix.name, name, workers), func(b *testing.B) {
				p := New(Config{Workers: workers, NoSteal: noSteal})
				defer p.Close()
				var busy atomic.Int64
				var wg sync.WaitGroup
				tasks := make([]func(), len(mix.ds))
				for i, d := range mix.ds {
					tasks[i] = func() {
						t0 := time.Now()
						for time.Since(t0) < d {
						}
						busy.Add(int64(time.Since(t0)))
						wg.Done()
					}
				}
				var span time.Duration
				m := startCPU(b)
				for range b.N {
					p.next.Store(0) // the same round-robin placement every op
					t0 := time.Now()
					wg.Add(len(tasks))
					for _, f := range tasks {
						p.Go(f)
					}
					wg.Wait()
					span += time.Since(t0)
				}
				m.stop(b, b.N)
				ideal := time.Duration(busy.Load()) / time.Duration(workers)
				b.ReportMetric(float64(span)/float64(ideal), "x-ideal")
				b.ReportMetric(float64(p.Stats().Stolen)/float64(b.N*len(mix.ds)), "stolen/task")
			})
		}
	}
}

// BenchmarkCallBatchGrains: how finely a packet is cut for several
// workers (packetGrains runs per worker), on a CallBatch(100) of two
// workers whose calls take uneven time (0 to 9 units of a busy loop in a
// fixed pattern: about 0.2 us of CPU a call on average in the short
// shape, 7.6 us in the long one), against a Call per message on the same
// pool. Coarse runs leave a worker alone with the slow end of a packet;
// fine runs make every few calls an atomic add on the line the runners
// share, and wake the second worker for less.
func BenchmarkCallBatchGrains(b *testing.B) {
	const n = 100
	ins := make([]int, n)
	for i := range ins {
		ins[i] = i
	}
	for _, shape := range []struct {
		name string
		unit int
	}{{"short", 40}, {"long", 2000}} {
		work := func(x int) int {
			s := x
			for i := range (x % 10) * shape.unit {
				s = s*31 + i
			}
			return s
		}
		for _, g := range []int64{1, 2, 4, 8, 16, 50} {
			b.Run(fmt.Sprintf("%s/grains=%d", shape.name, g), func(b *testing.B) {
				defer setHooks(func(h *testHooks) { h.grains = g })()
				p := New(Config{Workers: 2, Park: knit.Park{Spin: knit.NoSpin}})
				defer p.Close()
				tk := NewTask(p, work)
				fs := make([]Future[int], n)
				vs := make([]int, n)
				ctx := context.Background()
				m := startCPU(b)
				for range b.N {
					tk.CallBatch(ins, fs)
					if k, err := WaitAll(ctx, fs, vs); k != n || err != nil {
						b.Fatal(k, err)
					}
				}
				m.stop(b, b.N)
			})
		}
		b.Run(shape.name+"/call-per-message", func(b *testing.B) {
			p := New(Config{Workers: 2, Park: knit.Park{Spin: knit.NoSpin}})
			defer p.Close()
			tk := NewTask(p, work)
			fs := make([]Future[int], n)
			ctx := context.Background()
			m := startCPU(b)
			for range b.N {
				for i := range fs {
					fs[i] = tk.Call(i)
				}
				for i := range fs {
					if _, err := fs[i].Wait(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			m.stop(b, b.N)
		})
	}
}

// BenchmarkResize is the cost of changing the worker count by thousands,
// on pools of default queues: Resize from one worker to w until every
// worker has parked ("up"), from w back to one until every removed worker
// has left ("down"), and Close of w workers ("close"). Each op builds its
// pool untimed and lets it go quiet (every worker parked) before the
// timed step, so that no worker still busy from the setup is charged to
// it; cpu-ms/op is the process's CPU time over the timed steps. One op is
// seconds at these sizes where a step costs the square of w: run with
// -benchtime 1x.
func BenchmarkResize(b *testing.B) {
	quiet := func(b *testing.B, p *Pool) {
		if _, ok := settleParked(p, time.Minute); !ok {
			b.Fatalf("workers not parked: %+v", p.Stats())
		}
	}
	// grown returns a pool of one worker grown to w, quiet.
	grown := func(b *testing.B, w int) *Pool {
		p := New(Config{Workers: 1})
		p.Resize(w)
		quiet(b, p)
		return p
	}
	// each runs b.N ops of setup (untimed), step (timed) and teardown
	// (untimed).
	each := func(b *testing.B, setup func() *Pool, step, teardown func(*Pool)) {
		var cpu time.Duration
		b.StopTimer()
		for range b.N {
			p := setup()
			c0 := cputime.Used()
			b.StartTimer()
			step(p)
			b.StopTimer()
			cpu += cputime.Used() - c0
			teardown(p)
		}
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
	for _, w := range []int{1024, 8192} {
		b.Run(fmt.Sprintf("up/w%d", w), func(b *testing.B) {
			each(b, func() *Pool { return New(Config{Workers: 1}) },
				func(p *Pool) {
					p.Resize(w)
					for s := p.Stats(); s.Parked != s.Workers; s = p.Stats() {
						time.Sleep(100 * time.Microsecond)
					}
				},
				(*Pool).Close)
		})
		b.Run(fmt.Sprintf("down/w%d", w), func(b *testing.B) {
			each(b, func() *Pool { return grown(b, w) },
				func(p *Pool) {
					p.Resize(1)
					for p.Stats().Retiring != 0 {
						time.Sleep(100 * time.Microsecond)
					}
				},
				(*Pool).Close)
		})
		b.Run(fmt.Sprintf("close/w%d", w), func(b *testing.B) {
			each(b, func() *Pool { return grown(b, w) }, (*Pool).Close, func(*Pool) {})
		})
	}
}
