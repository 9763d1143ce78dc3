package knit

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/knit-go/knit/internal/cputime"
)

// Ring benchmarks. Each top-level benchmark holds its comparison rows as
// sub-benchmarks, so `go test -bench Ring -count 5` interleaves them; the
// bench module's knitbench runs the same shapes as interleaved rounds.

// cpuMeter reports CPU-µs per op next to ns/op.
type cpuMeter struct{ start time.Duration }

func startCPU(b *testing.B) cpuMeter { b.ResetTimer(); return cpuMeter{cputime.Used()} }

func (m cpuMeter) stop(b *testing.B, ops int) {
	b.StopTimer()
	if ops > 0 {
		b.ReportMetric(float64(cputime.Used()-m.start)/1e3/float64(ops), "cpu-µs/op")
	}
}

// BenchmarkRingSPSCThroughput: one producer, one consumer, items moved in
// batches of 1, 16 and 64, against a buffered channel and the limit: a
// bare atomic handoff of one word at a time.
func BenchmarkRingSPSCThroughput(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d/knit", batch), func(b *testing.B) {
			q := NewSPSC[int](1024, Park{})
			tx, rx := q.Ends()
			done := make(chan struct{})
			n := b.N
			go func() {
				defer close(done)
				dst := make([]int, batch)
				for got := 0; got < n; {
					var k int
					if batch == 1 {
						if _, err := rx.Pop(context.Background()); err != nil {
							panic(err)
						}
						k = 1
					} else if k, _ = rx.TryPopBatch(dst); k == 0 {
						if _, err := rx.Pop(context.Background()); err != nil {
							panic(err)
						}
						k = 1
					}
					got += k
				}
			}()
			src := make([]int, batch)
			m := startCPU(b)
			for sent := 0; sent < n; {
				if batch == 1 {
					if err := tx.Push(context.Background(), sent); err != nil {
						panic(err)
					}
					sent++
					continue
				}
				k, _ := tx.TryPushBatch(src[:min(batch, n-sent)])
				if k == 0 {
					runtime.Gosched()
				}
				sent += k
			}
			<-done
			m.stop(b, n)
		})
		b.Run(fmt.Sprintf("batch=%d/chan", batch), func(b *testing.B) {
			ch := make(chan int, 1024)
			done := make(chan struct{})
			n := b.N
			go func() {
				defer close(done)
				for range n {
					<-ch
				}
			}()
			m := startCPU(b)
			for i := range n {
				ch <- i
			}
			<-done
			m.stop(b, n)
		})
	}
	b.Run("limit-atomic-handoff", func(b *testing.B) {
		// One word, one item at a time: 0 means empty, v+1 an item.
		var w atomic.Uint64
		n := b.N
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range n {
				for i := 1; w.Load() == 0; i++ {
					if i%4096 == 0 {
						runtime.Gosched()
					}
				}
				w.Store(0)
			}
		}()
		m := startCPU(b)
		for i := range n {
			for j := 1; w.Load() != 0; j++ {
				if j%4096 == 0 {
					runtime.Gosched()
				}
			}
			w.Store(uint64(i) + 1)
		}
		<-done
		m.stop(b, n)
	})
}

// BenchmarkRingRoundTrip: a request ring and a reply ring between two
// goroutines, with and without locked threads, against two channels and
// the raw atomic ping-pong.
func BenchmarkRingRoundTrip(b *testing.B) {
	for _, locked := range []bool{false, true} {
		name := "unlocked"
		if locked {
			name = "locked"
		}
		b.Run(name+"/knit-spsc", func(b *testing.B) {
			req, rep := NewSPSC[int](64, Park{}), NewSPSC[int](64, Park{})
			reqTx, reqRx := req.Ends()
			repTx, repRx := rep.Ends()
			roundTrip(b, locked,
				func(v int) {
					reqTx.Push(context.Background(), v)
					if r, _ := repRx.Pop(context.Background()); r != v {
						panic("reply out of order")
					}
				},
				func() bool {
					v, err := reqRx.Pop(context.Background())
					if err != nil {
						return false
					}
					repTx.Push(context.Background(), v)
					return true
				},
				reqTx.Close)
		})
		b.Run(name+"/chan", func(b *testing.B) {
			req, rep := make(chan int), make(chan int)
			roundTrip(b, locked,
				func(v int) { req <- v; <-rep },
				func() bool {
					v, ok := <-req
					if !ok {
						return false
					}
					rep <- v
					return true
				},
				func() { close(req) })
		})
	}
	b.Run("limit-atomic", func(b *testing.B) { pingPong(b, atomicWait) })
}

