package suites

import (
	"fmt"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The heavy suite reproduces the "Efficiency under heavy tasks" table of
// Knitting's Node.js benchmarks page (knittingdocs.netlify.app): count the primes up to N in chunks of 250,000, on the caller
// alone and with extra workers that take chunks from the same queue. The
// speedup column reads the parallel gain; on a 2-core machine it cannot
// pass 2, whatever the worker count.
var heavySuite = harness.Suite{
	Name: "heavy",
	Description: "Count primes up to N by trial division in fixed chunks; the caller takes chunks too, " +
		"extra workers are goroutines fed by a channel.",
	Reproduces: "Knitting's benchmarks (knittingdocs.netlify.app): \"Efficiency under heavy tasks\": primes up to 10,000,000 (chunk 250,000), main + 1..4 extra threads",
	Unit:       "count of primes up to N",
	Ref:        heavyRef,
	Speedup:    true,
	Rows: func(cfg harness.Config) []harness.Row {
		n, chunk := heavySize(cfg.Scale)
		alone := harness.Row{
			Group: heavyGroup(n, chunk),
			Name:  heavyRef,
			Start: func(harness.Config) (harness.Bench, error) {
				return startChanPrimes(n, chunk, 0), nil
			},
		}
		return append([]harness.Row{alone}, heavyRows(cfg, "chan", func(_ harness.Config, n, chunk, workers int) (harness.Bench, error) {
			return startChanPrimes(n, chunk, workers), nil
		})...)
	},
}

// heavyRows makes one row per extra-worker count of the sweep (the caller
// alone is the suite's own reference row). start builds an instance that
// counts the primes up to n in chunks of chunk with the caller and
// workers extra workers; chunkRanges and primeCountSieve are there to
// split the work and check the count.
func heavyRows(cfg harness.Config, kind string, start func(cfg harness.Config, n, chunk, workers int) (harness.Bench, error)) []harness.Row {
	n, chunk := heavySize(cfg.Scale)
	var rows []harness.Row
	for _, w := range heavyWorkers(cfg.Scale) {
		rows = append(rows, harness.Row{
			Group: heavyGroup(n, chunk),
			Name:  heavyName(w, kind),
			Start: func(cfg harness.Config) (harness.Bench, error) { return start(cfg, n, chunk, w) },
		})
	}
	return rows
}

const heavyRef = "caller alone"

// heavySize returns N and the chunk size. Quick mode keeps the seed's
// chunk and a quarter of its range so five rows fit in a few seconds.
func heavySize(s harness.Scale) (n, chunk int) {
	switch s {
	case harness.Tiny:
		return 50_000, 10_000
	case harness.Full:
		return 10_000_000, 250_000
	}
	return 2_500_000, 250_000
}

// heavyWorkers is the sweep of extra workers beside the caller.
func heavyWorkers(s harness.Scale) []int {
	switch s {
	case harness.Tiny:
		return []int{1, 2}
	case harness.Full:
		return []int{1, 2, 3, 4, 7, 15}
	}
	return []int{1, 2, 3, 4}
}

func heavyGroup(n, chunk int) string {
	return fmt.Sprintf("primes up to %d (chunk %d)", n, chunk)
}

// heavyName names a row; kind says what the workers are ("chan", "knit").
func heavyName(workers int, kind string) string {
	switch workers {
	case 0:
		return heavyRef
	case 1:
		return fmt.Sprintf("caller + 1 %s worker", kind)
	}
	return fmt.Sprintf("caller + %d %s workers", workers, kind)
}

// chanPrimes keeps its workers for the instance's life; each op queues
// every chunk, then the caller drains the queue alongside them and sums
// its own counts with theirs.
type chanPrimes struct {
	chunks [][2]int
	want   int
	work   chan [2]int
	done   chan int
	exited chan struct{}
	nwork  int
}

func startChanPrimes(n, chunk, workers int) *chanPrimes {
	c := &chanPrimes{chunks: chunkRanges(n, chunk), want: primeCountSieve(n), nwork: workers}
	c.work = make(chan [2]int, len(c.chunks))
	c.done = make(chan int, len(c.chunks))
	c.exited = make(chan struct{}, workers)
	for range workers {
		go func() {
			for r := range c.work {
				c.done <- countPrimes(r[0], r[1])
			}
			c.exited <- struct{}{}
		}()
	}
	return c
}

func (c *chanPrimes) Run(n int) error {
	for range n {
		for _, r := range c.chunks {
			c.work <- r
		}
		total, finished := 0, 0
	caller:
		for {
			select {
			case r := <-c.work:
				total += countPrimes(r[0], r[1])
				finished++
			default:
				break caller
			}
		}
		for ; finished < len(c.chunks); finished++ {
			total += <-c.done
		}
		if total != c.want {
			return fmt.Errorf("counted %d primes, sieve says %d", total, c.want)
		}
	}
	return nil
}

func (c *chanPrimes) Close() error {
	close(c.work)
	for range c.nwork {
		<-c.exited
	}
	return nil
}

// chunkRanges splits [0, n] into half-open ranges of chunk numbers.
func chunkRanges(n, chunk int) [][2]int {
	var rs [][2]int
	for lo := 0; lo <= n; lo += chunk {
		rs = append(rs, [2]int{lo, min(lo+chunk, n+1)})
	}
	return rs
}

// countPrimes counts primes in [lo, hi) by trial division: the deliberately
// CPU-bound body the seed uses, not a fast prime counter.
func countPrimes(lo, hi int) int {
	n := 0
	for v := lo; v < hi; v++ {
		if isPrime(v) {
			n++
		}
	}
	return n
}

func isPrime(v int) bool {
	if v < 2 {
		return false
	}
	if v%2 == 0 {
		return v == 2
	}
	for d := 3; d*d <= v; d += 2 {
		if v%d == 0 {
			return false
		}
	}
	return true
}

// primeCountSieve is the check each op's count is compared with, computed
// once per instance by a different method.
func primeCountSieve(n int) int {
	if n < 2 {
		return 0
	}
	composite := make([]bool, n+1)
	count := 0
	for i := 2; i <= n; i++ {
		if composite[i] {
			continue
		}
		count++
		for j := i * i; j <= n; j += i {
			composite[j] = true
		}
	}
	return count
}
