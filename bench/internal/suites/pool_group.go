package suites

import (
	"context"
	"fmt"

	"github.com/alitto/pond/v2"
	"github.com/sourcegraph/conc/iter"
	"golang.org/x/sync/errgroup"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The pool-group suite is fan-out and join: a group of trivial tasks
// waited for together, and a map over a slice with the results in input
// order. knit's Group and Map run on the pool's GOMAXPROCS workers;
// errgroup gets SetLimit(GOMAXPROCS) (its WithContext, as knit's group
// has a context), pond a pool of GOMAXPROCS workers and its task groups,
// conc iter.MapErr its default of GOMAXPROCS goroutines.
//
// A group's task writes its index into a slice, a map's element is x*2+1:
// each costs a closure per task in every row but knit's Map, which takes
// the function once.
var poolGroupSuite = harness.Suite{
	Name: "pool-group",
	Description: fmt.Sprintf("A group of %d trivial tasks (Go each, then Wait), and a Map over %d ints "+
		"(results in input order): knit Group and Map on a GOMAXPROCS pool against errgroup.WithContext "+
		"with SetLimit(GOMAXPROCS), pond/v2 task groups and conc iter.MapErr. Target: the knit group at most "+
		"0.5x errgroup.", groupSize, groupSize),
	Unit: fmt.Sprintf("group of %d tasks (group rows); map over %d items (map rows)", groupSize, groupSize),
	Ref:  refErrgroupLimit,
	Rows: func(cfg harness.Config) []harness.Row {
		n := groupSize
		if cfg.Scale == harness.Tiny {
			n = 500
		}
		grp := fmt.Sprintf("group of %d trivial tasks", n)
		mp := fmt.Sprintf("Map over %d items", n)
		row := func(group, name string, start func(n int) (harness.Bench, error)) harness.Row {
			return harness.Row{Group: group, Name: name, Start: func(harness.Config) (harness.Bench, error) { return start(n) }}
		}
		return []harness.Row{
			row(grp, "knit NewGroup, Go, Wait", startKnitGroup),
			row(grp, refErrgroupLimit, startErrgroupGroup),
			row(grp, "pond/v2 group", startPondGroup),
			row(mp, "knit Map", startKnitMap),
			row(mp, refErrgroupLimit, startErrgroupMap),
			row(mp, "pond/v2 ResultPool group", startPondMap),
			row(mp, "conc iter.MapErr", startConcMap),
		}
	},
}

const (
	refErrgroupLimit = "errgroup.SetLimit(GOMAXPROCS)"
	groupSize        = 10_000
)

func mapElem(x int) (int, error) { return 2*x + 1, nil }

// groupInput is the Map rows' input: 0 to size-1.
func groupInput(size int) []int {
	in := make([]int, size)
	for i := range in {
		in[i] = i
	}
	return in
}

// checkGroup checks that out holds size results, out[i] == f(i).
func checkGroup(out []int, size int, f func(int) int) error {
	if len(out) != size {
		return fmt.Errorf("%d results, want %d", len(out), size)
	}
	for i, v := range out {
		if v != f(i) {
			return fmt.Errorf("result %d = %d, want %d", i, v, f(i))
		}
	}
	return nil
}

func identity(i int) int { return i }
func mapped(i int) int   { v, _ := mapElem(i); return v }

// startGroupRow makes a group row's bench: each op starts a group with
// newGroup, gives it size tasks that each write their index into a slice,
// waits, and checks the slice.
func startGroupRow(size int, close func(), newGroup func() (goFn func(func() error), wait func() error)) *apiBench {
	out := make([]int, size)
	return &apiBench{close: close, run: func(n int) error {
		for range n {
			clear(out)
			goFn, wait := newGroup()
			for i := range size {
				goFn(func() error { out[i] = i; return nil })
			}
			if err := wait(); err != nil {
				return err
			}
			if err := checkGroup(out, size, identity); err != nil {
				return err
			}
		}
		return nil
	}}
}

// startMapRow makes a Map row's bench: each op maps mapElem over the
// input with mapFn and checks the results.
func startMapRow(size int, close func(), mapFn func(in []int) ([]int, error)) *apiBench {
	in := groupInput(size)
	return &apiBench{close: close, run: func(n int) error {
		for range n {
			out, err := mapFn(in)
			if err != nil {
				return err
			}
			if err := checkGroup(out, size, mapped); err != nil {
				return err
			}
		}
		return nil
	}}
}

func startKnitGroup(size int) (harness.Bench, error) {
	p := pool.New(pool.Config{})
	return startGroupRow(size, p.Close, func() (func(func() error), func() error) {
		g, _ := pool.NewGroup(context.Background(), p)
		return g.Go, g.Wait
	}), nil
}

func startErrgroupGroup(size int) (harness.Bench, error) {
	w := apiWorkers()
	return startGroupRow(size, nil, func() (func(func() error), func() error) {
		g, _ := errgroup.WithContext(context.Background())
		g.SetLimit(w)
		return g.Go, g.Wait
	}), nil
}

func startPondGroup(size int) (harness.Bench, error) {
	p := pond.NewPool(apiWorkers())
	return startGroupRow(size, p.StopAndWait, func() (func(func() error), func() error) {
		g := p.NewGroup()
		return func(f func() error) { g.SubmitErr(f) }, g.Wait
	}), nil
}

func startKnitMap(size int) (harness.Bench, error) {
	p := pool.New(pool.Config{})
	return startMapRow(size, p.Close, func(in []int) ([]int, error) {
		return pool.Map(context.Background(), p, in, mapElem)
	}), nil
}

func startErrgroupMap(size int) (harness.Bench, error) {
	w := apiWorkers()
	return startMapRow(size, nil, func(in []int) ([]int, error) {
		out := make([]int, len(in))
		g, _ := errgroup.WithContext(context.Background())
		g.SetLimit(w)
		for i, x := range in {
			g.Go(func() error {
				v, err := mapElem(x)
				out[i] = v
				return err
			})
		}
		return out, g.Wait()
	}), nil
}

func startPondMap(size int) (harness.Bench, error) {
	p := pond.NewResultPool[int](apiWorkers())
	return startMapRow(size, p.StopAndWait, func(in []int) ([]int, error) {
		g := p.NewGroup()
		for _, x := range in {
			g.SubmitErr(func() (int, error) { return mapElem(x) })
		}
		return g.Wait()
	}), nil
}

func startConcMap(size int) (harness.Bench, error) {
	return startMapRow(size, nil, func(in []int) ([]int, error) {
		return iter.MapErr(in, func(x *int) (int, error) { return mapElem(*x) })
	}), nil
}