// roundTrip runs serve on a partner goroutine until it reports false and
// times b.N calls of call.
func roundTrip(b *testing.B, locked bool, call func(int), serve func() bool, stop func()) {
	done := make(chan struct{})
	go func() {
		if locked {
			runtime.LockOSThread()
		}
		defer close(done)
		for serve() {
		}
	}()
	if locked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	m := startCPU(b)
	for i := range b.N {
		call(i)
	}
	m.stop(b, b.N)
	stop()
	<-done
}

// BenchmarkRingContended: P producers and P consumers through one ring
// against one buffered channel.
func BenchmarkRingContended(b *testing.B) {
	for _, p := range []int{2, 4, 16} {
		for _, kind := range []string{"MPMC", "MPSC"} {
			consumers := p
			if kind == "MPSC" {
				consumers = 1
			}
			for _, backoff := range []bool{true, false} {
				name := fmt.Sprintf("%dP%dC/knit-%s", p, consumers, kind)
				if !backoff {
					name += "-no-backoff"
				}
				b.Run(name, func(b *testing.B) {
					defer setHooks(func(h *testHooks) { h.noSeqBackoff = !backoff })()
					var q Queue[int]
					if kind == "MPSC" {
						q = NewMPSC[int](1024, Park{})
					} else {
						q = NewMPMC[int](1024, Park{})
					}
					contended(b, p, consumers,
						func(v int) { q.Push(context.Background(), v) },
						func() bool { _, err := q.Pop(context.Background()); return err == nil },
						q.Close)
				})
			}
			b.Run(fmt.Sprintf("%dP%dC/chan", p, consumers), func(b *testing.B) {
				ch := make(chan int, 1024)
				contended(b, p, consumers,
					func(v int) { ch <- v },
					func() bool { _, ok := <-ch; return ok },
					func() { close(ch) })
			})
		}
	}
}

func contended(b *testing.B, producers, consumers int, push func(int), pop func() bool, closeFn func()) {
	var cwg, pwg sync.WaitGroup
	for range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for pop() {
			}
		}()
	}
	per := b.N/producers + 1
	m := startCPU(b)
	for range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := range per {
				push(i)
			}
		}()
	}
	pwg.Wait()
	closeFn()
	cwg.Wait()
	m.stop(b, per*producers)
}

// BenchmarkRingBursts: the blocking path. The producer sends bursts of 16
// with a pause between them long enough for the consumer to park, so each
// burst pays one wake; spin budgets against a channel.
func BenchmarkRingBursts(b *testing.B) {
	const burst = 16
	gap := 50 * time.Microsecond
	for _, spin := range []time.Duration{0, 5 * time.Microsecond, 20 * time.Microsecond, 50 * time.Microsecond} {
		b.Run(fmt.Sprintf("knit-spin=%v", spin), func(b *testing.B) {
			q := NewSPSC[int](64, Park{Spin: spin})
			tx, rx := q.Ends()
			bursts(b, burst, gap,
				func(v int) { tx.Push(context.Background(), v) },
				func() bool { _, err := rx.Pop(context.Background()); return err == nil },
				tx.Close)
		})
	}
	b.Run("chan", func(b *testing.B) {
		ch := make(chan int, 64)
		bursts(b, burst, gap,
			func(v int) { ch <- v },
			func() bool { _, ok := <-ch; return ok },
			func() { close(ch) })
	})
}

func bursts(b *testing.B, burst int, gap time.Duration, push func(int), pop func() bool, closeFn func()) {
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pop() {
			got.Add(1)
		}
	}()
	m := startCPU(b)
	for i := range b.N {
		for j := range burst {
			push(i*burst + j)
		}
		for got.Load() < int64((i+1)*burst) {
			runtime.Gosched()
		}
		time.Sleep(gap)
	}
	m.stop(b, b.N*burst)
	closeFn()
	<-done
}

