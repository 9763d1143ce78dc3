package knit

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"
)

// intWords adapts a Words ring, its two ends joined, to Queue[int] so the
// table-driven ring tests (FIFO, Close, blocking, stress, close race,
// fuzz, Select) run against the assembly.
type intWords struct{ w joined[uint64] }

// joinWords is a Words ring as a Queue[uint64]: its two ends, joined.
func joinWords(w *Words) joined[uint64] { return joined[uint64]{WordsProducer{w}, WordsConsumer{w}} }

var (
	_ sender[int]   = intWords{}
	_ receiver[int] = intWords{}
)

func (q intWords) TryPush(v int) error { return q.w.TryPush(uint64(v)) }
func (q intWords) TryPop() (int, error) {
	v, err := q.w.TryPop()
	return int(v), err
}
func (q intWords) Push(ctx context.Context, v int) error { return q.w.Push(ctx, uint64(v)) }
func (q intWords) Pop(ctx context.Context) (int, error) {
	v, err := q.w.Pop(ctx)
	return int(v), err
}
func (q intWords) TryPushBatch(vs []int) (int, error) { return q.w.TryPushBatch(asWords(vs)) }
func (q intWords) TryPopBatch(dst []int) (int, error) { return q.w.TryPopBatch(asWords(dst)) }
func (q intWords) PushBatch(ctx context.Context, vs []int) (int, error) {
	return q.w.PushBatch(ctx, asWords(vs))
}
func (q intWords) PopBatch(ctx context.Context, dst []int) (int, error) {
	return q.w.PopBatch(ctx, asWords(dst))
}
func (q intWords) Close()   { q.w.Close() }
func (q intWords) Len() int { return q.w.Len() }
func (q intWords) Cap() int { return q.w.Cap() }

func (q intWords) popOps() ringOps[int]  { return intOps{q.w.popOps()} }
func (q intWords) pushOps() ringOps[int] { return intOps{q.w.pushOps()} }

// intOps is a Words' ringOps seen as a ringOps[int], so Select runs
// against Words in the table-driven tests too.
type intOps struct{ w ringOps[uint64] }

func (o intOps) push(v int) status                          { return o.w.push(uint64(v)) }
func (o intOps) pop() (int, status)                         { v, st := o.w.pop(); return int(v), st }
func (o intOps) indices() (uint64, uint64)                  { return o.w.indices() }
func (o intOps) sharedPush() bool                           { return o.w.sharedPush() }
func (o intOps) sharedPop() bool                            { return o.w.sharedPop() }
func (o intOps) pushInFlight() bool                         { return o.w.pushInFlight() }
func (o intOps) popInFlight() bool                          { return o.w.popInFlight() }
func (o intOps) sides() (push, pop *sideGuard, ring string) { return o.w.sides() }
func (o intOps) pushN(vs []int) int                         { return o.w.pushN(asWords(vs)) }
func (o intOps) popN(dst []int) int                         { return o.w.popN(asWords(dst)) }
func (o intOps) bellsOf() *ringBells                        { return o.w.bellsOf() }
func (o intOps) pushClosed() bool                           { return o.w.pushClosed() }
func (o intOps) popEmpty() status                           { return o.w.popEmpty() }

// asWords views a []int as the []uint64 it is on a 64-bit GOARCH.
func asWords(vs []int) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(vs))), len(vs))
}

func init() {
	ringKinds = append(ringKinds, ringKind{
		name:   "Words",
		newInt: func(n int, p Park) Queue[int] { return intWords{joinWords(NewWords(n, p))} },
	})
}

// TestWordsLayout checks what the assembly assumes beyond go_asm.h's
// offsets: the slot slice of an SPSC[uint64] sits right after its core,
// at spscCore__size, and a Words is its SPSC[uint64] at offset 0.
func TestWordsLayout(t *testing.T) {
	var q SPSC[uint64]
	if off, size := unsafe.Offsetof(q.buf), unsafe.Sizeof(q.spscCore); off != size {
		t.Fatalf("SPSC[uint64].buf at %d, the assembly reads it at spscCore's size %d", off, size)
	}
	var w Words
	if off := unsafe.Offsetof(w.r); off != 0 {
		t.Fatalf("Words.r at %d, want 0", off)
	}
}

