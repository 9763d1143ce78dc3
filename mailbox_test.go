package knit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// Mailbox has the rings' method set, so every table-driven ring test runs
// on it, skipping the steps that need a full ring.
func init() {
	ringKinds = append(ringKinds, ringKind{
		name: "Mailbox", multiProducer: true, unbounded: true,
		newInt:         func(_ int, park Park) Queue[int] { return NewMailbox[int](park) },
		newPtr:         func(int) Queue[*int] { return NewMailbox[*int](Park{}) },
		slotsAreZeroed: func(q Queue[*int]) bool { return mailboxSlotsZero(q.(*Mailbox[*int])) },
	})
}

// mailboxSlotsZero reports whether no slot of any segment the mailbox
// holds (the chain from the consumer's segment, and the spare) references
// anything.
func mailboxSlotsZero[T comparable](m *Mailbox[T]) bool {
	var zero T
	for _, s := range mailboxSegs(m) {
		for i := range s.slots {
			if s.slots[i].val != zero {
				return false
			}
		}
	}
	return true
}

// mailboxSegs lists the segments a mailbox keeps reachable: the chains
// of next pointers from each of its roots (the consumer's segment, the
// last one and the spare), each segment once. Call it from the consumer
// with no push in flight.
func mailboxSegs[T any](m *Mailbox[T]) []*mboxSeg[T] {
	var segs []*mboxSeg[T]
	seen := make(map[*mboxSeg[T]]bool)
	for _, s := range []*mboxSeg[T]{m.headSeg, m.tailSeg.Load(), m.spare.Load()} {
		for ; s != nil && !seen[s]; s = s.next.Load() {
			seen[s] = true
			segs = append(segs, s)
		}
	}
	return segs
}

// TestMailboxCap: Cap is math.MaxInt (no bound); Len counts what is in.
func TestMailboxCap(t *testing.T) {
	m := NewMailbox[int](Park{})
	if m.Cap() != math.MaxInt {
		t.Fatalf("Cap = %d, want math.MaxInt", m.Cap())
	}
	n := 3*mailboxSegSize + 5
	for i := range n {
		if m.TryPush(i) != nil {
			t.Fatalf("TryPush %d failed on an open mailbox", i)
		}
	}
	if m.Len() != n {
		t.Fatalf("Len = %d, want %d", m.Len(), n)
	}
	dst := make([]int, mailboxSegSize+3)
	if k, err := m.TryPopBatch(dst); k != len(dst) || err != nil || dst[0] != 0 || dst[k-1] != k-1 {
		t.Fatalf("TryPopBatch across a segment = %d, %v, %d..%d", k, err, dst[0], dst[max(k-1, 0)])
	}
	if m.Len() != n-len(dst) {
		t.Fatalf("Len = %d, want %d", m.Len(), n-len(dst))
	}
	var zero Mailbox[int]
	if zero.Cap() != 0 || zero.Len() != 0 {
		t.Fatal("the zero Mailbox has a Cap or Len")
	}
	mustPanic(t, "zero Mailbox.TryPush", func() { zero.TryPush(1) }, "NewMailbox")
	mustPanic(t, "zero Mailbox.TryPop", func() { zero.TryPop() }, "NewMailbox")
	mustPanic(t, "zero Mailbox.TryPushBatch", func() { zero.TryPushBatch([]int{1}) }, "NewMailbox")
	mustPanic(t, "zero Mailbox.TryPopBatch", func() { zero.TryPopBatch(make([]int, 1)) }, "NewMailbox")
}