// BenchmarkRingSPSCSpin is rigtorp's SPSCQueue benchmark shape: a producer
// and a consumer on locked threads, try-push and try-pop spin loops with
// no parking, one item at a time. It measures the publish itself: the
// release store, the cached index, the doorbell's check for waiters.
func BenchmarkRingSPSCSpin(b *testing.B) {
	b.Run("SPSC[int32]", func(b *testing.B) {
		q := NewSPSC[int32](1<<16, Park{})
		tx, rx := q.Ends()
		spinStream(b, func(v int) bool { return tx.TryPush(int32(v)) == nil }, func() bool { _, err := rx.TryPop(); return err == nil })
	})
	b.Run("Words", func(b *testing.B) {
		q := NewWords(1<<16, Park{})
		tx, rx := q.Ends()
		spinStream(b, func(v int) bool { return tx.TryPush(uint64(v)) == nil }, func() bool { _, err := rx.TryPop(); return err == nil })
	})
	b.Run("MPMC[int32]", func(b *testing.B) {
		q := NewMPMC[int32](1<<16, Park{})
		spinStream(b, func(v int) bool { return q.TryPush(int32(v)) == nil }, func() bool { _, err := q.TryPop(); return err == nil })
	})
	b.Run("SPMC[int32]", func(b *testing.B) {
		q := NewSPMC[int32](1<<16, Park{})
		spinStream(b, func(v int) bool { return q.TryPush(int32(v)) == nil }, func() bool { _, err := q.TryPop(); return err == nil })
	})
	b.Run("MPSC[int32]", func(b *testing.B) {
		q := NewMPSC[int32](1<<16, Park{})
		spinStream(b, func(v int) bool { return q.TryPush(int32(v)) == nil }, func() bool { _, err := q.TryPop(); return err == nil })
	})
}