// TestWordsMatchesSPSC drives Words and SPSC[uint64] with the same
// operations, through their ends, and compares every result, errors
// included.
func TestWordsMatchesSPSC(t *testing.T) {
	wr := NewWords(8, Park{})
	w, s := joinWords(wr), joinSPSC(NewSPSC[uint64](8, Park{}))
	src := make([]uint64, 11)
	dw, ds := make([]uint64, 11), make([]uint64, 11)
	next := uint64(1)
	for i := range 5000 {
		switch i % 7 {
		case 0, 1:
			a, b := w.TryPush(next), s.TryPush(next)
			if a != b {
				t.Fatalf("op %d TryPush: words %v spsc %v", i, a, b)
			}
			next++
		case 2:
			a, erra := w.TryPop()
			b, errb := s.TryPop()
			if a != b || erra != errb {
				t.Fatalf("op %d TryPop: words %d,%v spsc %d,%v", i, a, erra, b, errb)
			}
		case 3:
			k := i % len(src)
			for j := range k {
				src[j] = next + uint64(j)
			}
			a, erra := w.TryPushBatch(src[:k])
			b, errb := s.TryPushBatch(src[:k])
			if a != b || erra != errb {
				t.Fatalf("op %d TryPushBatch(%d): words %d,%v spsc %d,%v", i, k, a, erra, b, errb)
			}
			next += uint64(a)
		case 4, 5:
			k := (i * 7) % len(dw)
			a, erra := w.TryPopBatch(dw[:k])
			b, errb := s.TryPopBatch(ds[:k])
			if a != b || erra != errb {
				t.Fatalf("op %d TryPopBatch(%d): words %d,%v spsc %d,%v", i, k, a, erra, b, errb)
			}
			for j := range a {
				if dw[j] != ds[j] {
					t.Fatalf("op %d TryPopBatch item %d: words %d spsc %d", i, j, dw[j], ds[j])
				}
			}
		case 6:
			if w.Len() != s.Len() {
				t.Fatalf("op %d Len: words %d spsc %d", i, w.Len(), s.Len())
			}
		}
	}
	w.Close()
	s.Close()
	if err := w.TryPush(1); err != ErrClosed {
		t.Fatalf("Words TryPush after Close = %v, want ErrClosed", err)
	}
	if n, err := w.TryPushBatch(src); n != 0 || err != ErrClosed {
		t.Fatalf("Words TryPushBatch after Close = %d, %v; want 0, ErrClosed", n, err)
	}
	for {
		a, erra := w.TryPop()
		b, errb := s.TryPop()
		if a != b || erra != errb {
			t.Fatalf("drain: words %d,%v spsc %d,%v", a, erra, b, errb)
		}
		if erra != nil {
			if erra != ErrClosed {
				t.Fatalf("drain ended with %v, want ErrClosed", erra)
			}
			break
		}
	}
	if _, st := wordPop(&wr.r); status(st) != stDrained {
		t.Fatalf("wordPop on a drained closed ring = %v, want drained", st)
	}
}

