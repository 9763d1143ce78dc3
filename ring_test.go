package knit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/knit-go/knit/internal/testutil"
)

// ringKind builds one kind of ring for the table-driven tests.
type ringKind struct {
	name          string
	multiProducer bool
	multiConsumer bool
	// unbounded: a push never finds the ring full (Mailbox); the tests
	// that need a full ring skip those steps, and Cap is math.MaxInt.
	unbounded      bool
	newInt         func(n int, park Park) Queue[int]
	newPtr         func(n int) Queue[*int]
	slotsAreZeroed func(q Queue[*int]) bool
}

func seqSlotsZero[T comparable](r *seqRing[T]) bool {
	var zero T
	for i := range r.slots {
		if r.slots[i].val != zero {
			return false
		}
	}
	return true
}

var ringKinds = []ringKind{
	{
		name:   "SPSC",
		newInt: func(n int, p Park) Queue[int] { return joinSPSC(NewSPSC[int](n, p)) },
		newPtr: func(n int) Queue[*int] { return joinSPSC(NewSPSC[*int](n, Park{})) },
		slotsAreZeroed: func(q Queue[*int]) bool {
			for _, p := range q.(joined[*int]).sender.(SPSCProducer[*int]).q.buf {
				if p != nil {
					return false
				}
			}
			return true
		},
	},
	{
		name: "MPSC", multiProducer: true,
		newInt:         func(n int, p Park) Queue[int] { return NewMPSC[int](n, p) },
		newPtr:         func(n int) Queue[*int] { return NewMPSC[*int](n, Park{}) },
		slotsAreZeroed: func(q Queue[*int]) bool { return seqSlotsZero(&q.(*MPSC[*int]).seqRing) },
	},
	{
		name: "SPMC", multiConsumer: true,
		newInt:         func(n int, p Park) Queue[int] { return NewSPMC[int](n, p) },
		newPtr:         func(n int) Queue[*int] { return NewSPMC[*int](n, Park{}) },
		slotsAreZeroed: func(q Queue[*int]) bool { return seqSlotsZero(&q.(*SPMC[*int]).seqRing) },
	},
	{
		name: "MPMC", multiProducer: true, multiConsumer: true,
		newInt:         func(n int, p Park) Queue[int] { return NewMPMC[int](n, p) },
		newPtr:         func(n int) Queue[*int] { return NewMPMC[*int](n, Park{}) },
		slotsAreZeroed: func(q Queue[*int]) bool { return seqSlotsZero(&q.(*MPMC[*int]).seqRing) },
	},
}

// bellsOfRing returns the doorbells of a ring from ringKinds, for tests that
// wait until a caller is blocked in it: the producer side's, which on
// every kind is also where its consumer waits (a Broadcast's
// subscription without a leader waits on the Broadcast's).
func bellsOfRing(q Queue[int]) *ringBells {
	o, ok := q.(interface{ pushOps() ringOps[int] })
	if !ok {
		panic(fmt.Sprintf("bellsOfRing: %T", q))
	}
	return o.pushOps().bellsOf()
}

