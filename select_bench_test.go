package knit

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkSelectFanIn: producers push into 2 or 8 rings, one per
// producer, and one consumer takes every item: with a Selector over the
// rings, with Go's select over as many buffered channels, and with a
// goroutine per ring that pops and forwards into one channel (the way to
// wait on several rings without Select). ns/op is per item.
func BenchmarkSelectFanIn(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("rings=%d/knit-select", n), func(b *testing.B) { fanInSelect(b, n) })
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
			tx := q.Producer()
			for i := range share {
				tx.Push(context.Background(), i)
			}
			tx.Close()
		}()
	}
}

func fanInSelect(b *testing.B, n int) {
	rings := make([]*SPSC[int], n)
	var v int
	cases := make([]Case, n)
	for i := range rings {
		rings[i] = NewSPSC[int](fanInCap)
		cases[i] = PopCase(rings[i].Consumer(), &v)
	}
	cpu := startCPU(b)
	fanInPush(rings, b.N)
	got, ctx := 0, context.Background()
	for len(cases) > 0 {
		sel := NewSelector(cases...)
		for {
			i, err := sel.Select(ctx)
			if err != nil {
				cases = append(cases[:i], cases[i+1:]...)
				break
			}
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
		rings[i] = NewSPSC[int](fanInCap)
	}
	out := make(chan int, fanInCap)
	cpu := startCPU(b)
	fanInPush(rings, b.N)
	var wg sync.WaitGroup
	for _, q := range rings {
		wg.Go(func() {
			for v := range q.Consumer().All(context.Background()) {
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