// TestMailboxSegments: memory grows one allocation per segment while the
// consumer lags, a drained mailbox holds at most two segments, and a
// consumer that keeps up makes pushes and pops allocate nothing, across
// segment boundaries.
func TestMailboxSegments(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const segs = 20
	// Mallocs counts the whole process, and the runtime allocates now
	// and then on its own (a thread it starts while the background
	// membarrier registration sits in its syscall, the segment pool's
	// per-P array on its first Get): take the best of a few fresh
	// mailboxes, and allow two such. A push that allocates fails every
	// try by thousands.
	var m *Mailbox[int]
	var grew uint64
	for range 3 {
		m = NewMailbox[int](Park{})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range segs * mailboxSegSize {
			m.TryPush(i)
		}
		runtime.ReadMemStats(&after)
		if grew = after.Mallocs - before.Mallocs; grew <= segs+2 {
			break
		}
	}
	if grew > segs+2 {
		t.Errorf("%d segments' worth of pushes made %d allocations, want at most %d", segs, grew, segs+2)
	}
	if n := len(mailboxSegs(m)); n < segs {
		t.Fatalf("mailbox holds %d segments for %d segments of items", n, segs)
	}
	for i := range segs * mailboxSegSize {
		if v, err := m.TryPop(); err != nil || v != i {
			t.Fatalf("TryPop = %d, %v; want %d", v, err, i)
		}
	}
	if _, err := m.TryPop(); err == nil {
		t.Fatal("items left")
	}
	if n := len(mailboxSegs(m)); n > 2 {
		t.Errorf("a drained mailbox holds %d segments, want at most 2", n)
	}
	ctx := context.Background()
	batch := make([]int, 100)
	allocs := testing.AllocsPerRun(200, func() {
		for range 10 {
			if err := m.Push(ctx, 1); err != nil {
				panic(err)
			}
			if _, err := m.Pop(ctx); err != nil {
				panic(err)
			}
		}
		m.TryPushBatch(batch)
		if n, _ := m.PopBatch(ctx, batch); n != len(batch) {
			panic("short batch")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocs per cycle in steady state, want 0", allocs)
	}
	if n := len(mailboxSegs(m)); n > 2 {
		t.Errorf("after steady state the mailbox holds %d segments, want at most 2", n)
	}
}

// TestMailboxFanIn: 16 producers push with every call, batches crossing
// segment boundaries, while the consumer pops with every call; each
// producer's items arrive once, in order, and Close, racing the last
// pushes, loses nothing that was accepted.
func TestMailboxFanIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	per := 20_000
	if testing.Short() || raceEnabled {
		per = 2_000
	}
	for _, closeEarly := range []bool{false, true} {
		t.Run(fmt.Sprintf("closeEarly=%v", closeEarly), func(t *testing.T) {
			defer watchdog(t, 120*time.Second)()
			const producers = 16
			m := NewMailbox[int](Park{Spin: NoSpin})
			ctx := context.Background()
			accepted := make([]atomic.Int64, producers)
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(p), 9))
					batch := make([]int, 0, 300)
					for i := 0; i < per; {
						var n int
						switch rng.IntN(4) {
						case 0:
							if m.TryPush(p<<20|i) == nil {
								n = 1
							}
						case 1:
							if m.Push(ctx, p<<20|i) == nil {
								n = 1
							}
						default:
							batch = batch[:0]
							for j := i; j < min(i+1+rng.IntN(300), per); j++ {
								batch = append(batch, p<<20|j)
							}
							n, _ = m.PushBatch(ctx, batch)
						}
						if n == 0 {
							return // closed
						}
						i += n
						accepted[p].Store(int64(i))
					}
				})
			}
			if closeEarly {
				go func() {
					for accepted[0].Load() < int64(per/2) {
						runtime.Gosched()
					}
					m.Close()
				}()
			} else {
				go func() { wg.Wait(); m.Close() }()
			}
			next := make([]int, producers)
			dst := make([]int, 64)
			rng := rand.New(rand.NewPCG(7, 7))
			take := func(v int) {
				p, i := v>>20, v&(1<<20-1)
				if i != next[p] {
					t.Fatalf("producer %d: got %d, want %d", p, i, next[p])
				}
				next[p]++
			}
		loop:
			for {
				switch rng.IntN(3) {
				case 0:
					v, err := m.Pop(ctx)
					if err != nil {
						break loop
					}
					take(v)
				case 1:
					n, err := m.PopBatch(ctx, dst[:1+rng.IntN(64)])
					if err != nil {
						break loop
					}
					for _, v := range dst[:n] {
						take(v)
					}
				case 2:
					n, _ := m.TryPopBatch(dst)
					for _, v := range dst[:n] {
						take(v)
					}
				}
			}
			wg.Wait()
			for p := range producers {
				if int64(next[p]) != accepted[p].Load() {
					t.Fatalf("producer %d: %d accepted, %d popped", p, accepted[p].Load(), next[p])
				}
			}
			if !closeEarly && next[0] != per {
				t.Fatalf("popped %d of %d", next[0], per)
			}
		})
	}
}