// waitRegistered polls until n waiters are registered on e (blocked, or
// spinning before they park), so that a test acts on blocked callers
// rather than on callers it hopes are blocked by now.
func waitRegistered(t testing.TB, e *Event, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.Waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d waiters registered after 30 s", e.Waiters(), n)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// watchdog fails the test with every goroutine's stack if it is still
// running after d: a lost wakeup becomes a failure, not a CI hang.
func watchdog(t testing.TB, d time.Duration) (stop func()) { return testutil.Watchdog(t, d) }

func TestRingCapacity(t *testing.T) {
	for _, k := range ringKinds {
		if k.unbounded {
			continue // no capacity: TestMailboxCap
		}
		for _, c := range []struct{ in, want int }{{1, 1}, {2, 2}, {3, 3}, {1000, 1000}, {1024, 1024}} {
			if got := k.newInt(c.in, Park{}).Cap(); got != c.want {
				t.Errorf("%s(%d).Cap() = %d, want %d", k.name, c.in, got, c.want)
			}
		}
		for _, bad := range []int{0, -1, MaxCapacity + 1} {
			func() {
				defer func() {
					msg := fmt.Sprint(recover())
					if !strings.Contains(msg, strings.Fields(k.name)[0]) || !strings.Contains(msg, fmt.Sprint(MaxCapacity)) || !strings.Contains(msg, fmt.Sprint(bad)) {
						t.Errorf("%s(%d) panic = %q; want a message naming the kind, the value and the bound", k.name, bad, msg)
					}
				}()
				k.newInt(bad, Park{})
			}()
		}
	}
}

// TestRingLayout proves the padding: the two sides' hot words sit at least
// a cache line apart, and a line away from the start of the struct.
func TestRingLayout(t *testing.T) {
	var s SPSC[int]
	// In order: the producer's private line, the published tail, the
	// consumer's private line, the published head, then the rest.
	words := []struct {
		name string
		off  uintptr
	}{
		{"prodTail", unsafe.Offsetof(s.prodTail)},
		{"tail", unsafe.Offsetof(s.tail)},
		{"consHead", unsafe.Offsetof(s.consHead)},
		{"head", unsafe.Offsetof(s.head)},
		{"bells", unsafe.Offsetof(s.bells)},
	}
	if off := words[0].off; off < uintptr(CacheLineSize) {
		t.Errorf("SPSC.prodTail at %d, within the first line (%d B)", off, CacheLineSize)
	}
	for i := 1; i < len(words); i++ {
		if d := words[i].off - words[i-1].off; d < uintptr(CacheLineSize) {
			t.Errorf("SPSC %s-%s distance %d < line %d", words[i].name, words[i-1].name, d, CacheLineSize)
		}
	}
	if d := unsafe.Offsetof(s.headCache) - unsafe.Offsetof(s.prodTail); d >= uintptr(CacheLineSize) {
		t.Errorf("SPSC.headCache is not on the producer's private line")
	}
	if d := unsafe.Offsetof(s.tailCache) - unsafe.Offsetof(s.consHead); d >= uintptr(CacheLineSize) {
		t.Errorf("SPSC.tailCache is not on the consumer's private line")
	}
	var r seqRing[int]
	if off := unsafe.Offsetof(r.tail); off < uintptr(CacheLineSize) {
		t.Errorf("seqRing.tail at %d, within the first line", off)
	}
	if d := unsafe.Offsetof(r.head) - unsafe.Offsetof(r.tail); d < uintptr(CacheLineSize) {
		t.Errorf("seqRing head-tail distance %d < line %d", d, CacheLineSize)
	}
	if d := unsafe.Offsetof(r.slots) - unsafe.Offsetof(r.head); d < uintptr(CacheLineSize) {
		t.Errorf("seqRing slots-head distance %d < line %d", d, CacheLineSize)
	}
	var b ringBells
	if d := unsafe.Offsetof(b.notFull) - unsafe.Offsetof(b.notEmpty); d < uintptr(CacheLineSize) {
		t.Errorf("doorbells notFull-notEmpty distance %d < line %d", d, CacheLineSize)
	}
	want := map[string]int{"amd64": 64, "arm64": 128}
	if w, ok := want[runtime.GOARCH]; ok && CacheLineSize != w {
		t.Errorf("CacheLineSize = %d on %s, want %d", CacheLineSize, runtime.GOARCH, w)
	}
}

func TestRingFIFO(t *testing.T) {
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.newInt(8, Park{})
			for i := range 8 {
				if q.TryPush(i) != nil {
					t.Fatalf("TryPush(%d) failed with %d/8 items", i, q.Len())
				}
			}
			if !k.unbounded && q.TryPush(99) == nil {
				t.Fatal("TryPush succeeded on a full ring")
			}
			if q.Len() != 8 {
				t.Fatalf("Len = %d, want 8", q.Len())
			}
			for lap := range 5 { // wrap around several times
				for i := range 8 {
					if v, err := q.TryPop(); err != nil || v != lap*8+i {
						t.Fatalf("TryPop = %d, %v; want %d", v, err, lap*8+i)
					}
					if q.TryPush((lap+1)*8+i) != nil {
						t.Fatal("TryPush after a pop failed")
					}
				}
			}
			dst := make([]int, 16)
			if n, err := q.TryPopBatch(dst); n != 8 || err != nil {
				t.Fatalf("TryPopBatch = %d, %v; want 8, nil", n, err)
			}
			if _, err := q.TryPop(); err != ErrEmpty || q.Len() != 0 {
				t.Fatalf("TryPop after draining = %v, Len %d; want ErrEmpty, 0", err, q.Len())
			}
			want, wantErr := 8, ErrFull
			if k.unbounded {
				want, wantErr = 10, nil
			}
			if n, err := q.TryPushBatch([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); n != want || err != wantErr {
				t.Fatalf("TryPushBatch of 10 into 8 = %d, %v; want %d, %v", n, err, want, wantErr)
			}
			if n, err := q.TryPopBatch(dst[:3]); n != 3 || err != nil || dst[0] != 1 || dst[2] != 3 {
				t.Fatalf("TryPopBatch(3) = %d %v, %v", n, dst[:3], err)
			}
		})
	}
}

