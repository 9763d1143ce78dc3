package antspool

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkSleepingTasks is ants' own benchmark shape (BenchmarkAntsPool:
// 1e6 tasks of a 10 ms sleep on 5e4 goroutines), scaled down: tasks of
// a 1 ms sleep on 1e4 goroutines, so the submitters, not the sleep,
// bound the rate. One op is one task submitted; the timer stops once
// every task has run. Run it at several GOMAXPROCS with -cpu: both pools
// read GOMAXPROCS when they run, not at init.
func BenchmarkSleepingTasks(b *testing.B) {
	const capacity = 10_000
	for _, submitters := range []int{1, 2} {
		for _, pc := range pools {
			b.Run(fmt.Sprintf("submitters=%d/%s", submitters, pc.name), func(b *testing.B) {
				p := pc.new(capacity, Options{})
				defer p.Close()
				var wg sync.WaitGroup
				task := func() { time.Sleep(time.Millisecond); wg.Done() }
				// Start every worker first, as a long-running ants pool has.
				wg.Add(capacity)
				for range capacity {
					_ = p.Submit(task)
				}
				wg.Wait()
				b.ResetTimer()
				wg.Add(b.N)
				var subs sync.WaitGroup
				for s := range submitters {
					subs.Go(func() {
						for i := s; i < b.N; i += submitters {
							if err := p.Submit(task); err != nil {
								panic(err)
							}
						}
					})
				}
				subs.Wait()
				wg.Wait()
			})
		}
	}
}

// BenchmarkShortTasks is the handoff suite's shape without its harness:
// tasks that only count, a pool of W goroutines, S submitters. One op is
// one task submitted and run.
func BenchmarkShortTasks(b *testing.B) {
	for _, sh := range []struct{ workers, submitters int }{{1, 1}, {2, 1}, {2, 8}} {
		for _, pc := range pools {
			b.Run(fmt.Sprintf("workers=%d/submitters=%d/%s", sh.workers, sh.submitters, pc.name), func(b *testing.B) {
				p := pc.new(sh.workers, Options{})
				defer p.Close()
				var wg sync.WaitGroup
				task := func() { wg.Done() }
				wg.Add(b.N)
				var subs sync.WaitGroup
				for s := range sh.submitters {
					subs.Go(func() {
						for i := s; i < b.N; i += sh.submitters {
							if err := p.Submit(task); err != nil {
								panic(err)
							}
						}
					})
				}
				subs.Wait()
				wg.Wait()
			})
		}
	}
}