// TestMailboxRecycledSegment: a producer that still holds a segment
// after the consumer recycled it, and the segment was linked again, claims
// in its new incarnation or finds it full; it never links after a
// segment with room (the stale grow in this test would otherwise strand
// the items behind it).
func TestMailboxRecycledSegment(t *testing.T) {
	m := NewMailbox[int](Park{})
	first := m.tailSeg.Load()
	for i := range mailboxSegSize + 1 {
		m.TryPush(i) // fills first, links a second
	}
	for range mailboxSegSize + 1 {
		m.TryPop() // finishes first: it becomes the spare
	}
	for i := range mailboxSegSize - 1 {
		m.TryPush(i) // fills the second but one slot
	}
	m.TryPush(0)
	m.TryPush(0) // links first again, as the third segment
	if m.tailSeg.Load() != first {
		t.Fatal("the spare was not reused")
	}
	// A producer that found first full in its first incarnation now
	// asks to grow it: first has room, so nothing is linked.
	if !m.grow(first) || m.tailSeg.Load() != first || first.next.Load() != nil {
		t.Fatal("a stale grow linked a segment after one with room")
	}
	n := 0
	for {
		if _, err := m.TryPop(); err != nil {
			break
		}
		n++
	}
	if n != mailboxSegSize+1 {
		t.Fatalf("popped %d, want %d", n, mailboxSegSize+1)
	}
}

// TestMailboxDrainedSegments: after a burst that no consumer kept up
// with, a drained mailbox keeps at most two segments in its chain and
// spare (the rest are in its pool, which the collector empties), however
// it was drained, burst after burst.
func TestMailboxDrainedSegments(t *testing.T) {
	var buf [300]int
	for _, pc := range []struct {
		name string
		pop  func(m *Mailbox[int]) []int
	}{
		{"TryPop", func(m *Mailbox[int]) []int {
			v, err := m.TryPop()
			buf[0] = v
			return buf[:btoi(err == nil)]
		}},
		{"TryPopBatch", func(m *Mailbox[int]) []int {
			n, _ := m.TryPopBatch(buf[:])
			return buf[:n]
		}},
	} {
		pop := pc.pop
		t.Run(pc.name, func(t *testing.T) {
			m := NewMailbox[int](Park{})
			for burst, n := range []int{64 * mailboxSegSize, 10*mailboxSegSize + 7, 3 * mailboxSegSize, 40*mailboxSegSize - 1} {
				for i := range n {
					m.TryPush(i)
				}
				if k := len(mailboxSegs(m)); k < n/mailboxSegSize {
					t.Fatalf("burst %d: %d items in %d segments", burst, n, k)
				}
				for got := 0; got < n; {
					vs := pop(m)
					if len(vs) == 0 {
						t.Fatalf("burst %d: empty after %d of %d", burst, got, n)
					}
					for _, v := range vs {
						if v != got {
							t.Fatalf("burst %d: popped %d, want %d", burst, v, got)
						}
						got++
					}
				}
				if _, err := m.TryPop(); err == nil {
					t.Fatalf("burst %d: items left", burst)
				}
				if k := len(mailboxSegs(m)); k > 2 {
					t.Fatalf("burst %d: a drained mailbox keeps %d segments reachable, want at most 2", burst, k)
				}
			}
		})
	}
}

