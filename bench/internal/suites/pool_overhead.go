package suites

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/alitto/pond/v2"
	"github.com/gammazero/workerpool"
	"github.com/panjf2000/ants/v2"
	conc "github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The pool suite is the per-task overhead of a worker pool: one op is one
// trivial task, submitted and run. Run(n) submits n tasks and returns
// once all n have run, so the time per op is what a pool adds to a task
// that does nothing: the submit, the handoff, the wake, the completion.
//
// Every row runs the same task shape: a func() that is built once, so no
// row pays a closure per task unless the pool makes one. Where the pool
// has no wait of its own (knit, ants, pond, workerpool, go f()) the task
// is sync.WaitGroup.Done; conc and errgroup wait with their own Wait and
// run an empty task.
//
// The peers are sized like the knit pool: W workers (ants and pond
// capacity, workerpool's max workers, conc's max goroutines, errgroup's
// limit). go f() has no size: a goroutine per task.
var poolSuite = harness.Suite{
	Name: "pool",
	Description: "Per-task overhead of a worker pool: submit n trivial tasks, wait until all ran; " +
		"knit p.Go against go f() + WaitGroup, ants, pond, workerpool, conc and errgroup, all sized W workers " +
		"(producers submit concurrently in the multi-producer groups), with the floor: a knit ring handing each task to one consumer goroutine. " +
		"Target: knit at most 1/3 of the fastest peer.",
	Unit:        "trivial task, submitted and run",
	Ref:         refGoWG,
	PlotRowsOnX: true,
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		for _, g := range overheadGroups(cfg.Scale) {
			rows = append(rows, overheadRows(g)...)
		}
		return rows
	},
}

// refGoWG is the reference row: a goroutine per task, joined by a WaitGroup.
const refGoWG = "go f() + WaitGroup"

type overheadGroup struct{ workers, producers int }

func (g overheadGroup) String() string {
	if g.producers == 1 {
		return knitWorkers(g.workers)
	}
	return fmt.Sprintf("%s, %d producers", knitWorkers(g.workers), g.producers)
}

// overheadGroups: one worker (Knitting's default) and as many as
// GOMAXPROCS in quick mode; wide pools and 16 producers with -full.
func overheadGroups(s harness.Scale) []overheadGroup {
	switch s {
	case harness.Tiny:
		return []overheadGroup{{1, 1}, {2, 2}}
	case harness.Full:
		return []overheadGroup{{1, 1}, {4, 1}, {15, 1}, {4, 16}, {15, 16}}
	}
	gs := []overheadGroup{{1, 1}}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		gs = append(gs, overheadGroup{min(n, 15), 1})
	}
	return gs
}

func overheadRows(g overheadGroup) []harness.Row {
	w := g.workers
	row := func(name string, start func() (*overheadBench, error)) harness.Row {
		return harness.Row{Group: g.String(), Name: name, Start: func(harness.Config) (harness.Bench, error) {
			b, err := start()
			if err != nil {
				return nil, err
			}
			b.producers = g.producers
			if b.task == nil {
				b.task = b.wg.Done
				b.useWG = true
			}
			return b, nil
		}}
	}
	return []harness.Row{
		row(refGoWG, func() (*overheadBench, error) {
			b := &overheadBench{}
			b.submit = func(f func()) error { go f(); return nil }
			return b, nil
		}),
		row("knit pool.Go", func() (*overheadBench, error) {
			p := pool.New(pool.Config{Workers: w})
			return &overheadBench{submit: p.Go, close: func() error { p.Close(); return nil }}, nil
		}),
		row("limit: knit ring of func(), one consumer goroutine", func() (*overheadBench, error) {
			return ringHandoff(g.producers), nil
		}),
		row("ants/v2", func() (*overheadBench, error) {
			p, err := ants.NewPool(w)
			if err != nil {
				return nil, err
			}
			return &overheadBench{submit: p.Submit, close: func() error { p.Release(); return nil }}, nil
		}),
		row("pond/v2", func() (*overheadBench, error) {
			p := pond.NewPool(w)
			return &overheadBench{submit: p.Go, close: func() error { p.StopAndWait(); return nil }}, nil
		}),
		row("gammazero/workerpool", func() (*overheadBench, error) {
			p := workerpool.New(w)
			return &overheadBench{
				submit: func(f func()) error { p.Submit(f); return nil },
				close:  func() error { p.StopWait(); return nil },
			}, nil
		}),
		row("conc pool", func() (*overheadBench, error) {
			// A conc pool is spent by its Wait, so each Run makes one:
			// that is how it is meant to be used, and its start-up is
			// spread over the Run's n tasks.
			b := &overheadBench{task: func() {}}
			var p *conc.Pool
			b.begin = func() { p = conc.New().WithMaxGoroutines(w) }
			b.submit = func(f func()) error { p.Go(f); return nil }
			b.wait = func() error { p.Wait(); return nil }
			return b, nil
		}),
		row("errgroup.SetLimit", func() (*overheadBench, error) {
			var g errgroup.Group
			g.SetLimit(w)
			nop := func() error { return nil }
			return &overheadBench{
				task:   func() {},
				submit: func(func()) error { g.Go(nop); return nil },
				wait:   g.Wait,
			}, nil
		}),
	}
}

