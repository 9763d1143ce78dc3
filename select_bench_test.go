package knit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkSelectFanIn: producers push into 2 or 8 rings, one per
// producer, and one consumer takes every item: with a Selector over the
// rings (which switches each case off as its ring closes), the same with
// a cancellable ctx, a ticker and a quit channel beside the rings (the
// loop of a real consumer; its channel cases sleep in a native select),
// with Go's select over as many buffered channels, and with a goroutine
// per ring that pops and forwards into one channel (the way to wait on
// several rings without Select). ns/op is per item.
func BenchmarkSelectFanIn(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("rings=%d/knit-select", n), func(b *testing.B) { fanInSelect(b, n, false) })
		b.Run(fmt.Sprintf("rings=%d/knit-select+ticker+quit", n), func(b *testing.B) { fanInSelect(b, n, true) })
		b.Run(fmt.Sprintf("rings=%d/chan-select", n), func(b *testing.B) { fanInChanSelect(b, n) })
		b.Run(fmt.Sprintf("rings=%d/forwarders", n), func(b *testing.B) { fanInForward(b, n) })
	}
}

const fanInCap = 1024

// fanInPush starts one producer per ring, each pushing its share of
// total items and then closing the ring.
func fanInPush(rings []*SPSC[int], total int) {
	for r, q := range rings {
		share := total / len(rings)
		if r < total%len(rings) {
			share++
		}
		go func() {
			tx, _ := q.Ends()
			for i := range share {
				tx.Push(context.Background(), i)
			}
			tx.Close()
		}()
	}
}

func fanInSelect(b *testing.B, n int, chans bool) {
	rings := make([]*SPSC[int], n)
	var v int
	var cases []Case
	ctx := context.Background()
	if chans {
		var tick time.Time
		ticker := time.NewTicker(time.Millisecond)
		defer ticker.Stop()
		quit := make(chan struct{})
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = c
		cases = append(cases, RecvCase(ticker.C, &tick), RecvCase(quit, nil))
	}
	first := len(cases)
	for i := range rings {
		rings[i] = NewSPSC[int](fanInCap, Park{})
		cases = append(cases, PopCase(cons(rings[i].Ends()), &v))
	}
	cpu := startCPU(b)
	fanInPush(rings, b.N)
	sel := NewSelector(Park{}, cases...)
	got := 0
	for open := n; open > 0; {
		i, err := sel.Select(ctx)
		switch {
		case err != nil:
			sel.SetEnabled(i, false)
			open--
		case i >= first:
			got++
		}
	}
	cpu.stop(b, b.N)
	if got != b.N {
		b.Fatalf("%d of %d items", got, b.N)
	}
}

func fanInChanSelect(b *testing.B, n int) {
	chs := make([]chan int, 8)
	for i := range n {
		chs[i] = make(chan int, fanInCap)
	}
	cpu := startCPU(b)
	for r := range n {
		share := b.N / n
		if r < b.N%n {
			share++
		}
		go func() {
			for i := range share {
				chs[r] <- i
			}
			close(chs[r])
		}()
	}
	got, open := 0, n
	c := chs                 // nil channels (beyond n, and closed ones) never fire
	for n == 2 && open > 0 { // two rings: the two-case select a user would write
		var ok bool
		var k int
		select {
		case _, ok = <-c[0]:
		case _, ok = <-c[1]:
			k = 1
		}
		if !ok {
			c[k] = nil
			open--
			continue
		}
		got++
	}
	for open > 0 {
		var ok bool
		var k int
		select {
		case _, ok = <-c[0]:
		case _, ok = <-c[1]:
			k = 1
		case _, ok = <-c[2]:
			k = 2
		case _, ok = <-c[3]:
			k = 3
		case _, ok = <-c[4]:
			k = 4
		case _, ok = <-c[5]:
			k = 5
		case _, ok = <-c[6]:
			k = 6
		case _, ok = <-c[7]:
			k = 7
		}
		if !ok {
			c[k] = nil
			open--
			continue
		}
		got++
	}
	cpu.stop(b, b.N)
	if got != b.N {
		b.Fatalf("%d of %d items", got, b.N)
	}
}

func fanInForward(b *testing.B, n int) {
	rings := make([]*SPSC[int], n)
	for i := range rings {
		rings[i] = NewSPSC[int](fanInCap, Park{})
	}
	out := make(chan int, fanInCap)
	cpu := startCPU(b)
	fanInPush(rings, b.N)
	var wg sync.WaitGroup
	for _, q := range rings {
		wg.Go(func() {
			for v := range All(context.Background(), cons(q.Ends())) {
				out <- v
			}
		})
	}
	go func() { wg.Wait(); close(out) }()
	got := 0
	for range out {
		got++
	}
	cpu.stop(b, b.N)
	if got != b.N {
		b.Fatalf("%d of %d items", got, b.N)
	}
}

// BenchmarkSelectChanWake: a Select that sleeps and is woken by a channel
// case, a round trip per op: the benchmark sends on ping, the Selector's
// goroutine (waiting on a ring that stays empty, ping and a quit channel,
// under a cancellable ctx) receives it and answers on pong. Beside it, Go's
// select over the same two channels and a ctx. allocs/op is the Select's
// sleep: reflect.Select's receive buffer, or none in the native shapes.
func BenchmarkSelectChanWake(b *testing.B) {
	for _, name := range []string{"knit-selector", "go-select"} {
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ping, pong, quit := make(chan int), make(chan int), make(chan struct{})
			go func() {
				if name == "go-select" {
					for {
						select {
						case v := <-ping:
							pong <- v
						case <-quit:
							return
						case <-ctx.Done():
							return
						}
					}
				}
				q := NewMPMC[int](1, Park{})
				var got, r int
				sel := NewSelector(Park{}, PopCase(q, &r), RecvCase(ping, &got), RecvCase(quit, nil))
				for {
					if i, err := sel.Select(ctx); i != 1 || err != nil {
						return
					}
					pong <- got
				}
			}()
			b.ReportAllocs()
			cpu := startCPU(b)
			for i := range b.N {
				ping <- i
				if <-pong != i {
					b.Fatal("reply out of order")
				}
			}
			cpu.stop(b, b.N)
			close(quit)
		})
	}
}