// TestMailboxDrainedHeap: the heap a drained mailbox keeps is at most
// about two segments, as the collector sees it, whatever the burst was.
func TestMailboxDrainedHeap(t *testing.T) {
	const segs = 256
	segBytes := uint64(unsafe.Sizeof(mboxSeg[int]{}))
	// Room for the allocator's size classes, the Mailbox itself and
	// whatever else the runtime allocates meanwhile; well below the
	// burst.
	const slack = 256 << 10
	live := func() uint64 {
		var ms runtime.MemStats
		least := uint64(math.MaxUint64)
		for range 3 {
			runtime.GC() // returns once the heap is marked and swept
			runtime.ReadMemStats(&ms)
			least = min(least, ms.HeapAlloc)
		}
		return least
	}
	before := live()
	m := NewMailbox[int](Park{})
	for i := range segs * mailboxSegSize {
		m.TryPush(i)
	}
	grown := live()
	if grown < before+segs*segBytes {
		t.Fatalf("heap grew by %d bytes for %d segments of %d bytes: the figures do not show the segments",
			int64(grown-before), segs, segBytes)
	}
	for i := range segs * mailboxSegSize {
		if v, err := m.TryPop(); err != nil || v != i {
			t.Fatalf("TryPop = %d, %v; want %d", v, err, i)
		}
	}
	drained := live()
	runtime.KeepAlive(m)
	if held, most := int64(drained-before), int64(2*segBytes+slack); held > most {
		t.Errorf("a drained mailbox holds %d bytes (%.1f segments of %d), want at most %d; %d bytes when full",
			held, float64(held)/float64(segBytes), segBytes, most, grown-before)
	}
}

// TestMailboxDrainedFanIn: producers push bursts across many segment
// boundaries while the consumer pops, at times lagging several segments
// behind, so that finished segments become the spare, are dropped and
// are linked again while producers still hold old ones. Every item
// arrives once, and after each burst the drained mailbox keeps at most
// two segments reachable.
func TestMailboxDrainedFanIn(t *testing.T) {
	defer watchdog(t, 120*time.Second)()
	const producers = 6
	rounds, per := 30, 3*mailboxSegSize // per is each producer's share of a round
	if testing.Short() || raceEnabled {
		rounds = 8
	}
	total := producers * per
	m := NewMailbox[int](Park{Spin: NoSpin})
	ctx := context.Background()
	seen := make([]bool, rounds*total)
	rng := rand.New(rand.NewPCG(3, 1))
	dst := make([]int, 200)
	for r := range rounds {
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				batch := make([]int, 0, 100)
				for i := 0; i < per; {
					v := r*total + p*per + i
					if i%3 == 0 {
						if m.TryPush(v) != nil {
							panic("TryPush failed on an open mailbox")
						}
						i++
						continue
					}
					batch = batch[:0]
					for j := i; j < min(i+1+i%100, per); j++ {
						batch = append(batch, r*total+p*per+j)
					}
					if n, err := m.TryPushBatch(batch); n != len(batch) || err != nil {
						panic(fmt.Sprint("TryPushBatch on an open mailbox = ", n, ", ", err))
					}
					i += len(batch)
				}
			})
		}
		got, sum := 0, 0
		take := func(v int) {
			if v < r*total || v >= (r+1)*total || seen[v] {
				t.Fatalf("round %d: item %d popped twice or out of its round", r, v)
			}
			seen[v] = true
			got++
			sum += v - r*total
		}
		for got < total {
			if rng.IntN(8) == 0 {
				// Lag: let the producers run some segments ahead.
				ahead := min(total-got, (2+rng.IntN(6))*mailboxSegSize)
				for m.Len() < ahead {
					runtime.Gosched()
				}
			}
			if rng.IntN(2) == 0 {
				v, err := m.Pop(ctx)
				if err != nil {
					t.Fatalf("round %d: Pop: %v", r, err)
				}
				take(v)
				continue
			}
			n, _ := m.TryPopBatch(dst[:1+rng.IntN(len(dst))])
			for _, v := range dst[:n] {
				take(v)
			}
		}
		wg.Wait()
		if want := total * (total - 1) / 2; sum != want {
			t.Fatalf("round %d: items sum to %d, want %d", r, sum, want)
		}
		if v, err := m.TryPop(); err == nil {
			t.Fatalf("round %d: item %d left after all were popped", r, v)
		}
		if k := len(mailboxSegs(m)); k > 2 {
			t.Fatalf("round %d: a drained mailbox keeps %d segments reachable, want at most 2", r, k)
		}
	}
}

