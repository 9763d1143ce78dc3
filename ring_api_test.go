package knit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/knit-go/knit/internal/emul"
	"github.com/knit-go/knit/internal/relstore"
	"github.com/knit-go/knit/internal/ringmode"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// sender and receiver are the two sides of a knit ring as its table-driven
// tests use them: the grid's side, and the ops Select reaches it through
// (PushCase and PopCase).
type sender[T any] interface {
	Producer[T]
	pushOps() ringOps[T]
}

type receiver[T any] interface {
	Consumer[T]
	popOps() ringOps[T]
}

// joined puts a ring's two sides back together as a Queue, so the
// table-driven tests run through the end types of SPSC and Words, and
// through a Broadcast and one of its subscriptions. Len and Cap are the
// sender's.
type joined[T any] struct {
	sender[T]
	receiver[T]
}

func (j joined[T]) Len() int { return j.sender.Len() }
func (j joined[T]) Cap() int { return j.sender.Cap() }

// joinSPSC is an SPSC ring as a Queue: its two ends, joined.
func joinSPSC[T any](q *SPSC[T]) joined[T] { return joined[T]{SPSCProducer[T]{q}, SPSCConsumer[T]{q}} }

var (
	_ Queue[int]       = joined[int]{}
	_ sender[int]      = SPSCProducer[int]{}
	_ receiver[int]    = SPSCConsumer[int]{}
	_ sender[uint64]   = WordsProducer{}
	_ receiver[uint64] = WordsConsumer{}
	_ sender[int]      = (*MPMC[int])(nil)
	_ receiver[int]    = (*MPMC[int])(nil)
)

// TestRingTryErrors: TryPush and TryPop tell full, empty and closed
// apart, and the errors work with errors.Is. When TryPush said only
// whether v went in, a producer looping on it spun forever after Close.
func TestRingTryErrors(t *testing.T) {
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.newInt(2, Park{})
			if _, err := q.TryPop(); !errors.Is(err, ErrEmpty) {
				t.Fatalf("TryPop on an empty ring = %v, want ErrEmpty", err)
			}
			for i := range 2 {
				if err := q.TryPush(i); err != nil {
					t.Fatalf("TryPush(%d) = %v", i, err)
				}
			}
			n := 2
			if k.unbounded {
				if err := q.TryPush(2); err != nil {
					t.Fatalf("TryPush on an unbounded ring = %v, want nil", err)
				}
				n = 3
			} else if err := q.TryPush(2); !errors.Is(err, ErrFull) {
				t.Fatalf("TryPush on a full ring = %v, want ErrFull", err)
			}
			q.Close()
			// The loop a caller writes around a non-blocking push must end
			// once the ring is closed.
			for {
				err := q.TryPush(3)
				if errors.Is(err, ErrFull) {
					continue
				}
				if !errors.Is(err, ErrClosed) {
					t.Fatalf("TryPush after Close = %v, want ErrClosed", err)
				}
				break
			}
			for want := range n {
				if v, err := q.TryPop(); err != nil || v != want {
					t.Fatalf("TryPop = %d, %v; want %d", v, err, want)
				}
			}
			if _, err := q.TryPop(); !errors.Is(err, ErrClosed) {
				t.Fatalf("TryPop on a drained closed ring = %v, want ErrClosed", err)
			}
		})
	}
}

// mustPanic runs f and checks that it panics with a message containing
// every one of want.
func mustPanic(t *testing.T, what string, f func(), want ...string) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", what)
			return
		}
		msg := fmt.Sprint(r)
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s panicked with %q, which does not name %q", what, msg, w)
			}
		}
	}()
	f()
}

