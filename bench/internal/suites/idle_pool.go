package suites

import (
	"context"
	"fmt"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The knit pool's rows in idle: a started pool with the default policy
// (pool.Config{Workers: w}), run through a burst of calls first so that
// every worker has been woken, has spun out whatever budget its policy
// gives it, and has parked again before the window opens. Knitting
// measured 0.058 cores at 1 worker and 0.164 at 15 with its shipped
// policy, and 6.4 at 15 with its old spin; the target here is under
// 0.002 cores at every size.
func idlePoolRows(cfg harness.Config) []harness.Row {
	var rows []harness.Row
	for _, w := range idlePoolSizes(cfg.Scale) {
		rows = append(rows, idleRow(cfg, "knit pool, "+knitWorkers(w), startIdlePool(pool.Config{Workers: w})))
	}
	if cfg.Scale == harness.Full {
		// Knitting's single-worker spin forced on, whatever GOMAXPROCS:
		// the spin is paid once per idle transition, then it parks.
		rows = append(rows, idleRow(cfg, "knit pool, 1 worker, spin 50µs",
			startIdlePool(pool.Config{Workers: 1, Park: knit.Park{Spin: 50 * time.Microsecond}})))
	}
	return rows
}

// idlePoolSizes are Knitting's pool sizes (1 to 15 workers); quick mode
// skips 8 to keep the suite short.
func idlePoolSizes(s harness.Scale) []int {
	switch s {
	case harness.Tiny:
		return []int{1, 2}
	case harness.Full:
		return []int{1, 2, 4, 8, 15}
	}
	return []int{1, 2, 4, 15}
}

func startIdlePool(pc pool.Config) func(harness.Config) (func(), error) {
	return func(harness.Config) (func(), error) {
		p := pool.New(pc)
		t := pool.NewTask(p, func(x int) int { return x + 1 })
		// Enough calls in one batch that every worker takes some (they
		// steal from the queue the batch landed on), then one at a time.
		ins := make([]int, 64*max(pc.Workers, 1))
		fs := make([]pool.Future[int], len(ins))
		for i := range ins {
			ins[i] = i
		}
		ctx := context.Background()
		t.CallBatch(ins, fs)
		for i := range fs {
			if v, err := fs[i].Wait(ctx); err != nil || v != i+1 {
				p.Close()
				return nil, fmt.Errorf("warm-up call %d: %d, %v", i, v, err)
			}
		}
		for i := range 16 {
			if v, err := t.Call(i).Wait(ctx); err != nil || v != i+1 {
				p.Close()
				return nil, fmt.Errorf("warm-up call: %d, %v", v, err)
			}
		}
		// Let every worker reach its park (a spinning one runs out its
		// budget first); idleRow's settle time follows.
		for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); {
			if st := p.Stats(); st.Parked == st.Workers {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		return p.Close, nil
	}
}
