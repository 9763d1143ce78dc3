package knit

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkBroadcast: one producer streams b.N items to S subscribers
// (S = 1, 2, 4), each of which takes every item, in batches of 1 and 16;
// one op is one item delivered to all S. The comparison row is what Go
// offers: S buffered channels (capacity 1024, batch 16 sent as a [16]int
// value) fed by a fan-out loop. Rows are sub-benchmarks of one benchmark,
// so `-count` interleaves them; read them as ratios within one run.
func BenchmarkBroadcast(b *testing.B) {
	for _, batch := range []int{1, 16} {
		for _, subs := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("batch=%d/subs=%d/knit", batch, subs), func(b *testing.B) {
				benchBroadcast(b, subs, batch)
			})
			b.Run(fmt.Sprintf("batch=%d/subs=%d/%s", batch, subs, chanRow(batch)), func(b *testing.B) {
				if batch == 1 {
					benchChanFanout(b, subs)
				} else {
					benchChanFanout16(b, subs)
				}
			})
		}
	}
}

func benchBroadcast(b *testing.B, subs, batch int) {
	q := NewBroadcast[int](1024, Park{})
	ctx := context.Background()
	n := b.N
	var wg sync.WaitGroup
	for range subs {
		s := q.Subscribe()
		wg.Go(func() {
			dst := make([]int, batch)
			for got := 0; got < n; {
				if batch == 1 {
					if v, err := s.Pop(ctx); err != nil || v != got {
						panic(fmt.Sprint("Pop = ", v, err, "; want ", got))
					}
					got++
					continue
				}
				k, err := s.PopBatch(ctx, dst)
				if err != nil || dst[0] != got {
					panic(fmt.Sprint("PopBatch = ", dst[0], err, "; want ", got))
				}
				got += k
			}
		})
	}
	src := make([]int, batch)
	m := startCPU(b)
	for sent := 0; sent < n; {
		if batch == 1 {
			if err := q.Push(ctx, sent); err != nil {
				panic(err)
			}
			sent++
			continue
		}
		k := min(batch, n-sent)
		for i := range k {
			src[i] = sent + i
		}
		if _, err := q.PushBatch(ctx, src[:k]); err != nil {
			panic(err)
		}
		sent += k
	}
	wg.Wait()
	m.stop(b, n)
}

func benchChanFanout(b *testing.B, subs int) {
	chans := make([]chan int, subs)
	n := b.N
	var wg sync.WaitGroup
	for i := range chans {
		ch := make(chan int, 1024)
		chans[i] = ch
		wg.Go(func() {
			for want := range n {
				if v := <-ch; v != want {
					panic("out of order")
				}
			}
		})
	}
	m := startCPU(b)
	for i := range n {
		for _, ch := range chans {
			ch <- i
		}
	}
	wg.Wait()
	m.stop(b, n)
}

func benchChanFanout16(b *testing.B, subs int) {
	chans := make([]chan [16]int, subs)
	n := b.N
	var wg sync.WaitGroup
	for i := range chans {
		ch := make(chan [16]int, 1024/16)
		chans[i] = ch
		wg.Go(func() {
			for got := 0; got < n; got += 16 {
				if v := <-ch; v[0] != got {
					panic("out of order")
				}
			}
		})
	}
	m := startCPU(b)
	for sent := 0; sent < n; sent += 16 {
		var v [16]int
		for i := range v {
			v[i] = sent + i
		}
		for _, ch := range chans {
			ch <- v
		}
	}
	wg.Wait()
	m.stop(b, n)
}

// chanRow names the channel row: one item per send at batch 1, 16-item
// arrays at batch 16 (BenchmarkBroadcast's batch=1 rows are the per-item
// channel reference for both).
func chanRow(batch int) string {
	if batch == 1 {
		return "chan-fanout"
	}
	return "chan16-fanout"
}