func TestRingClose(t *testing.T) {
	ctx := context.Background()
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.newInt(4, Park{})
			if err := q.TryPush(1); err != nil {
				t.Fatal(err)
			}
			if n, err := q.TryPushBatch([]int{2, 3}); n != 2 || err != nil {
				t.Fatalf("TryPushBatch = %d, %v", n, err)
			}
			q.Close()
			q.Close() // idempotent
			if err := q.TryPush(4); err != ErrClosed {
				t.Fatalf("TryPush after Close = %v, want ErrClosed", err)
			}
			if n, err := q.TryPushBatch([]int{4}); n != 0 || err != ErrClosed {
				t.Fatalf("TryPushBatch after Close = %d, %v; want 0, ErrClosed", n, err)
			}
			if err := q.Push(ctx, 4); !errors.Is(err, ErrClosed) {
				t.Fatalf("Push after Close = %v, want ErrClosed", err)
			}
			if q.Len() != 3 {
				t.Fatalf("Len after Close = %d, want 3 (a refused push must keep nothing)", q.Len())
			}
			for want := 1; want <= 3; want++ {
				if v, err := q.Pop(ctx); err != nil || v != want {
					t.Fatalf("Pop = %d, %v; want %d", v, err, want)
				}
			}
			for range 2 {
				if _, err := q.Pop(ctx); !errors.Is(err, ErrClosed) {
					t.Fatalf("Pop on drained ring = %v, want ErrClosed", err)
				}
			}
		})
	}
}

// TestRingZeroesSlots: a popped slot no longer references the item, so the
// ring keeps nothing alive.
func TestRingZeroesSlots(t *testing.T) {
	for _, k := range ringKinds {
		if k.newPtr == nil {
			continue // Words holds no pointers
		}
		q := k.newPtr(8)
		for i := range 20 {
			x := i
			_ = q.TryPush(&x)
			if i%3 == 0 {
				_, _ = q.TryPushBatch([]*int{&x, &x})
			}
			_, _ = q.TryPop()
			_, _ = q.TryPopBatch(make([]*int, 2))
		}
		for {
			if _, err := q.TryPop(); err != nil {
				break
			}
		}
		if !k.slotsAreZeroed(q) {
			t.Errorf("%s: a drained ring still references popped items", k.name)
		}
		q.Close()
		if err := q.TryPush(new(int)); err != ErrClosed || !k.slotsAreZeroed(q) {
			t.Errorf("%s: a refused push left its item in the ring", k.name)
		}
	}
}

