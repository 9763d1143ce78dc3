// Command outside is a benchmark of one's own on knitbench's harness,
// built as a module outside knit's: a suite asking whether a spin lock
// beats sync.Mutex for a short critical section, with the floor (one
// atomic add) in the same table, run by knitbench's own command with a
// verdict of its own.
//
//	go run . -rounds 10 -duration 50ms
//	go run . -compare run1 run2
//
// Everything knitbench prints for its own suites comes out for this one:
// the verdict, the tables with an interval on every median, the plots,
// results.json and results.txt (benchstat's format).
package main

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/knitbench"
	"github.com/knit-go/knit/bench/report"
)

func main() {
	os.Exit(knitbench.Main(os.Args[1:], os.Stdout, os.Stderr, knitbench.Options{
		Suites: []harness.Suite{lockSuite},
		UseCases: []report.UseCase{{
			Name:    "a short critical section, contended",
			Suite:   "locks",
			Group:   report.LastGroup, // the most goroutines
			Subject: report.Contains("spin lock"),
			API:     "spinLock.Lock/Unlock",
		}},
		Subject:    "spin lock",
		ResultsDir: "results",
	}))
}

// lockSuite: G goroutines each increment a shared counter under a lock;
// one op is one increment. One table per G, "sync.Mutex" the reference.
var lockSuite = harness.Suite{
	Name:        "locks",
	Description: "G goroutines increment one counter under a lock; the limit is one atomic add, which needs no lock.",
	Unit:        "increment",
	Ref:         "sync.Mutex",
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		for _, g := range []int{1, 4} {
			group := map[int]string{1: "1 goroutine", 4: "4 goroutines"}[g]
			rows = append(rows,
				harness.Row{Group: group, Name: "sync.Mutex", Start: counter(g, &sync.Mutex{})},
				// Kind says whose row it is: it picks the plots' colour and
				// the verdict's rivals. "spin lock" would read as Go's own.
				harness.Row{Group: group, Name: "spin lock (CAS, Gosched on failure)", Kind: harness.KindKnit, Start: counter(g, &spinLock{})},
				harness.Row{Group: group, Name: "limit: atomic add", Start: atomicAdd(g)},
			)
		}
		return rows
	},
}

// counter is a row: g goroutines share n increments under l.
func counter(g int, l sync.Locker) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		var count int
		return harness.Func(func(n int) error {
			parallel(g, n, func() {
				l.Lock()
				count++
				l.Unlock()
			})
			return nil
		}), nil
	}
}

func atomicAdd(g int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		var count atomic.Int64
		return harness.Func(func(n int) error {
			parallel(g, n, func() { count.Add(1) })
			return nil
		}), nil
	}
}

// parallel runs n calls of f over g goroutines and waits for them.
func parallel(g, n int, f func()) {
	var wg sync.WaitGroup
	for i := range g {
		share := n / g
		if i < n%g {
			share++
		}
		wg.Go(func() {
			for range share {
				f()
			}
		})
	}
	wg.Wait()
}

// spinLock is a test-and-test-and-set lock that yields its P on failure.
type spinLock struct{ held atomic.Bool }

func (l *spinLock) Lock() {
	for l.held.Load() || !l.held.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

func (l *spinLock) Unlock() { l.held.Store(false) }