// TestRingZeroValue: a ring no constructor made panics on first use with a
// message naming the constructor, on the assembly paths too (Words). It
// used to panic with "index out of range", dereference nil inside the
// assembly, or block forever in Pop.
func TestRingZeroValue(t *testing.T) {
	rings := []struct {
		kind, ctor string
		q          func() Queue[int]
	}{
		{"SPSC", "NewSPSC", func() Queue[int] { return joinSPSC(new(SPSC[int])) }},
		{"MPSC", "NewMPSC", func() Queue[int] { return new(MPSC[int]) }},
		{"SPMC", "NewSPMC", func() Queue[int] { return new(SPMC[int]) }},
		{"MPMC", "NewMPMC", func() Queue[int] { return new(MPMC[int]) }},
		{"Words", "NewWords", func() Queue[int] { return intWords{joinWords(new(Words))} }},
	}
	ops := []struct {
		name string
		do   func(Queue[int])
	}{
		{"TryPush", func(q Queue[int]) { _ = q.TryPush(1) }},
		{"TryPop", func(q Queue[int]) { _, _ = q.TryPop() }},
		{"TryPushBatch", func(q Queue[int]) { _, _ = q.TryPushBatch([]int{1}) }},
		{"TryPopBatch", func(q Queue[int]) { _, _ = q.TryPopBatch(make([]int, 1)) }},
		{"Push", func(q Queue[int]) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = q.Push(ctx, 1)
		}},
		{"Pop", func(q Queue[int]) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, _ = q.Pop(ctx)
		}},
		{"PushBatch", func(q Queue[int]) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, _ = q.PushBatch(ctx, []int{1})
		}},
		{"PopBatch", func(q Queue[int]) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, _ = q.PopBatch(ctx, make([]int, 1))
		}},
		{"All", func(q Queue[int]) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			for range All(ctx, q) {
			}
		}},
	}
	for _, r := range rings {
		for _, op := range ops {
			mustPanic(t, "zero "+r.kind+"."+op.name, func() { op.do(r.q()) }, r.kind, r.ctor)
		}
		if q := r.q(); q.Len() != 0 || q.Cap() != 0 {
			t.Errorf("zero %s: Len %d, Cap %d; want 0, 0", r.kind, q.Len(), q.Cap())
		}
	}
}

// TestRingCapacityTooLarge: a ring whose slots would take more than the
// limit is refused with its size in the message, not left to the
// allocator.
func TestRingCapacityTooLarge(t *testing.T) {
	mustPanic(t, "NewMPMC of 1 MiB items", func() { NewMPMC[[1 << 20]byte](MaxCapacity, Park{}) },
		"MPMC", strconv.Itoa(MaxCapacity), "GiB", "1048584-byte")
	mustPanic(t, "NewSPSC of 4 KiB items", func() { NewSPSC[[4096]byte](MaxCapacity, Park{}) },
		"SPSC", strconv.Itoa(MaxCapacity), "GiB", "4096-byte")
}

// TestRingLargeCapacityIsLazy: a ring of MaxCapacity slots costs what its
// allocation costs and no more: creating one touches none of its pages.
// NewMPMC[struct{}](1<<30, Park{}) used to take 30 s and 16.8 GB, writing every
// slot's sequence with a locked instruction.
//
// It runs in a child process: like make, a ring's allocation is only free
// of writes when the heap hands out fresh memory, and earlier tests leave
// freed memory behind that the allocator would clear first.
func TestRingLargeCapacityIsLazy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the resident set from /proc")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory follows the heap")
	}
	if emul.StoreLoadBroken() {
		// Under qemu-user the resident set is the emulator's, which
		// touched 8 GiB of the guest's untouched mappings in one CI run
		// of this test and none in four others.
		t.Skip("the resident set under user-mode emulation is the emulator's")
	}
	if os.Getenv(largeRingChildEnv) == "" {
		cmd := selfCommand("-test.run=^TestRingLargeCapacityIsLazy$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), largeRingChildEnv+"=1")
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
			}
		}()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	before := residentBytes(t)
	q := NewMPMC[struct{}](MaxCapacity, Park{})
	m := NewMPSC[struct{}](MaxCapacity, Park{})
	s := NewSPSC[int32](MaxCapacity, Park{})
	grew := residentBytes(t) - before
	if grew > 256<<20 {
		t.Errorf("three rings of %d slots made the process %d MiB larger; creation must not touch the slots", MaxCapacity, grew>>20)
	}
	for _, r := range []Queue[struct{}]{q, m} {
		if err := r.TryPush(struct{}{}); r.Cap() != MaxCapacity || err != nil {
			t.Fatalf("large ring: Cap %d, TryPush %v", r.Cap(), err)
		}
		if _, err := r.TryPop(); err != nil {
			t.Fatal("large ring lost its item")
		}
	}
	sp, sc := s.Ends()
	if err := sp.TryPush(7); err != nil {
		t.Fatalf("large SPSC refused a push: %v", err)
	}
	if v, err := sc.TryPop(); err != nil || v != 7 {
		t.Fatalf("large SPSC popped %d, %v", v, err)
	}
}