// spinStream moves b.N items from a locked producer thread to the locked
// benchmark thread, both spinning on their try calls.
func spinStream(b *testing.B, push func(int) bool, pop func() bool) {
	done := make(chan struct{})
	n := b.N
	go func() {
		runtime.LockOSThread()
		defer close(done)
		for i := range n {
			for j := 1; !push(i); j++ {
				if j%4096 == 0 {
					runtime.Gosched()
				}
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m := startCPU(b)
	for range n {
		for j := 1; !pop(); j++ {
			if j%4096 == 0 {
				runtime.Gosched()
			}
		}
	}
	<-done
	m.stop(b, n)
}

// BenchmarkRingPublish weighs the ways to publish an index, in one binary
// so they share a run: a minimal SPSC loop (cached opposite index, one
// item at a time, two locked threads) whose producer and consumer store
// their index with storeRel (the assembly MOV on amd64, sync/atomic's
// Store in purego and race builds), with sync/atomic's Store (XCHG on
// amd64, STLR on arm64), and with a plain Go store through unsafe (a MOV
// the compiler happens to keep in order, which nothing guarantees).
func BenchmarkRingPublish(b *testing.B) {
	for _, m := range []struct {
		name  string
		store func(*atomic.Uint64, uint64)
	}{
		{"storeRel", storeRel},
		{"atomic.Store", (*atomic.Uint64).Store},
		{"plain", func(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }},
	} {
		b.Run(m.name, func(b *testing.B) {
			q := NewSPSC[uint64](1<<12, Park{})
			buf, mask := q.buf, q.mask
			done := make(chan struct{})
			n := uint64(b.N)
			go func() {
				runtime.LockOSThread()
				defer close(done)
				t, hc := uint64(0), uint64(0)
				for t < n {
					if t-hc > mask {
						if hc = q.head.Load(); t-hc > mask {
							continue
						}
					}
					buf[t&mask] = t
					t++
					m.store(&q.tail, t)
				}
			}()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := startCPU(b)
			h, tc := uint64(0), uint64(0)
			for h < n {
				if h == tc {
					if tc = q.tail.Load(); h == tc {
						continue
					}
				}
				if buf[h&mask] != h {
					b.Fatal("out of order")
				}
				h++
				m.store(&q.head, h)
			}
			<-done
			cpu.stop(b, b.N)
		})
	}
}

// BenchmarkRingSPSCModes runs rigtorp's spin shape (locked threads, try
// loops, 4-byte items, a 2^16-slot ring) on one SPSC ring whose bells go
// relaxed as usual (release stores, MOV through the assembly) and on one
// held fenced (sync/atomic's Store, XCHG, inlined), in one binary: the
// price of the assembly call against the locked instruction it replaces.
func BenchmarkRingSPSCModes(b *testing.B) {
	for _, fenced := range []bool{false, true} {
		name := "relaxed"
		if fenced {
			name = "fenced"
		}
		b.Run(name, func(b *testing.B) {
			q := NewSPSC[int32](1<<16, Park{})
			if fenced {
				// A park "in the future" keeps the bells from relaxing.
				q.bells.notEmpty.lastPark.Store(1 << 62)
				q.bells.notFull.lastPark.Store(1 << 62)
			}
			p, c := q.Ends()
			n := b.N
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				defer close(done)
				for i := range n {
					for p.TryPush(int32(i)) != nil {
					}
				}
			}()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			m := startCPU(b)
			for i := range n {
				v, err := c.TryPop()
				for err != nil {
					v, err = c.TryPop()
				}
				if v != int32(i) {
					b.Fatal("out of order")
				}
			}
			<-done
			m.stop(b, n)
		})
	}
}

// BenchmarkRingPushPopCtx is a blocking Push and Pop that never wait (one
// goroutine, a ring that is never full or empty when it is called), with
// context.Background and with a cancellable ctx: what the done-ctx check
// at the top of every ctx call costs, against TryPush and TryPop on the
// same ring as the row without it.
func BenchmarkRingPushPopCtx(b *testing.B) {
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, k := range ringKinds {
		for _, c := range []struct {
			name string
			ctx  context.Context
		}{{"try", nil}, {"background", context.Background()}, {"cancellable", cctx}} {
			b.Run(k.name+"/"+c.name, func(b *testing.B) {
				q := k.newInt(64, Park{})
				if err := q.TryPush(0); err != nil {
					b.Fatal(err)
				}
				if c.ctx == nil {
					for i := 0; b.Loop(); i++ {
						if err := q.TryPush(i); err != nil {
							b.Fatal(err)
						}
						if _, err := q.TryPop(); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				for i := 0; b.Loop(); i++ {
					if err := q.Push(c.ctx, i); err != nil {
						b.Fatal(err)
					}
					if _, err := q.Pop(c.ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRingAll: a consumer that ranges over All against one that
// loops on Pop, on the same SPSC stream, and against ranging over a
// buffered channel.
func BenchmarkRingAll(b *testing.B) {
	run := func(b *testing.B, consume func(q *SPSC[int]) int) {
		q := NewSPSC[int](1024, Park{})
		cpu := startCPU(b)
		go func() {
			tx, _ := q.Ends()
			for i := range b.N {
				tx.Push(context.Background(), i)
			}
			tx.Close()
		}()
		got := consume(q)
		cpu.stop(b, b.N)
		if got != b.N {
			b.Fatalf("%d of %d items", got, b.N)
		}
	}
	b.Run("pop-loop", func(b *testing.B) {
		run(b, func(q *SPSC[int]) int {
			n, rx := 0, cons(q.Ends())
			for {
				if _, err := rx.Pop(context.Background()); err != nil {
					return n
				}
				n++
			}
		})
	})
	b.Run("range-all", func(b *testing.B) {
		run(b, func(q *SPSC[int]) int {
			n := 0
			for range All(context.Background(), cons(q.Ends())) {
				n++
			}
			return n
		})
	})
	b.Run("range-chan", func(b *testing.B) {
		ch := make(chan int, 1024)
		cpu := startCPU(b)
		go func() {
			for i := range b.N {
				ch <- i
			}
			close(ch)
		}()
		n := 0
		for range ch {
			n++
		}
		cpu.stop(b, b.N)
		if n != b.N {
			b.Fatalf("%d of %d items", n, b.N)
		}
	})
}

// BenchmarkRingExactCapacity: what holding exactly the capacity asked for
// costs. Each ring at a power of two (1024, where the bound is the slot
// array's own) beside the same ring at 1000, where a multi-producer push
// also loads the slot capacity places back and SPSC and Words compare
// with the capacity instead of the mask: 2P2C and 1P1C streams through
// an MPMC (blocking calls), and a batch-1 stream through SPSC and Words.
func BenchmarkRingExactCapacity(b *testing.B) {
	for _, c := range []int{1024, 1000} {
		for _, pc := range [][2]int{{1, 1}, {2, 2}} {
			b.Run(fmt.Sprintf("MPMC-%dP%dC/cap=%d", pc[0], pc[1], c), func(b *testing.B) {
				q := NewMPMC[int](c, Park{})
				contended(b, pc[0], pc[1],
					func(v int) { q.Push(context.Background(), v) },
					func() bool { _, err := q.Pop(context.Background()); return err == nil },
					q.Close)
			})
		}
		b.Run(fmt.Sprintf("SPSC/cap=%d", c), func(b *testing.B) {
			q := NewSPSC[int](c, Park{})
			tx, rx := q.Ends()
			contended(b, 1, 1,
				func(v int) { tx.Push(context.Background(), v) },
				func() bool { _, err := rx.Pop(context.Background()); return err == nil },
				tx.Close)
		})
		b.Run(fmt.Sprintf("Words/cap=%d", c), func(b *testing.B) {
			q := NewWords(c, Park{})
			tx, rx := q.Ends()
			contended(b, 1, 1,
				func(v int) { tx.Push(context.Background(), uint64(v)) },
				func() bool { _, err := rx.Pop(context.Background()); return err == nil },
				tx.Close)
		})
	}
}