// TestMailboxLayout: the producers' segment pointer, the consumer's
// fields and each segment's claim counter sit on lines of their own.
func TestMailboxLayout(t *testing.T) {
	var m Mailbox[int]
	line := uintptr(CacheLineSize)
	if off := unsafe.Offsetof(m.tailSeg); off < line {
		t.Errorf("Mailbox.tailSeg at %d, within the first line", off)
	}
	if d := unsafe.Offsetof(m.headSeg) - unsafe.Offsetof(m.tailSeg); d < line {
		t.Errorf("Mailbox headSeg-tailSeg distance %d < line %d", d, line)
	}
	if d := unsafe.Offsetof(m.bells) - unsafe.Offsetof(m.headSeg); d < line {
		t.Errorf("Mailbox bells-headSeg distance %d < line %d", d, line)
	}
	// A segment's claim, which every push adds to, is neither on the
	// line of offset 0 (where a nil check of the segment loads), nor on
	// its slots' lines, nor beside the read-mostly fields.
	var s mboxSeg[int]
	if off := unsafe.Offsetof(s.claim); off < line {
		t.Errorf("mboxSeg.claim at %d, within the first line", off)
	}
	if end := unsafe.Offsetof(s.lap) + 8; end > line {
		t.Errorf("mboxSeg's read-mostly fields end at %d, past the first line", end)
	}
	if d := unsafe.Offsetof(s.slots) - unsafe.Offsetof(s.claim); d < line {
		t.Errorf("mboxSeg slots-claim distance %d < line %d", d, line)
	}
}

// TestMailboxBatchStatusAtSegmentEnd: a TryPopBatch whose consumer stands
// at the end of a full segment tells empty from drained as one in the
// middle does, for a Mailbox and for a Backlog over it.
func TestMailboxBatchStatusAtSegmentEnd(t *testing.T) {
	for _, k := range []struct {
		name string
		new  func() Queue[int]
	}{
		{"Mailbox", func() Queue[int] { return NewMailbox[int](Park{}) }},
		{"Backlog", func() Queue[int] { return NewBacklog[int](Park{}) }},
	} {
		t.Run(k.name, func(t *testing.T) {
			q := k.new()
			seg := make([]int, mailboxSegSize)
			for i := range seg {
				seg[i] = i
			}
			if n, err := q.TryPushBatch(seg); n != len(seg) || err != nil {
				t.Fatalf("TryPushBatch of a segment = %d, %v", n, err)
			}
			dst := make([]int, mailboxSegSize)
			if n, err := q.TryPopBatch(dst); n != len(dst) || err != nil || dst[n-1] != n-1 {
				t.Fatalf("TryPopBatch of a segment = %d, %v", n, err)
			}
			if n, err := q.TryPopBatch(dst); n != 0 || !errors.Is(err, ErrEmpty) {
				t.Fatalf("TryPopBatch at the segment's end = %d, %v; want 0, ErrEmpty", n, err)
			}
			// Closed there: drained, with no next segment.
			done := k.new()
			done.TryPushBatch(seg)
			done.TryPopBatch(dst)
			done.Close()
			if n, err := done.TryPopBatch(dst); n != 0 || !errors.Is(err, ErrClosed) {
				t.Fatalf("TryPopBatch at the end of a closed segment = %d, %v; want 0, ErrClosed", n, err)
			}
			if err := q.TryPush(7); err != nil {
				t.Fatal(err)
			}
			q.Close()
			if n, err := q.TryPopBatch(dst); n != 1 || err != nil || dst[0] != 7 {
				t.Fatalf("TryPopBatch into the next segment = %d (%d), %v; want 1 (7), nil", n, dst[0], err)
			}
			if n, err := q.TryPopBatch(dst); n != 0 || !errors.Is(err, ErrClosed) {
				t.Fatalf("TryPopBatch after Close, drained = %d, %v; want 0, ErrClosed", n, err)
			}
		})
	}
}

