package suites

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The knit pool's rows in heavy: the extra workers are the pool's. Each
// op publishes every chunk with one CallBatch, then the caller works
// too, as in the channel rows: it runs chunks from the end of the list
// while the workers take them from the front. A chunk is claimed with
// one CAS by whoever reaches it first (a worker's call for a chunk the
// caller already ran returns at once), so the caller never waits while
// there is a chunk left to count.
//
// Each heavy row costs seconds, so quick mode keeps 1 extra worker (the
// only count a 2-core machine can gain from) and 4 (the seed's widest);
// -full runs the whole sweep.
func heavyKnitRows(cfg harness.Config) []harness.Row {
	rows := heavyRows(cfg, "knit", func(_ harness.Config, n, chunk, workers int) (harness.Bench, error) {
		return startKnitPrimes(n, chunk, workers), nil
	})
	if cfg.Scale != harness.Quick {
		return rows
	}
	return slices.DeleteFunc(rows, func(r harness.Row) bool {
		return r.Name != heavyName(1, "knit") && r.Name != heavyName(4, "knit")
	})
}

type knitPrimes struct {
	p       *pool.Pool
	t       *pool.Task[int, int]
	chunks  [][2]int
	claimed []atomic.Uint32 // op number that claimed chunk i
	op      uint32
	idx     []int
	fs      []pool.Future[int]
	want    int
}

func startKnitPrimes(n, chunk, workers int) *knitPrimes {
	k := &knitPrimes{chunks: chunkRanges(n, chunk), want: primeCountSieve(n)}
	k.claimed = make([]atomic.Uint32, len(k.chunks))
	k.idx = make([]int, len(k.chunks))
	for i := range k.idx {
		k.idx[i] = i
	}
	k.fs = make([]pool.Future[int], len(k.chunks))
	k.p = pool.New(pool.Config{Workers: workers, QueueSize: len(k.chunks)})
	k.t = pool.NewTask(k.p, k.count)
	return k
}

// count runs chunk i unless someone ran it in this op; it returns the
// primes it counted, or 0.
func (k *knitPrimes) count(i int) int {
	if !k.claim(i) {
		return 0
	}
	return countPrimes(k.chunks[i][0], k.chunks[i][1])
}

func (k *knitPrimes) claim(i int) bool {
	c := &k.claimed[i]
	old := c.Load()
	return old != k.op && c.CompareAndSwap(old, k.op)
}

func (k *knitPrimes) Run(n int) error {
	ctx := context.Background()
	for range n {
		k.op++ // read by the tasks after CallBatch publishes them
		if got := k.t.CallBatch(k.idx, k.fs); got != len(k.idx) {
			return fmt.Errorf("pool took %d of %d chunks", got, len(k.idx))
		}
		total := 0
		for i := len(k.chunks) - 1; i >= 0; i-- {
			if k.claim(i) {
				total += countPrimes(k.chunks[i][0], k.chunks[i][1])
			}
		}
		for i := range k.fs {
			v, err := k.fs[i].Wait(ctx)
			if err != nil {
				return err
			}
			total += v
		}
		if total != k.want {
			return fmt.Errorf("counted %d primes, sieve says %d", total, k.want)
		}
	}
	return nil
}

func (k *knitPrimes) Close() error {
	k.p.Close()
	return nil
}