// largeRingChildEnv marks the child process of TestRingLargeCapacityIsLazy.
const largeRingChildEnv = "KNIT_TEST_LARGE_RING_CHILD"

// residentBytes reads the process's resident set size.
func residentBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip(err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TestRingParkSpin: a ring's Park.Spin reads as every spin budget in knit
// does.
func TestRingParkSpin(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer spinpolicy.SetCPUs(8)() // CPUs for every GOMAXPROCS below; TestSpinPolicyAgrees varies them
	for _, procs := range []int{1, 2, 4, 8} {
		runtime.GOMAXPROCS(procs)
		def := NoSpin
		if procs >= 4 {
			def = DefaultSpin
		}
		for _, c := range []struct {
			park Park
			want time.Duration
		}{
			{Park{}, def},
			{Park{Spin: NoSpin}, NoSpin},
			{Park{Spin: -time.Second}, NoSpin},
			{Park{Spin: 7 * time.Microsecond}, 7 * time.Microsecond},
		} {
			if got := ringPark(c.park).Spin; got != c.want {
				t.Errorf("GOMAXPROCS %d: Park %v: spin %v, want %v", procs, c.park, got, c.want)
			}
			if got := NewMPMC[int](1, c.park).bells.park.Spin; got != c.want {
				t.Errorf("GOMAXPROCS %d: NewMPMC with Park %v: spin %v, want %v", procs, c.park, got, c.want)
			}
		}
	}
}

// TestRingBellModes streams bursts longer than relaxAfter, and between
// them waits for the consumer to have taken every item and parked, so
// every burst takes the doorbell from fenced to relaxed and a park takes
// it back with the asymmetric barrier, with publishes racing the switch;
// every item must arrive, in order, and no park may sleep through its
// item. After each burst's first item the consumer holds off until
// relaxAfter and a little more have been pushed: a consumer that keeps up
// parks every few items, and each park keeps the bell fenced. So each
// burst relaxes the bell at least once (the hold-off), and the consumer
// parks on it after that at least once (the wait at the burst's end, if
// no park in the burst did): the counts below do not depend on timing.
func TestRingBellModes(t *testing.T) {
	if !relaxedPublish {
		t.Skip("sync/atomic publication in this build: no bell modes")
	}
	deadline := time.Now().Add(5 * time.Second)
	startAsymBarrier()
	for !asymBarrierReady() {
		if time.Now().After(deadline) {
			t.Skip("membarrier(2) unavailable: bells stay fenced")
		}
		time.Sleep(time.Millisecond)
	}
	defer watchdog(t, 60*time.Second)()
	bursts, burst := 200, 3*relaxAfter
	if testing.Short() {
		bursts = 40
	}
	for _, k := range ringKinds {
		if k.name == "Backlog" {
			continue // its bells are its Mailbox's, which has a row of its own
		}
		t.Run(k.name, func(t *testing.T) {
			relaxes, switches := bellRelaxes.Load(), bellSwitches.Load()
			q := k.newInt(2*relaxAfter, Park{Spin: NoSpin})
			bell := &q.(interface{ popOps() ringOps[int] }).popOps().bellsOf().notEmpty
			var taken atomic.Int64             // items the consumer has popped
			ahead := relaxAfter + 2*relaxCheck // pushed before the consumer starts a burst
			gate := make(chan struct{}, 1)
			var wg sync.WaitGroup
			wg.Add(1)
			errc := make(chan error, 1)
			go func() {
				defer wg.Done()
				for want := 0; ; want++ {
					if want%burst == 1 {
						<-gate // parked for the burst's first item; now hold off
					}
					v, err := q.Pop(context.Background())
					if errors.Is(err, ErrClosed) && want == bursts*burst {
						errc <- nil
						return
					}
					if err != nil || v != want {
						errc <- fmt.Errorf("Pop = %d, %v; want %d", v, err, want)
						return
					}
					taken.Store(int64(want + 1))
				}
			}()
			next := 0
			for range bursts {
				for i := range burst {
					if i == ahead {
						gate <- struct{}{}
					}
					if err := q.Push(context.Background(), next); err != nil {
						t.Fatal(err)
					}
					next++
				}
				// The consumer has everything and is registered on a
				// fenced bell: it parked, switching the bell back if the
				// burst left it relaxed.
				for taken.Load() != int64(next) || bell.Waiters() != 1 || bell.mode.Load() != modeFenced {
					select {
					case err := <-errc:
						t.Fatal(err)
					default:
					}
					time.Sleep(50 * time.Microsecond)
				}
			}
			q.Close()
			wg.Wait()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			r, s := bellRelaxes.Load()-relaxes, bellSwitches.Load()-switches
			t.Logf("%d bursts: %d bells relaxed, %d switched back", bursts, r, s)
			if r < uint64(bursts) || s < uint64(bursts) {
				t.Errorf("%d bursts relaxed the bells %d times and switched them back %d times; the test did not exercise the modes", bursts, r, s)
			}
		})
	}
}

// TestRingParkRace bounces an item between two goroutines through two
// rings, each side spinning on TryPop for a random while and then
// parking in Pop, so that parks land at every offset from the partner's
// publish, the window in which a publisher that reads "no waiter" while
// its store is still in its store buffer would leave the waiter asleep.
// A lost wakeup shows as a Pop that times out.
func TestRingParkRace(t *testing.T) {
	trips := 200_000
	if testing.Short() || raceEnabled {
		trips = 20_000
	}
	defer watchdog(t, 120*time.Second)()
	for _, k := range ringKinds {
		if k.multiProducer || k.multiConsumer {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			req, rep := k.newInt(8, Park{Spin: NoSpin}), k.newInt(8, Park{Spin: NoSpin})
			take := func(q Queue[int], seed *uint32) (int, error) {
				*seed = *seed*1664525 + 1013904223
				for range *seed >> 25 { // 0-127 tries
					if v, err := q.TryPop(); err == nil {
						return v, nil
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				return q.Pop(ctx)
			}
			errc := make(chan error, 1)
			go func() {
				seed := uint32(2)
				for {
					v, err := take(req, &seed)
					if errors.Is(err, ErrClosed) {
						errc <- nil
						return
					}
					if err != nil {
						errc <- fmt.Errorf("partner: %w (lost wakeup?)", err)
						return
					}
					if err := rep.Push(context.Background(), v+1); err != nil {
						errc <- err
						return
					}
				}
			}()
			seed := uint32(1)
			for i := range trips {
				if err := req.Push(context.Background(), i); err != nil {
					t.Fatal(err)
				}
				v, err := take(rep, &seed)
				if err != nil {
					t.Fatalf("trip %d: %v (lost wakeup?); relaxed %d, switched %d", i, err, bellRelaxes.Load(), bellSwitches.Load())
				}
				if v != i+1 {
					t.Fatalf("trip %d: got %d", i, v)
				}
			}
			req.Close()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHoldsPointers: a ring clears popped slots exactly for the element
// types that can keep memory alive.
func TestHoldsPointers(t *testing.T) {
	type plain struct {
		_ int32
		_ [3]float64
		_ struct{ _ uint8 }
	}
	type withString struct {
		_ int
		_ string
	}
	for _, c := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[int32](), false},
		{reflect.TypeFor[uint64](), false},
		{reflect.TypeFor[struct{}](), false},
		{reflect.TypeFor[plain](), false},
		{reflect.TypeFor[[4]complex128](), false},
		{reflect.TypeFor[[0]*int](), false},
		{reflect.TypeFor[*int](), true},
		{reflect.TypeFor[string](), true},
		{reflect.TypeFor[[]byte](), true},
		{reflect.TypeFor[withString](), true},
		{reflect.TypeFor[[2]withString](), true},
		{reflect.TypeFor[any](), true},
		{reflect.TypeFor[map[int]int](), true},
		{reflect.TypeFor[chan int](), true},
		{reflect.TypeFor[func()](), true},
		{reflect.TypeFor[unsafe.Pointer](), true},
	} {
		if got := holdsPointers(c.t); got != c.want {
			t.Errorf("holdsPointers(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

// TestRingExternalEvent bounces an item through two rings with the
// caller's own Events as doorbells, the way the pool waits for its MPMC
// queues: TryPush, then Notify on one side, Prepare then a TryPop re-check
// then Wait on the other. That needs the publish ordered before the
// Notify's load of the waiter count. A ring's publish is a release store
// once its own bells have relaxed, which they do here (nobody waits
// through them): in the "fence" variant the publisher fences after its
// TryPush; in "kept" the rings are kept fenced (internal/ringmode, as the
// pool's queues are) and the publisher does not fence. A lost wakeup
// shows as a Wait that times out.
func TestRingExternalEvent(t *testing.T) {
	trips := 200_000
	if testing.Short() || raceEnabled {
		trips = 20_000
	}
	defer watchdog(t, 120*time.Second)()
	for _, kept := range []bool{false, true} {
		for _, k := range ringKinds {
			name := k.name + "/fence"
			if kept {
				name = k.name + "/kept"
			}
			t.Run(name, func(t *testing.T) { externalEventTrips(t, k, kept, trips) })
		}
	}
}

func externalEventTrips(t *testing.T, k ringKind, kept bool, trips int) {
	req, rep := k.newInt(8, Park{}), k.newInt(8, Park{})
	if kept {
		keepFenced(t, req)
		keepFenced(t, rep)
	}
	var reqEv, repEv Event
	send := func(q Queue[int], ev *Event, v int) {
		for q.TryPush(v) != nil {
			runtime.Gosched()
		}
		if !kept {
			relstore.Fence()
		}
		emul.StoreLoadFence()
		ev.Notify(1)
	}
	take := func(q Queue[int], ev *Event, seed *uint32) (int, error) {
		*seed = *seed*1664525 + 1013904223
		for range *seed >> 25 {
			if v, err := q.TryPop(); err == nil {
				return v, nil
			}
		}
		for {
			tk := ev.Prepare()
			if v, err := q.TryPop(); err == nil {
				ev.Cancel(tk)
				return v, nil
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := ev.Wait(ctx, tk, Park{Spin: NoSpin})
			cancel()
			if err != nil {
				return 0, err
			}
			if v, err := q.TryPop(); err == nil {
				return v, nil
			}
		}
	}
	errc := make(chan error, 1)
	go func() {
		seed := uint32(2)
		for range trips {
			v, err := take(req, &reqEv, &seed)
			if err != nil {
				errc <- fmt.Errorf("partner: %w (lost wakeup?)", err)
				return
			}
			send(rep, &repEv, v+1)
		}
		errc <- nil
	}()
	seed := uint32(1)
	for i := range trips {
		send(req, &reqEv, i)
		v, err := take(rep, &repEv, &seed)
		if err != nil {
			t.Fatalf("trip %d: %v (lost wakeup?)", i, err)
		}
		if v != i+1 {
			t.Fatalf("trip %d: got %d", i, v)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if kept {
		for _, q := range []Queue[int]{req, rep} {
			if b := bellsOfRing(q); b.notEmpty.mode.Load() != modeFenced || b.notFull.mode.Load() != modeFenced {
				t.Errorf("a ring kept fenced has bell modes %d and %d", b.notEmpty.mode.Load(), b.notFull.mode.Load())
			}
		}
	}
}

// keepFenced keeps q's bells fenced through internal/ringmode, as the pool
// does with its queues. It goes by the ring behind q's push side: an SPSC
// or a Broadcast here is its two ends joined, and Words an adapter.
func keepFenced(t *testing.T, q Queue[int]) {
	t.Helper()
	ring := any(q.(interface{ pushOps() ringOps[int] }).pushOps())
	if !ringmode.KeepFenced(ring) {
		t.Fatalf("ringmode.KeepFenced(%T) = false", ring)
	}
}

// TestKeepFenced checks internal/ringmode's hook: every ring type a
// constructor returns is accepted, anything else refused, and a kept
// ring's bells stay fenced through a stream of four times relaxAfter with
// nobody waiting, where an untouched ring's bells relax.
func TestKeepFenced(t *testing.T) {
	if ringmode.KeepFenced(new(Event)) || ringmode.KeepFenced(nil) || ringmode.KeepFenced(make(chan int)) {
		t.Fatal("KeepFenced accepted something that is not a ring")
	}
	for _, ring := range []any{
		NewSPSC[int](8, Park{}), NewMPSC[int](8, Park{}), NewSPMC[int](8, Park{}), NewMPMC[int](8, Park{}),
		NewWords(8, Park{}), NewMailbox[int](Park{}), NewBacklog[int](Park{}), NewBroadcast[int](8, Park{}),
	} {
		if !ringmode.KeepFenced(ring) {
			t.Errorf("KeepFenced(%T) = false", ring)
		}
	}
	if !relaxedPublish || !waitAsymBarrier() {
		t.Skip("bells have no modes in this build, or no membarrier here")
	}
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			for _, kept := range []bool{false, true} {
				q := k.newInt(64, Park{})
				if kept {
					keepFenced(t, q)
				}
				for i := range 4 * relaxAfter {
					if err := q.TryPush(i); err != nil {
						t.Fatal(err)
					}
					if v, err := q.TryPop(); err != nil || v != i {
						t.Fatalf("TryPop = %d, %v; want %d", v, err, i)
					}
				}
				b := bellsOfRing(q)
				if fenced := b.notEmpty.mode.Load() == modeFenced; fenced != kept {
					t.Errorf("kept %v: after %d items the producers' bell has mode %d", kept, 4*relaxAfter, b.notEmpty.mode.Load())
				}
			}
		})
	}
}

// TestSeqRingLostClaimPolicy: a lost CAS on an index spins only where
// spinning pays; a ring made with fewer Ps yields its P instead, so a
// goroutine waiting for that P runs before the retry.
func TestSeqRingLostClaimPolicy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	q := NewMPMC[int](8, Park{})
	if q.spinOnLoss {
		t.Fatal("an MPMC made at GOMAXPROCS 1 spins after a lost claim; want a yield")
	}
	var ran atomic.Bool
	done := make(chan struct{})
	go func() { ran.Store(true); close(done) }()
	// One P: the goroutine above can only run if casLost yields. A yield
	// can return without running it (every 61st schedule looks at the
	// global queue first, where the yield put this goroutine), so allow
	// a few; a spin instead of the yield, microseconds in all, never lets
	// it run.
	var bo Backoff
	for range 8 {
		if q.casLost(&bo); ran.Load() {
			break
		}
	}
	if !ran.Load() {
		t.Error("casLost on a ring made at GOMAXPROCS 1 did not yield the P")
	}
	<-done

	runtime.GOMAXPROCS(spinpolicy.MinProcs)
	for _, r := range []*seqRing[int]{&NewMPSC[int](8, Park{}).seqRing, &NewSPMC[int](8, Park{}).seqRing, &NewMPMC[int](8, Park{}).seqRing} {
		if want := spinpolicy.DefaultSpins(); r.spinOnLoss != want {
			t.Fatalf("a ring made at GOMAXPROCS %d on %d CPUs: spinOnLoss = %v, want %v (spinpolicy.DefaultSpins)",
				spinpolicy.MinProcs, runtime.NumCPU(), r.spinOnLoss, want)
		}
	}
}

// prod and cons pick one end of an SPSC or a Words ring, for a test that
// uses it in an expression: prod(q.Ends()).
func prod[P, C any](p P, _ C) P { return p }
func cons[P, C any](_ P, c C) C { return c }
