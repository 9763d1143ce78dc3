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
func init() {
	register(harness.Suite{
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
	})
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

func startKnitGroup(size int) (harness.Bench, error) {
	p := pool.New(pool.Config{})
	out := make([]int, size)
	return &apiBench{close: p.Close, run: func(n int) error {
		for range n {
			clear(out)
			g, _ := pool.NewGroup(context.Background(), p)
			for i := range size {
				g.Go(func() error { out[i] = i; return nil })
			}
			if err := g.Wait(); err != nil {
				return err
			}
			if err := checkGroup(out, size, identity); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func startErrgroupGroup(size int) (harness.Bench, error) {
	w := apiWorkers()
	out := make([]int, size)
	return &apiBench{run: func(n int) error {
		for range n {
			clear(out)
			g, _ := errgroup.WithContext(context.Background())
			g.SetLimit(w)
			for i := range size {
				g.Go(func() error { out[i] = i; return nil })
			}
			if err := g.Wait(); err != nil {
				return err
			}
			if err := checkGroup(out, size, identity); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func startPondGroup(size int) (harness.Bench, error) {
	p := pond.NewPool(apiWorkers())
	out := make([]int, size)
	return &apiBench{close: p.StopAndWait, run: func(n int) error {
		for range n {
			clear(out)
			g := p.NewGroup()
			for i := range size {
				g.SubmitErr(func() error { out[i] = i; return nil })
			}
			if err := g.Wait(); err != nil {
				return err
			}
			if err := checkGroup(out, size, identity); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func startKnitMap(size int) (harness.Bench, error) {
	p := pool.New(pool.Config{})
	in := groupInput(size)
	return &apiBench{close: p.Close, run: func(n int) error {
		for range n {
			out, err := pool.Map(context.Background(), p, in, mapElem)
			if err != nil {
				return err
			}
			if err := checkGroup(out, size, mapped); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func startErrgroupMap(size int) (harness.Bench, error) {
	w := apiWorkers()
	in := groupInput(size)
	return &apiBench{run: func(n int) error {
		for range n {
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
			if err := g.Wait(); err != nil {
				return err
			}
			if err := checkGroup(out, size, mapped); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func startPondMap(size int) (harness.Bench, error) {
	p := pond.NewResultPool[int](apiWorkers())
	in := groupInput(size)
	return &apiBench{close: p.StopAndWait, run: func(n int) error {
		for range n {
			g := p.NewGroup()
			for _, x := range in {
				g.SubmitErr(func() (int, error) { return mapElem(x) })
			}
			out, err := g.Wait()
			if err != nil {
				return err
			}
			if err := checkGroup(out, size, mapped); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func startConcMap(size int) (harness.Bench, error) {
	in := groupInput(size)
	return &apiBench{run: func(n int) error {
		for range n {
			out, err := iter.MapErr(in, func(x *int) (int, error) { return mapElem(*x) })
			if err != nil {
				return err
			}
			if err := checkGroup(out, size, mapped); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}