// TestMailboxBurstReusesSegments: a burst the consumer did not keep up
// with leaves its segments for the next burst, which then allocates
// nothing (until a collection drops them).
func TestMailboxBurstReusesSegments(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	const n = 32 * mailboxSegSize
	m := NewMailbox[int](Park{})
	burst := func() {
		for i := range n {
			m.TryPush(i)
		}
		for i := range n {
			if v, err := m.TryPop(); err != nil || v != i {
				t.Fatalf("TryPop = %d, %v; want %d", v, err, i)
			}
		}
	}
	burst()
	// AllocsPerRun runs burst once more before it counts; a collection
	// meanwhile empties the pool, so allow one segment per item of slack
	// in a thousand runs' worth: the bound is what matters, not 0.
	if a := testing.AllocsPerRun(5, burst); a > n/mailboxSegSize/4 {
		t.Errorf("a burst of %d segments after a drained one allocated %.1f times, want them reused", n/mailboxSegSize, a)
	}
}

// TestMailboxPooledSegmentsStress: segments go round through the spare
// and the pool many times while producers that were preempted mid-push
// still hold segments from earlier incarnations. Each producer's items
// arrive once and in its order, and nothing is lost across Close.
func TestMailboxPooledSegmentsStress(t *testing.T) {
	defer watchdog(t, 120*time.Second)()
	const producers = 8
	per := 128 * mailboxSegSize
	if testing.Short() || raceEnabled {
		per = 8 * mailboxSegSize
	}
	m := NewMailbox[uint64](Park{Spin: NoSpin})
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 7))
			for i := range per {
				if err := m.TryPush(uint64(p)<<32 | uint64(i)); err != nil {
					panic(fmt.Sprint("TryPush on an open mailbox: ", err))
				}
				if rng.IntN(512) == 0 {
					runtime.Gosched() // hold an old tail across other producers' links
				}
			}
		})
	}
	go func() { wg.Wait(); m.Close() }()
	next := make([]int, producers)
	rng := rand.New(rand.NewPCG(11, 5))
	ctx := context.Background()
	dst := make([]uint64, 300)
	take := func(v uint64) {
		p, i := int(v>>32), int(v&math.MaxUint32)
		if p >= producers || i != next[p] {
			t.Fatalf("producer %d: item %d, want %d (lost, repeated or out of order)", p, i, next[p])
		}
		next[p]++
	}
	for popped := 0; ; popped++ {
		if rng.IntN(4096) == 0 {
			// Lag several segments, so that finished segments pile up in
			// the pool when the consumer catches up.
			for ahead := (2 + rng.IntN(8)) * mailboxSegSize; m.Len() < ahead && popped < producers*per-ahead; {
				runtime.Gosched()
			}
		}
		if rng.IntN(2) == 0 {
			v, err := m.Pop(ctx)
			if errors.Is(err, ErrClosed) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			take(v)
			continue
		}
		n, err := m.PopBatch(ctx, dst[:1+rng.IntN(len(dst))])
		for _, v := range dst[:n] {
			take(v)
		}
		popped += max(n-1, 0)
		if errors.Is(err, ErrClosed) {
			break
		}
	}
	for p, n := range next {
		if n != per {
			t.Errorf("producer %d: %d items arrived, want %d", p, n, per)
		}
	}
}
