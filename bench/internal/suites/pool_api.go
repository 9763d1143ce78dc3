package suites

import (
	"context"
	"fmt"
	"runtime"

	"github.com/alitto/pond/v2"
	conc "github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The pool-submit suite is the price of a closure with a result: submit
// it, wait for its value. It is the API most Go users reach for (pond's
// ResultPool, conc's ResultPool, an errgroup writing into a slice), set
// against knit's Submit and, for scale, knit's typed Task.Call, which
// reuses one function and allocates nothing.
//
// Every pool has GOMAXPROCS workers (knit's zero Config; pond's and
// conc's limits and errgroup's SetLimit at the same number). The task is
// a closure over its argument returning x*x+1, checked by the caller, so
// every row pays one closure per task.
var poolSubmitSuite = harness.Suite{
	Name: "pool-submit",
	Description: "A closure with a result, submitted and waited for: one at a time, and 1,000 in flight " +
		"(submit all, then wait for each in order); knit Submit+Wait against pond/v2 ResultPool SubmitErr+Wait, " +
		"conc ResultPool and an errgroup writing into a slice, all with GOMAXPROCS workers; knit Task.Call+Wait " +
		"for the typed, allocation-free path. Target: knit Submit at most 0.5x pond, one allocation per task.",
	Unit: "task, submitted and its result taken",
	Ref:  refPondResult,
	Rows: func(cfg harness.Config) []harness.Row {
		batch := submitBatch
		if cfg.Scale == harness.Tiny {
			batch = 50
		}
		one, many := "one at a time", fmt.Sprintf("%d in flight", batch)
		return []harness.Row{
			{Group: one, Name: "knit Submit+Wait", Start: startKnitSubmit(1)},
			{Group: one, Name: "knit Task.Call+Wait", Start: startKnitTaskCall(1)},
			{Group: one, Name: refPondResult, Start: startPondResult(1)},
			{Group: many, Name: "knit Submit+Wait", Start: startKnitSubmit(batch)},
			{Group: many, Name: "knit Task.Call+Wait", Start: startKnitTaskCall(batch)},
			{Group: many, Name: refPondResult, Start: startPondResult(batch)},
			{Group: many, Name: "conc ResultPool", Start: startConcResult(batch)},
			{Group: many, Name: "errgroup.SetLimit, into a slice", Start: startErrgroupSlice(batch)},
		}
	},
}

const (
	refPondResult = "pond/v2 ResultPool"
	// submitBatch is the in-flight group's batch: deep enough that the
	// pools overlap submitting and running, within knit's default queues.
	submitBatch = 1000
)

func apiTask(x int) int { return x*x + 1 }

// apiWorkers is every row's worker count: knit's default.
func apiWorkers() int { return runtime.GOMAXPROCS(0) }

// batches runs n tasks in rounds of at most batch: submit the round, then
// wait for it.
func batches(n, batch int, round func(base, k int) error) error {
	for done := 0; done < n; {
		k := min(batch, n-done)
		if err := round(done, k); err != nil {
			return err
		}
		done += k
	}
	return nil
}

func checkResult(x, v int) error {
	if v != apiTask(x) {
		return fmt.Errorf("task(%d) = %d, want %d", x, v, apiTask(x))
	}
	return nil
}

// apiBench is a started pool with a Run and a Close.
type apiBench struct {
	run   func(n int) error
	close func()
}

func (b *apiBench) Run(n int) error { return b.run(n) }
func (b *apiBench) Close() error {
	if b.close != nil {
		b.close()
	}
	return nil
}

// startSubmitRow makes a row whose op is one task: submit(i, x) starts
// task x as the round's i-th, wait(i) returns its result. Rounds of batch
// tasks are submitted, then waited for in order.
func startSubmitRow(batch int, close func(), submit func(i, x int), wait func(i int) (int, error)) *apiBench {
	return &apiBench{close: close, run: func(n int) error {
		return batches(n, batch, func(base, k int) error {
			for i := range k {
				submit(i, (base+i)&0xffff)
			}
			for i := range k {
				v, err := wait(i)
				if err != nil {
					return err
				}
				if err := checkResult((base+i)&0xffff, v); err != nil {
					return err
				}
			}
			return nil
		})
	}}
}

func startKnitSubmit(batch int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		p := pool.New(pool.Config{})
		ctx := context.Background()
		fs := make([]pool.Future[int], batch)
		return startSubmitRow(batch, p.Close, func(i, x int) {
			fs[i] = pool.Submit(ctx, p, func() (int, error) { return apiTask(x), nil })
		}, func(i int) (int, error) { return fs[i].Wait(ctx) }), nil
	}
}

func startKnitTaskCall(batch int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		p := pool.New(pool.Config{})
		t := pool.NewTask(p, apiTask)
		ctx := context.Background()
		fs := make([]pool.Future[int], batch)
		return startSubmitRow(batch, p.Close, func(i, x int) { fs[i] = t.Call(x) },
			func(i int) (int, error) { return fs[i].Wait(ctx) }), nil
	}
}

func startPondResult(batch int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		p := pond.NewResultPool[int](apiWorkers())
		fs := make([]pond.ResultTask[int], batch)
		return startSubmitRow(batch, p.StopAndWait, func(i, x int) {
			fs[i] = p.SubmitErr(func() (int, error) { return apiTask(x), nil })
		}, func(i int) (int, error) {
			v, err := fs[i].Wait()
			fs[i] = nil
			return v, err
		}), nil
	}
}

// startConcResult: a conc ResultPool is spent by its Wait, so each round
// makes one, as it is meant to be used; Wait returns the results, in no
// particular order, so the check is their sum.
func startConcResult(batch int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		w := apiWorkers()
		return &apiBench{run: func(n int) error {
			return batches(n, batch, func(base, k int) error {
				p := conc.NewWithResults[int]().WithMaxGoroutines(w)
				want := 0
				for i := range k {
					x := (base + i) & 0xffff
					want += apiTask(x)
					p.Go(func() int { return apiTask(x) })
				}
				got := 0
				for _, v := range p.Wait() {
					got += v
				}
				if got != want {
					return fmt.Errorf("conc results sum to %d, want %d", got, want)
				}
				return nil
			})
		}}, nil
	}
}

func startErrgroupSlice(batch int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		w := apiWorkers()
		out := make([]int, batch)
		return &apiBench{run: func(n int) error {
			return batches(n, batch, func(base, k int) error {
				var g errgroup.Group
				g.SetLimit(w)
				for i := range k {
					x := (base + i) & 0xffff
					g.Go(func() error { out[i] = apiTask(x); return nil })
				}
				if err := g.Wait(); err != nil {
					return err
				}
				for i := range k {
					if err := checkResult((base+i)&0xffff, out[i]); err != nil {
						return err
					}
				}
				return nil
			})
		}}, nil
	}
}