// TestRingBlockedWake: Close and ctx cancellation wake callers blocked in
// Pop on an empty ring and in Push on a full one; a cancelled wait leaves
// the ring usable.
func TestRingBlockedWake(t *testing.T) {
	for _, k := range ringKinds {
		for _, spin := range []time.Duration{0, 20 * time.Microsecond} {
			t.Run(fmt.Sprintf("%s/spin=%v", k.name, spin), func(t *testing.T) {
				defer watchdog(t, 30*time.Second)()
				q := k.newInt(2, Park{Spin: spin})

				ctx, cancel := context.WithCancel(context.Background())
				errc := make(chan error, 1)
				go func() { _, err := q.Pop(ctx); errc <- err }()
				waitRegistered(t, &bellsOfRing(q).notEmpty.Event, 1)
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("Pop after cancel = %v", err)
				}
				dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
				defer dcancel()
				if _, err := q.Pop(dctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Pop with deadline = %v", err)
				}

				if k.unbounded {
					// A push never waits: nothing to cancel or wake.
					if err := q.Push(context.Background(), 1); err != nil {
						t.Fatal(err)
					}
					q.Close()
					if err := q.Push(context.Background(), 5); !errors.Is(err, ErrClosed) {
						t.Fatalf("Push after Close = %v", err)
					}
				} else {
					blockedPush(t, k, q, errc)
				}
				e := k.newInt(2, Park{Spin: spin})
				poppers := 1 // a single-consumer ring allows one
				if k.multiConsumer {
					poppers = 3
				}
				for range poppers {
					go func() { _, err := e.Pop(context.Background()); errc <- err }()
				}
				waitRegistered(t, &bellsOfRing(e).notEmpty.Event, poppers)
				e.Close()
				for range poppers {
					if err := <-errc; !errors.Is(err, ErrClosed) {
						t.Fatalf("blocked Pop after Close = %v", err)
					}
				}
			})
		}
	}
}

// blockedPush is TestRingBlockedWake's part for a ring that fills: a Push
// blocked on a full ring returns when its ctx is cancelled, keeping
// nothing, and blocked pushers return ErrClosed when the ring closes.
func blockedPush(t *testing.T, k ringKind, q Queue[int], errc chan error) {
	t.Helper()
	for v := 1; v <= 2; v++ {
		if err := q.TryPush(v); err != nil {
			t.Fatalf("TryPush(%d) = %v", v, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { errc <- q.Push(ctx, 3) }()
	waitRegistered(t, &bellsOfRing(q).notFull.Event, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Push after cancel = %v", err)
	}
	// Still usable, and the cancelled push kept nothing.
	if v, err := q.Pop(context.Background()); v != 1 || err != nil {
		t.Fatalf("Pop = %d, %v", v, err)
	}
	if err := q.Push(context.Background(), 4); err != nil {
		t.Fatal(err)
	}

	// Blocked pushers on a full ring, blocked poppers on an
	// empty one: Close wakes them all. With one producer Close
	// is the producer's own call, so nobody else can be
	// blocked pushing when it comes.
	if k.multiProducer {
		for range 3 {
			go func() { errc <- q.Push(context.Background(), 5) }()
		}
		waitRegistered(t, &bellsOfRing(q).notFull.Event, 3)
		q.Close()
		for range 3 {
			if err := <-errc; !errors.Is(err, ErrClosed) {
				t.Fatalf("blocked Push after Close = %v", err)
			}
		}
	} else {
		q.Close()
		if err := q.Push(context.Background(), 5); !errors.Is(err, ErrClosed) {
			t.Fatalf("Push after Close = %v", err)
		}
	}
}

// stressRing runs producers and consumers with exact accounting: every
// value is seen exactly once, and with one consumer each producer's values
// arrive in order. Values encode (producer, seq) as p<<20|seq, which
// fits a 32-bit int: at most 2^11 producers of 2^20 items.
func stressRing(t *testing.T, k ringKind, producers, consumers, perProducer int, spin time.Duration) {
	defer watchdog(t, 120*time.Second)()
	q := k.newInt(64, Park{Spin: spin})
	ctx := context.Background()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]int, 0, 8)
			for i := 0; i < perProducer; {
				switch i % 5 {
				case 0, 1, 2:
					if err := q.Push(ctx, p<<20|i); err != nil {
						panic(err)
					}
					i++
				case 3:
					if q.TryPush(p<<20|i) == nil {
						i++
					} else {
						runtime.Gosched()
					}
				case 4:
					batch = batch[:0]
					for j := i; j < min(i+7, perProducer); j++ {
						batch = append(batch, p<<20|j)
					}
					n, _ := q.TryPushBatch(batch)
					i += n
				}
			}
		}()
	}
	seen := make([][]int, consumers)
	var cwg sync.WaitGroup
	for c := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			dst := make([]int, 5)
			for n := 0; ; n++ {
				if n%4 == 3 {
					if m, _ := q.TryPopBatch(dst); m > 0 {
						seen[c] = append(seen[c], dst[:m]...)
						continue
					}
				}
				v, err := q.Pop(ctx)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					panic(err)
				}
				seen[c] = append(seen[c], v)
			}
		}()
	}
	wg.Wait()
	q.Close()
	cwg.Wait()

	count := make([][]int32, producers)
	for p := range count {
		count[p] = make([]int32, perProducer)
	}
	for c, vs := range seen {
		last := make([]int, producers)
		for p := range last {
			last[p] = -1
		}
		for _, v := range vs {
			p, i := v>>20, v&(1<<20-1)
			if p >= producers || i >= perProducer {
				t.Fatalf("consumer %d got a value no one pushed: %#x", c, v)
			}
			count[p][i]++
			if i <= last[p] {
				t.Fatalf("consumer %d got producer %d's item %d after %d", c, p, i, last[p])
			}
			last[p] = i
		}
	}
	for p := range count {
		for i, n := range count[p] {
			if n != 1 {
				t.Fatalf("producer %d item %d seen %d times", p, i, n)
			}
		}
	}
	if q.Len() != 0 {
		t.Fatalf("Len = %d after draining", q.Len())
	}
}