// BenchmarkWords: the assembly paths against SPSC[uint64]'s Go code in the
// same binary. "uncontended" is one goroutine pushing then popping (the
// instruction cost of each path); "1P1C" moves items between two
// goroutines; batch=64 moves them 64 at a time.
func BenchmarkWords(b *testing.B) {
	type ops struct {
		push  func(uint64) bool
		pop   func() (uint64, bool)
		pushB func([]uint64) int
		popB  func([]uint64) int
	}
	// endOps is the Try half of the grid as the loops below use it: did
	// one go in or come out, and how many of a batch.
	endOps := func(q joined[uint64]) ops {
		return ops{
			push: func(v uint64) bool { return q.TryPush(v) == nil },
			pop: func() (uint64, bool) {
				v, err := q.TryPop()
				return v, err == nil
			},
			pushB: func(vs []uint64) int { n, _ := q.TryPushBatch(vs); return n },
			popB:  func(dst []uint64) int { n, _ := q.TryPopBatch(dst); return n },
		}
	}
	impls := []struct {
		name string
		mk   func() ops
	}{
		{"asm", func() ops { return endOps(joinWords(NewWords(1024, Park{}))) }},
		{"go", func() ops { return endOps(joinSPSC(NewSPSC[uint64](1024, Park{}))) }},
	}
	for _, shape := range []string{"uncontended", "uncontended-batch=64", "1P1C", "1P1C-batch=64"} {
		for _, im := range impls {
			b.Run(shape+"/"+im.name, func(b *testing.B) {
				o := im.mk()
				buf := make([]uint64, 64)
				switch shape {
				case "uncontended":
					for i := range b.N {
						if !o.push(uint64(i)) {
							b.Fatalf("push %d into an empty ring failed", i)
						}
						if v, ok := o.pop(); !ok || v != uint64(i) {
							b.Fatalf("pop after push %d = %d, %v", i, v, ok)
						}
					}
				case "uncontended-batch=64":
					for i := range buf {
						buf[i] = uint64(i)
					}
					for range b.N / 64 {
						if k := o.pushB(buf); k != len(buf) {
							b.Fatalf("batch push into an empty ring took %d of %d", k, len(buf))
						}
						if k := o.popB(buf); k != len(buf) {
							b.Fatalf("batch pop after a full push took %d of %d", k, len(buf))
						}
					}
					// The pops wrote what they took back into buf.
					for i, v := range buf {
						if v != uint64(i) {
							b.Fatalf("after the batches buf[%d] = %d, want %d", i, v, i)
						}
					}
					if v, ok := o.pop(); ok {
						b.Fatalf("item %d left in the ring after the batches", v)
					}
				case "1P1C", "1P1C-batch=64":
					batch := 1
					if shape == "1P1C-batch=64" {
						batch = 64
					}
					done := make(chan struct{})
					n := b.N
					// The consumer sums the items one at a time; a batch is
					// only counted, as summing it would add a pass over
					// every batch to what is measured. It stops short, for
					// the count check to report, when the ring is empty
					// after the producer is done: a lost item.
					var took int
					var sum uint64 // of what was taken, when batch is 1
					var pushedAll atomic.Bool
					go func() {
						defer close(done)
						dst := make([]uint64, batch)
						var got int
						var s uint64
						for drained := false; got < n; {
							k := 0
							if batch == 1 {
								if v, ok := o.pop(); ok {
									s += v
									k = 1
								}
							} else {
								k = o.popB(dst)
							}
							if k == 0 {
								if drained {
									break
								}
								drained = pushedAll.Load()
								runtime.Gosched() // the producer may need this core
							}
							got += k
						}
						took, sum = got, s
					}()
					for sent := 0; sent < n; {
						k := 0
						if batch == 1 {
							if o.push(uint64(sent)) {
								k = 1
							}
						} else {
							k = o.pushB(buf[:min(batch, n-sent)])
						}
						if k == 0 {
							runtime.Gosched()
						}
						sent += k
					}
					pushedAll.Store(true)
					<-done
					b.StopTimer()
					if took != n {
						b.Fatalf("consumer took %d items, producer pushed %d", took, n)
					}
					if want := uint64(n) * uint64(n-1) / 2; batch == 1 && sum != want {
						b.Fatalf("items popped sum to %d, want %d", sum, want)
					}
					if v, ok := o.pop(); ok {
						b.Fatalf("item %d left in the ring after all %d were taken", v, n)
					}
				}
			})
		}
	}
}
