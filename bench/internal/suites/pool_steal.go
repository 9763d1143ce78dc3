package suites

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The pool-steal suite runs tasks of very different lengths on W workers
// with work stealing on and off. One op is one whole mix: submit every
// task with Go (round-robin over the workers' queues, the same placement
// every op), then wait for the last; its time is the makespan.
//
// The reference row is the ideal: the work split into W exactly equal
// shares run by W goroutines (every task of the mix, each for its length
// divided by W, on each goroutine), so it takes total work / W with the
// same parallelism and the same per-task clock reads as the pool rows.
// The vs-ref column is then makespan / ideal, the figure the pool issue
// sets a target for (within 1.15x with stealing). The ideal row runs W
// threads like the pool rows, so when a busy machine lends the process
// fewer than W CPUs both slow down together; its cores column says how
// many it got. A channel that all W workers read (one shared queue) is
// the balance any pool can hope for, measured alongside.
//
// A task is a busy loop until its length of wall time has passed, as in
// the pool's own BenchmarkMixed. Lengths are drawn once from a fixed
// seed.
var poolStealSuite = harness.Suite{
	Name: "pool-steal",
	Description: "A mix of busy-loop tasks of very different lengths (Pareto, fixed seed) submitted round-robin " +
		"to W workers, work stealing on and off; one op is the whole mix, its time the makespan, and " +
		"vs ref = makespan / ideal, the ideal being total work / W on W goroutines. " +
		"Target: within 1.15x with stealing. The rows need W CPUs: read the cores column.",
	Unit:        "mix (makespan)",
	Ref:         refIdeal,
	PlotRowsOnX: true,
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		for _, m := range stealMixes(cfg.Scale) {
			rows = append(rows, stealRows(m)...)
		}
		return rows
	},
}

const refIdeal = "ideal: W goroutines, total work / W each"

// stealMix is one table: task lengths and the worker count.
type stealMix struct {
	name    string
	workers int
	ds      []time.Duration
}

func (m stealMix) group() string {
	var total time.Duration
	for _, d := range m.ds {
		total += d
	}
	return fmt.Sprintf("%s, %d tasks, %.1f ms of work, %s", m.name, len(m.ds),
		float64(total)/float64(time.Millisecond), knitWorkers(m.workers))
}

// stealMixes: a Pareto mix on GOMAXPROCS workers (at least 2) in quick
// mode; with -full, wider pools, and a skewed mix where round-robin puts
// every long task on the same worker.
func stealMixes(s harness.Scale) []stealMix {
	procs := max(runtime.GOMAXPROCS(0), 2)
	switch s {
	case harness.Tiny:
		return []stealMix{{"pareto 10µs..200µs", 2, paretoMix(40, 10*time.Microsecond, 200*time.Microsecond, 2)}}
	case harness.Full:
		var ms []stealMix
		for _, w := range []int{2, 4, 8, 15} {
			if w > procs {
				break
			}
			ms = append(ms, stealMix{"pareto 10µs..5ms", w, paretoMix(2000*w, 10*time.Microsecond, 5*time.Millisecond, w)})
		}
		return append(ms, stealMix{"skewed 20µs/500µs", 2, skewedMix(2000, 2)})
	}
	w := min(procs, 15)
	return []stealMix{{"pareto 10µs..5ms", w, paretoMix(1000*w, 10*time.Microsecond, 5*time.Millisecond, w)}}
}

// paretoMix draws n lengths from a Pareto distribution with shape 1.16
// (the 80/20 shape: a fifth of the tasks carry most of the work) and
// scale lo, capped at hi, from a fixed seed. n is rounded up to a
// multiple of w so that round-robin placement repeats every op.
func paretoMix(n int, lo, hi time.Duration, w int) []time.Duration {
	n = (n + w - 1) / w * w
	r := rand.New(rand.NewPCG(4, 2))
	const alpha = 1.16
	ds := make([]time.Duration, n)
	for i := range ds {
		u := 1 - r.Float64() // (0, 1]
		ds[i] = min(time.Duration(float64(lo)/math.Pow(u, 1/alpha)), hi)
	}
	return ds
}

// skewedMix is every w-th task 500 µs and the rest 20 µs.
func skewedMix(n, w int) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = 20 * time.Microsecond
		if i%w == 0 {
			ds[i] = 500 * time.Microsecond
		}
	}
	return ds
}

func busyFor(d time.Duration) {
	t0 := time.Now()
	for time.Since(t0) < d {
	}
}

func stealRows(m stealMix) []harness.Row {
	g := m.group()
	return []harness.Row{
		{Group: g, Name: refIdeal, Start: func(harness.Config) (harness.Bench, error) {
			share := make([]time.Duration, len(m.ds))
			for i, d := range m.ds {
				share[i] = d / time.Duration(m.workers)
			}
			return harness.Func(func(n int) error {
				for range n {
					var wg sync.WaitGroup
					for range m.workers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for _, d := range share {
								busyFor(d)
							}
						}()
					}
					wg.Wait()
				}
				return nil
			}), nil
		}},
		{Group: g, Name: "knit pool, stealing", Start: startStealPool(m, false)},
		{Group: g, Name: "knit pool, NoSteal", Start: startStealPool(m, true)},
		{Group: g, Name: "chan workers (one shared queue)", Start: startStealChan(m)},
	}
}

// mixBench runs the mix through submit and waits for every task.
type mixBench struct {
	tasks  []func()
	wg     sync.WaitGroup
	submit func(func()) error
	close  func()
}

func newMixBench(ds []time.Duration) *mixBench {
	b := &mixBench{tasks: make([]func(), len(ds))}
	for i, d := range ds {
		b.tasks[i] = func() {
			busyFor(d)
			b.wg.Done()
		}
	}
	return b
}

func (b *mixBench) Run(n int) error {
	for range n {
		b.wg.Add(len(b.tasks))
		for i, f := range b.tasks {
			if err := b.submit(f); err != nil {
				b.wg.Add(i - len(b.tasks))
				b.wg.Wait()
				return err
			}
		}
		b.wg.Wait()
	}
	return nil
}

func (b *mixBench) Close() error {
	b.close()
	return nil
}

func startStealPool(m stealMix, noSteal bool) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		// Queues deep enough for a whole mix: the placement is the
		// round-robin one, never "wherever there was room".
		p := pool.New(pool.Config{Workers: m.workers, NoSteal: noSteal, QueueSize: len(m.ds)})
		b := newMixBench(m.ds)
		b.submit, b.close = p.Go, p.Close
		return b, nil
	}
}

func startStealChan(m stealMix) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		ch := make(chan func(), len(m.ds))
		var exited sync.WaitGroup
		for range m.workers {
			exited.Add(1)
			go func() {
				defer exited.Done()
				for f := range ch {
					f()
				}
			}()
		}
		b := newMixBench(m.ds)
		b.submit = func(f func()) error { ch <- f; return nil }
		b.close = func() { close(ch); exited.Wait() }
		return b, nil
	}
}