// ringHandoff is the floor under every pool row: tasks handed to one
// consumer goroutine that calls each, through a knit SPSC with one
// producer (an MPSC with several), blocking Push and Pop. No pool can
// hand a task over for less than a ring does, and this one has no queue
// to steal from, no completion and no doorbell of its own.
func ringHandoff(producers int) *overheadBench {
	var push func(context.Context, func()) error
	var pop func(context.Context) (func(), error)
	var closeRing func()
	if producers <= 1 {
		q := knit.NewSPSC[func()](pool.DefaultQueueSize, knit.Park{})
		p, c := q.Ends()
		push, pop, closeRing = p.Push, c.Pop, p.Close
	} else {
		q := knit.NewMPSC[func()](pool.DefaultQueueSize, knit.Park{})
		push, pop, closeRing = q.Push, q.Pop, q.Close
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			f, err := pop(context.Background())
			if err != nil {
				return
			}
			f()
		}
	}()
	return &overheadBench{
		submit: func(f func()) error { return push(context.Background(), f) },
		close: func() error {
			closeRing()
			<-exited
			return nil
		},
	}
}

// overheadBench submits n tasks from its producers and waits for them.
type overheadBench struct {
	producers int
	task      func() // the task every submit passes
	useWG     bool   // task is wg.Done; Run waits on wg
	wg        sync.WaitGroup
	begin     func()             // before a Run's submits, or nil
	submit    func(func()) error // safe for concurrent producers
	wait      func() error       // after the submits, unless useWG
	close     func() error
}

func (b *overheadBench) Run(n int) error {
	if b.begin != nil {
		b.begin()
	}
	if b.useWG {
		b.wg.Add(n)
	}
	err := b.produce(n)
	if b.useWG {
		b.wg.Wait()
	} else if werr := b.wait(); err == nil {
		err = werr
	}
	return err
}

// produce submits n tasks, from the calling goroutine when there is one
// producer, else from that many goroutines sharing n. A task that could
// not be submitted is marked done, so the wait still ends.
func (b *overheadBench) produce(n int) error {
	one := func(k int) error {
		for i := range k {
			if err := b.submit(b.task); err != nil {
				if b.useWG {
					b.wg.Add(i - k)
				}
				return err
			}
		}
		return nil
	}
	if b.producers <= 1 {
		return one(n)
	}
	errs := make([]error, b.producers)
	var pwg sync.WaitGroup
	for i := range b.producers {
		k := n / b.producers
		if i < n%b.producers {
			k++
		}
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			errs[i] = one(k)
		}()
	}
	pwg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *overheadBench) Close() error {
	if b.close == nil {
		return nil
	}
	return b.close()
}