func TestRingStress(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	per := 100_000
	if testing.Short() || raceEnabled {
		per = 5_000
	}
	for _, k := range ringKinds {
		shapes := [][2]int{{1, 1}}
		if k.multiProducer || k.multiConsumer {
			for _, n := range []int{4, 16} {
				p, c := 1, 1
				if k.multiProducer {
					p = n
				}
				if k.multiConsumer {
					c = n
				}
				shapes = append(shapes, [2]int{p, c})
			}
		}
		for _, sh := range shapes {
			for _, spin := range []time.Duration{0, 10 * time.Microsecond} {
				t.Run(fmt.Sprintf("%s/%dP%dC/spin=%v", k.name, sh[0], sh[1], spin), func(t *testing.T) {
					stressRing(t, k, sh[0], sh[1], max(per/sh[0], 1000), spin)
				})
			}
		}
	}
}

// TestRingCloseRace: producers push while Close lands at a random moment;
// every push that reported success is popped exactly once, and nothing a
// refused push offered ever appears.
func TestRingCloseRace(t *testing.T) {
	rounds := 50
	if testing.Short() || raceEnabled {
		rounds = 10
	}
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			defer watchdog(t, 120*time.Second)()
			for r := range rounds {
				producers, consumers := 1, 1
				if k.multiProducer {
					producers = 3
				}
				if k.multiConsumer {
					consumers = 3
				}
				q := k.newInt(16, Park{})
				var accepted, popped, popSum, accSum atomic.Int64
				var stop atomic.Bool
				var wg, cwg sync.WaitGroup
				for p := range producers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 1; ; i++ {
							if !k.multiProducer && stop.Load() {
								// The one producer closes, at a moment
								// the test picks.
								q.Close()
							}
							v := p*1_000_000 + i
							var err error
							if i%3 == 0 {
								if n, _ := q.TryPushBatch([]int{v}); n == 1 {
									accepted.Add(1)
									accSum.Add(int64(v))
									continue
								}
								err = q.Push(context.Background(), v)
							} else {
								err = q.Push(context.Background(), v)
							}
							if errors.Is(err, ErrClosed) {
								return
							}
							accepted.Add(1)
							accSum.Add(int64(v))
						}
					}()
				}
				for range consumers {
					cwg.Add(1)
					go func() {
						defer cwg.Done()
						for {
							v, err := q.Pop(context.Background())
							if err != nil {
								return
							}
							popped.Add(1)
							popSum.Add(int64(v))
						}
					}()
				}
				time.Sleep(time.Duration(r%7) * 100 * time.Microsecond)
				if k.multiProducer {
					q.Close()
				} else {
					stop.Store(true)
				}
				wg.Wait()
				cwg.Wait()
				if accepted.Load() != popped.Load() || accSum.Load() != popSum.Load() {
					t.Fatalf("round %d: accepted %d (sum %d), popped %d (sum %d)",
						r, accepted.Load(), accSum.Load(), popped.Load(), popSum.Load())
				}
			}
		})
	}
}

func TestRingZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	for _, k := range ringKinds {
		q := k.newInt(64, Park{})
		batch := make([]int, 16)
		allocs := testing.AllocsPerRun(1000, func() {
			if err := q.Push(ctx, 2); err != nil {
				panic(err)
			}
			if _, err := q.Pop(ctx); err != nil {
				panic(err)
			}
			if n, err := q.TryPushBatch(batch); n != len(batch) || err != nil {
				panic(err)
			}
			if n, err := q.TryPopBatch(batch); n != len(batch) || err != nil {
				panic(err)
			}
			if n, err := q.PushBatch(ctx, batch); n != len(batch) || err != nil {
				panic(err)
			}
			if n, err := q.PopBatch(ctx, batch); n != len(batch) || err != nil {
				panic(err)
			}
			if err := q.TryPush(3); err != nil {
				panic(err)
			}
			if _, err := q.TryPop(); err != nil {
				panic(err)
			}
			if _, err := q.TryPop(); err != ErrEmpty {
				panic(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per op cycle, want 0", k.name, allocs)
		}
	}
}

// raceEnabled: the race detector is on (stress tests scale down).
const raceEnabled = testutil.Race

// TestRingExactCapacity: a ring made with a capacity that is not a power
// of two holds exactly that many items, with producers racing to fill
// it: a full ring takes nothing more, and each item popped makes room
// for exactly one. Round after round, the producers (four where the ring
// has several, else one) push distinct items with TryPush until each has
// seen ErrFull; the ring must then hold exactly capacity items, and
// after k pops the next fill must take exactly k. Every item pushed is
// popped once.
func TestRingExactCapacity(t *testing.T) {
	for _, k := range ringKinds {
		if k.unbounded {
			continue
		}
		for _, c := range []int{3, 5, 100, 1000} {
			t.Run(fmt.Sprintf("%s/%d", k.name, c), func(t *testing.T) {
				q := k.newInt(c, Park{})
				producers := 1
				if k.multiProducer {
					producers = 4
				}
				var next atomic.Int64
				fill := func() int {
					var took atomic.Int64
					var wg sync.WaitGroup
					for range producers {
						wg.Go(func() {
							for {
								v := int(next.Add(1))
								if err := q.TryPush(v); err != nil {
									if !errors.Is(err, ErrFull) {
										t.Errorf("TryPush: %v", err)
									}
									return
								}
								took.Add(1)
							}
						})
					}
					wg.Wait()
					return int(took.Load())
				}
				seen := map[int]bool{}
				pop := func(n int) {
					for range n {
						v, err := q.TryPop()
						if err != nil {
							t.Fatalf("TryPop with %d in the ring: %v", q.Len(), err)
						}
						if seen[v] {
							t.Fatalf("item %d popped twice", v)
						}
						seen[v] = true
					}
				}
				if got := fill(); got != c {
					t.Fatalf("first fill took %d items, want the capacity %d", got, c)
				}
				for round, k := range []int{1, 2, c / 2, c} {
					pop(k)
					if got := fill(); got != k {
						t.Fatalf("round %d: after %d pops a fill took %d, want %d", round, k, got, k)
					}
					if q.Len() != c {
						t.Fatalf("round %d: Len %d after the fill, want %d", round, q.Len(), c)
					}
				}
				pop(c)
				if _, err := q.TryPop(); !errors.Is(err, ErrEmpty) {
					t.Fatalf("TryPop after popping everything: %v, want ErrEmpty", err)
				}
				if want := c + 1 + 2 + c/2 + c; len(seen) != want {
					t.Fatalf("%d distinct items popped, want %d", len(seen), want)
				}
			})
		}
	}
}
