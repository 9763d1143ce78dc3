package knit

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkMailbox: P producers (1, 4, 16) push b.N items in all, one
// consumer pops them; one op is one item. Rows: the Mailbox, a buffered
// channel (capacity 1024, so unlike the Mailbox it is bounded and its
// producers block while it is full), and knit's bounded MPSC ring of the
// same capacity. xsync's UMPSCQueue, the unbounded peer, is measured
// beside them in the bench module (knitbench -suites mailbox), which
// keeps peers out of this module.
func BenchmarkMailbox(b *testing.B) {
	for _, p := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("producers=%d/knit-Mailbox", p), func(b *testing.B) {
			benchQueueFanIn(b, p, NewMailbox[int](Park{}))
		})
		b.Run(fmt.Sprintf("producers=%d/knit-MPSC-1024", p), func(b *testing.B) {
			benchQueueFanIn(b, p, NewMPSC[int](1024, Park{}))
		})
		b.Run(fmt.Sprintf("producers=%d/chan-1024", p), func(b *testing.B) {
			benchChanFanIn(b, p)
		})
	}
}

// share splits n items among p producers.
func share(n, p, i int) int { return n/p + btoi(i < n%p) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func benchQueueFanIn(b *testing.B, producers int, q Queue[int]) {
	ctx := context.Background()
	n := b.N
	var wg sync.WaitGroup
	m := startCPU(b)
	for i := range producers {
		wg.Go(func() {
			for j := range share(n, producers, i) {
				if err := q.Push(ctx, j); err != nil {
					panic(err)
				}
			}
		})
	}
	for range n {
		if _, err := q.Pop(ctx); err != nil {
			panic(err)
		}
	}
	m.stop(b, n)
	wg.Wait()
}

func benchChanFanIn(b *testing.B, producers int) {
	ch := make(chan int, 1024)
	n := b.N
	var wg sync.WaitGroup
	m := startCPU(b)
	for i := range producers {
		wg.Go(func() {
			for j := range share(n, producers, i) {
				ch <- j
			}
		})
	}
	for range n {
		<-ch
	}
	m.stop(b, n)
	wg.Wait()
}

// BenchmarkBacklog: the unbounded multi-consumer queue against the
// bounded MPMC, a channel of the same capacity and, with one consumer,
// the Mailbox it is built on; P producers and C consumers, blocking
// calls, one item per call.
func BenchmarkBacklog(b *testing.B) {
	for _, pc := range [][2]int{{1, 1}, {2, 2}, {4, 4}, {4, 1}} {
		p, c := pc[0], pc[1]
		queues := []struct {
			name string
			new  func() Queue[int]
		}{
			{"knit-Backlog", func() Queue[int] { return NewBacklog[int](Park{}) }},
			{"knit-MPMC-1024", func() Queue[int] { return NewMPMC[int](1024, Park{}) }},
		}
		if c == 1 {
			queues = append(queues, struct {
				name string
				new  func() Queue[int]
			}{"knit-Mailbox", func() Queue[int] { return NewMailbox[int](Park{}) }})
		}
		for _, q := range queues {
			b.Run(fmt.Sprintf("%dP%dC/%s", p, c, q.name), func(b *testing.B) {
				r := q.new()
				contended(b, p, c,
					func(v int) { r.Push(context.Background(), v) },
					func() bool { _, err := r.Pop(context.Background()); return err == nil },
					r.Close)
			})
		}
		b.Run(fmt.Sprintf("%dP%dC/chan-1024", p, c), func(b *testing.B) {
			ch := make(chan int, 1024)
			contended(b, p, c,
				func(v int) { ch <- v },
				func() bool { _, ok := <-ch; return ok },
				func() { close(ch) })
		})
	}
}
