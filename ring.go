package knit

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// Queue is the method set every knit ring has (SPSC, Words, MPSC, SPMC,
// MPMC, and the unbounded Mailbox), for code that takes any of them. Which sides may be shared
// between goroutines is the ring's contract, not the interface's: a
// single side used by two goroutines at once is a data race.
type Queue[T any] interface {
	// TryPush adds v if there is room and the ring is open; it never
	// blocks. TrySend says which of the two it was.
	TryPush(v T) bool
	// TryPop removes the oldest item if there is one; it never blocks.
	// On a ring with several producers "there is one" means published:
	// a producer between claiming a slot and filling it holds back the
	// items behind it, and Pop waits for them where TryPop reports empty.
	TryPop() (T, bool)
	// TrySend is TryPush that says why it failed: nil, ErrFull, or
	// ErrClosed once the ring is closed.
	TrySend(v T) error
	// TryRecv is TryPop that says why it failed: nil, ErrEmpty, or
	// ErrClosed once the ring is closed and every item has been taken.
	TryRecv() (T, error)
	// Push adds v, waiting while the ring is full: it spins for the ring's
	// budget, then parks. It returns ErrClosed once the ring is closed
	// (v is then not kept) or ctx.Err() when ctx ends first.
	Push(ctx context.Context, v T) error
	// Pop removes the oldest item, waiting while the ring is empty. After
	// Close it keeps returning what was pushed before, then ErrClosed.
	Pop(ctx context.Context) (T, error)
	// PushBatch adds a prefix of vs, as long as fits, in order, moving the
	// shared index once; it returns how many went in and never blocks.
	PushBatch(vs []T) int
	// PopBatch fills a prefix of dst with the oldest items and returns
	// how many; it never blocks.
	PopBatch(dst []T) int
	// TrySendBatch is PushBatch that says why it stopped short: ErrFull,
	// or ErrClosed once the ring is closed.
	TrySendBatch(vs []T) (int, error)
	// TryRecvBatch is PopBatch that, when it took nothing, says why:
	// ErrEmpty, or ErrClosed once the ring is closed and drained.
	TryRecvBatch(dst []T) (int, error)
	// SendBatch adds all of vs, waiting for room as Push does; it stops
	// early only on ErrClosed or ctx.Err(), and says how many went in.
	SendBatch(ctx context.Context, vs []T) (int, error)
	// RecvBatch waits as Pop does for at least one item, then takes as
	// many as are ready, up to len(dst).
	RecvBatch(ctx context.Context, dst []T) (int, error)
	// All ranges over the items as Pop takes them, until the ring is
	// closed and drained or ctx ends (then ctx.Err() != nil).
	All(ctx context.Context) iter.Seq[T]
	// Source and Sink make every ring a case of Select (Recv, Send).
	Source[T]
	Sink[T]
	// Close stops intake and wakes every waiter; items already in the
	// ring stay poppable. It is idempotent. On a ring with one producer
	// (SPSC, Words, SPMC) it is a producer call: from the goroutine that
	// pushes, or after its last call (SPSC.Close says why).
	Close()
	// Len is the number of items in the ring (a snapshot).
	Len() int
	// Cap is the ring's capacity: the requested one rounded up to a power
	// of two.
	Cap() int
}

var (
	_ Queue[int]    = (*SPSC[int])(nil)
	_ Queue[int]    = (*MPSC[int])(nil)
	_ Queue[int]    = (*SPMC[int])(nil)
	_ Queue[int]    = (*MPMC[int])(nil)
	_ Queue[uint64] = (*Words)(nil)
	_ Queue[int]    = (*Mailbox[int])(nil)
)

var (
	// ErrClosed is returned by a push on a closed ring, and by a pop on a
	// closed ring once it is empty.
	ErrClosed = errors.New("knit: ring closed")
	// ErrFull is returned by TrySend when the ring has no room.
	ErrFull = errors.New("knit: ring full")
	// ErrEmpty is returned by TryRecv when the ring holds nothing ready.
	ErrEmpty = errors.New("knit: ring empty")
)

// MaxCapacity is the largest capacity a ring accepts.
const MaxCapacity = 1 << 30

// maxRingBytes bounds a ring's slot array: past it a ring is refused with
// its size in the message, rather than left to the allocator's "len out
// of range" or an out-of-memory crash. 1 TiB is beyond any machine this
// runs on, and far below the 48-bit heap the runtime can address.
const maxRingBytes = 1 << 40

// closedBit marks a ring closed inside its tail (enqueue) index, so that a
// push and Close are ordered by the same word. Positions count up from 0
// and never reach 2^62 (the multi-sided rings double them in their
// sequences), so the bit is free.
const closedBit = 1 << 63

// roundCapacity validates and rounds a requested capacity for a ring whose
// slots are slot bytes each. A bad capacity is a programmer error, like a
// negative size to make, so it panics, naming the bound it broke.
func roundCapacity(kind string, n int, slot uintptr) int {
	if n < 1 || n > MaxCapacity {
		panic(fmt.Sprintf("knit: %s capacity %d out of range [1, %d]", kind, n, MaxCapacity))
	}
	c := 1
	for c < n {
		c <<= 1
	}
	if bytes := float64(c) * float64(slot); bytes > maxRingBytes {
		panic(fmt.Sprintf("knit: %s capacity %d (rounded to %d) needs %.3g GiB of %d-byte slots, over the %d GiB a ring may take",
			kind, n, c, bytes/(1<<30), slot, maxRingBytes>>30))
	}
	return c
}

// panicZero reports the use of a ring that no constructor made. The
// checks that call it replace the bounds checks the slot accesses need
// anyway, so a constructed ring pays nothing for them.
func panicZero(kind, ctor string) {
	panic("knit: use of a zero " + kind + ": create it with " + ctor)
}

// Option configures how a ring's blocking operations wait.
type Option func(*Park)

// WithSpin sets how long a blocked Push or Pop spins on the ring's
// doorbell before it parks, read as every budget is (see NoSpin), with
// DefaultRingSpin as the default.
func WithSpin(d time.Duration) Option {
	return func(p *Park) { p.Spin = d }
}

// WithBackend sets how a blocked Push or Pop parks.
func WithBackend(b Backend) Option {
	return func(p *Park) { p.Backend = b }
}

// DefaultRingSpin is how long a blocked Push or Pop, or a zero Park,
// spins before it parks where a default spins at all (see NoSpin): a
// futex round trip on bare metal four times over. BENCHMARKS.md ("Rings")
// has the figures and the command.
const DefaultRingSpin = 20 * time.Microsecond

// ringPark resolves the options into the Park a ring's waiters use. A
// budget that resolves to no spin is stored as NoSpin, so the Park reads
// "never spin" whatever zero means to the code that takes it.
func ringPark(opts []Option) Park {
	var p Park
	for _, o := range opts {
		o(&p)
	}
	if p.Spin = spinpolicy.Resolve(p.Spin, DefaultRingSpin); p.Spin == 0 {
		p.Spin = NoSpin
	}
	startAsymBarrier()
	return p
}

// A call whose ctx is already done does nothing and returns ctx.Err():
// every ring call, Event.Wait, Select, the pool and shm follow that rule,
// so a pipeline started on an expired ctx moves nothing. The check sits
// on the fast path of every blocking call, so it must be cheap.
// ctx.Err() through the interface costs about 2.4 ns on a 2-vCPU
// machine; most hot loops pass context.Background() or TODO(), whose
// Err is always nil, and ctxErr recognises those by the interface's type
// word, a load and two compares (0.2-0.4 ns). A cancellable ctx still
// pays its Err (about 2.5 ns, BENCHMARKS.md "Done contexts").
func ctxErr(ctx context.Context) error {
	if tw := *(*unsafe.Pointer)(unsafe.Pointer(&ctx)); tw == bgType || tw == todoType {
		return nil
	}
	return ctx.Err()
}

// ifaceType is the type word of a non-empty interface (its itab): one per
// concrete type in a binary, so equal type words mean equal dynamic types.
func ifaceType(ctx context.Context) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&ctx))
}

var (
	bgType   = ifaceType(context.Background())
	todoType = ifaceType(context.TODO())
)

// status is what a non-blocking attempt found.
type status uint8

const (
	stOK      status = iota
	stFull           // push: no room
	stEmpty          // pop: nothing ready now (an item may be in flight)
	stClosed         // push: ring closed
	stDrained        // pop: closed and every pushed item has been taken
	stZero           // the ring was never constructed (Words' assembly reports it)
)

// statusErr is TrySend's and TryRecv's error for each status (nil for
// stOK), indexed by status&7: a table keeps those methods small enough to
// be inlined like TryPush and TryPop.
var statusErr = [8]error{
	stFull:    ErrFull,
	stEmpty:   ErrEmpty,
	stClosed:  ErrClosed,
	stDrained: ErrClosed,
}

// # Publication and the doorbell
//
// Every ring publishes (an index, a slot's sequence, the closed bit) with
// a release store (publish, storeRel): a plain MOV on amd64, where x86-TSO
// makes every store a release, STLR on arm64, sync/atomic's Store
// elsewhere and under the race detector. The matching loads are sync/atomic Loads, which
// are acquire loads (MOV on amd64, LDAR on arm64): a reader that sees the
// published value sees every write the publisher made before it.
//
// Release/acquire orders one direction; the doorbell needs the other.
// The Event's argument ("Why no wakeup is lost", beside its notify) has
// the publisher store, then load the waiter count, and the waiter
// register (a locked add), then re-check: Dekker's pattern, which needs
// the publisher's store ordered before its load. On arm64 it is: a Load-Acquire (LDAR) is never satisfied
// before an earlier Store-Release (STLR) of the same thread is visible
// (ARMv8's release/acquire are sequentially consistent with each other),
// and sync/atomic's Load and Store are exactly LDAR and STLR. On amd64 a
// load may pass an earlier store still in the store buffer, so a
// publisher could read "no waiter" while its store is not yet visible to
// the waiter's re-check: a lost wakeup. A fence after every publish would
// cost what the release store saves, since the fence waits for the line
// the other side is polling. So on amd64 the waiter pays instead, and
// only when it matters: each bell has a mode.
//
//	modeFenced     publishers store with XCHG, which is a full fence,
//	               before they load the waiter count; the initial mode
//	modeSwitching  a waiter is taking the bell from relaxed to fenced
//	modeRelaxed    publishers store with MOV and do not fence
//
// A publisher (publish, then Notify) looks at the mode first and, unless
// it is relaxed, stores with XCHG: store-before-load holds outright. Else:
// P2 the MOV; P1 load the mode again; if no longer relaxed, fence (LOCK
// OR); P3 load the waiter count. A waiter: W1 Prepare (locked add);
// then until it sees modeFenced: if relaxed, CAS it to switching (S1), run
// an asymmetric barrier B (membarrier(2), which makes every running thread
// of the process execute a full barrier and returns after they have), and
// store modeFenced (S2); if switching, wait for S2. Then W4 the re-check.
// (A waiter may re-check once between W1 and its look at the mode: if
// that finds its item it need not sleep, and the barrier is saved.)
// Some publisher's bell reset (modeFenced to modeRelaxed by CAS, R) may
// happen at any time. Take a publisher whose P1 read:
//
//   - fenced or switching (or the XCHG path): P2, fence, P3 and W1, W4
//     are both ordered store-before-load, so P3 sees W1 or W4 sees P2
//     (the SC argument the Event relies on);
//   - relaxed, written by a reset R after the fenced state W saw: W's
//     read of fenced precedes R, which precedes P1, and TSO keeps P1
//     before P3, so P3 sees W1;
//   - relaxed, from before the switch S1 of the epoch W saw: then P1 ran
//     before the barrier B reached P's thread (after it, P1 would have
//     seen S1), so P2, earlier in program order, was visible when B
//     returned, before S2 and so before W4.
//
// If W saw the initial fenced state, no publisher can have read relaxed
// from before it. Either way the publish is seen or the waiter is
// notified. A fresh ring and every ring outside Linux on amd64 (no
// membarrier) stay fenced; a fenced bell goes relaxed once relaxAfter
// positions went by with no waiter, so a ring that streams without
// parking pays no fence, and a ring whose waiters park often keeps
// paying the XCHG it paid before there were modes, and no barrier.
//
// litmus_test.go stresses both directions on two locked threads:
// TestLitmusMP the release/acquire publication through every ring,
// TestLitmusSBRing the publish-then-Notify against prepare-then-re-check,
// fenced and (on amd64) relaxed.

// Bell modes; see above.
const (
	modeFenced uint32 = iota
	modeSwitching
	modeRelaxed
)

// relaxAfter is how many positions a fenced bell waits, since a waiter
// last registered, before it goes relaxed. Going back to fenced costs a
// membarrier: about 0.5 µs when the other threads are idle, 8-10 µs when
// one is running (an IPI, on a 2-vCPU machine). Where waiters park every few
// hundred items (blocking Push/Pop on two CPUs, MPMC under contention)
// every threshold from 64 to 1024 measured slower than staying fenced,
// by up to 4x for MPMC 2P2C, which ran at 20 ns an item fenced; a ring
// driven by try loops, where nobody registers, relaxes after four laps of
// a 1024-slot ring and stays relaxed.
const relaxAfter = 4096

// bellRelaxes and bellSwitches count the mode changes, for the tests and
// benchmarks; each is written beside a CAS or a membarrier.
var bellRelaxes, bellSwitches atomic.Uint64

// bell is one direction of a ring's doorbell: the Event its waiters park
// on and the publication mode described above.
type ringBell struct {
	Event
	mode     atomic.Uint32 // modeFenced, modeSwitching or modeRelaxed
	lastPark atomic.Uint64 // the index a waiter re-checked when it last parked: a hint for going relaxed
}

// publish stores v at p for the waiters of the bell whose mode is mode,
// which the caller then rings (Notify): with a release store and no fence
// while the bell is relaxed, with sync/atomic's Store (XCHG on amd64,
// which is the store and the fence in one instruction, measured cheaper
// than a MOV and a separate locked instruction) while it is not.
func publish(p *atomic.Uint64, v uint64, mode *atomic.Uint32) {
	if relaxedPublish && mode.Load() == modeRelaxed {
		publishRelaxed(p, v, mode)
		return
	}
	p.Store(v)
}

// publish2 is publish for a store that two bells' waiters watch (a
// Broadcast subscriber's cursor: its producer waits on one bell, its
// followers on another). It stores with XCHG unless both bells are
// relaxed; otherwise it runs publishRelaxed's steps for the first bell
// and then the second's: load its mode again (P1), fence unless still
// relaxed, so every later load is that bell's P3. The extra load and the
// first bell's fence between the store and the second bell's P1 only
// order more, so the argument above holds for each bell on its own.
func publish2(p *atomic.Uint64, v uint64, m1, m2 *atomic.Uint32) {
	if relaxedPublish && m1.Load() == modeRelaxed && m2.Load() == modeRelaxed {
		publishRelaxed(p, v, m1)
		if m2.Load() != modeRelaxed {
			storeLoadFence()
		}
		return
	}
	p.Store(v)
}

// A publisher publishes with publish(p, v, &b.mode) and then rings the
// bell:
//
//	publish(&index, pos, &b.mode)
//	b.Notify(n)
//	if relaxDue(pos-n, pos) {
//		b.maybeRelax(pos)
//	}

// relaxCheck is how often, in positions, publishers look whether a fenced
// bell may go relaxed: rarely enough that the look costs nothing per item.
const relaxCheck = 64

// relaxDue reports whether publishing positions (from, to] crossed a
// multiple of relaxCheck.
func relaxDue(from, to uint64) bool { return relaxedPublish && from/relaxCheck != to/relaxCheck }

// maybeRelax takes a fenced bell to relaxed once relaxAfter positions have
// gone by since a waiter last parked, and the asymmetric barrier that
// taking it back needs is available.
func (b *ringBell) maybeRelax(pos uint64) {
	if b.mode.Load() == modeFenced && int64(pos-b.lastPark.Load()) > relaxAfter && asymBarrierReady() &&
		b.mode.CompareAndSwap(modeFenced, modeRelaxed) {
		bellRelaxes.Add(1)
	}
}

// prepare registers a waiter (W1) that parks at index pos, the index its
// re-check will read, and reports whether the bell was fenced just after
// (every publisher now fences, or has its publish visible, before it
// reads the waiter count). The caller re-checks next; a re-check that
// finds its item is good whatever the mode, but one that finds nothing on
// a bell that was not fenced proves nothing: the caller must then call
// fence and re-check again before it sleeps. Re-checking first saves the
// barrier whenever the item is already there.
func (b *ringBell) prepare(pos uint64) (t Ticket, fenced bool) {
	t = b.Prepare()
	if !relaxedPublish {
		return t, true
	}
	b.lastPark.Store(pos)
	return t, b.mode.Load() == modeFenced
}

// fence takes b to modeFenced, running the asymmetric barrier if it was
// relaxed, and returns once it is fenced.
func (b *ringBell) fence() {
	for m := b.mode.Load(); m != modeFenced; m = b.mode.Load() {
		if m == modeRelaxed && b.mode.CompareAndSwap(modeRelaxed, modeSwitching) {
			asymBarrier()
			b.mode.Store(modeFenced)
			bellSwitches.Add(1)
			return
		}
		// Another waiter is switching: its barrier takes microseconds.
		runtime.Gosched()
	}
}

// doorbells are a ring's two bells, each on its own cache lines so that a
// notifier checking one does not pull the other's line.
type ringBells struct {
	notEmpty ringBell // consumers park here; producers ring it after publishing
	_        [CacheLineSize]byte
	notFull  ringBell // producers park here; consumers ring it after freeing a slot
	_        [CacheLineSize]byte
	park     Park // read-only after construction
}

// yieldFirst: where several goroutines share the blocked side (MPMC's
// both, MPSC's producers, SPMC's consumers), a blocked Push or Pop yields
// its P once before it registers and sleeps. More goroutines than Ps
// share a few Ps there, and the one that would unblock this one is often
// runnable on this very P: a yield lets it run at once, where a sleep
// costs a park and a wake. BenchmarkRingContended, blocking, 6 interleaved
// runs on two CPUs: 2P2C MPMC 181 to 95 ns an item, 4P4C 200 to 101 ns
// (the channel: 88-91 ns); BENCHMARKS.md, "Blocking MPMC, after the
// yield". Where one goroutine owns the side (SPSC, Words, a Mailbox's
// consumer, a Broadcast), the same yield cost SPSC batch-1 streams 27% of
// their time and 87% more CPU (the consumer, alone on its P, yields for
// nothing at every empty look), so they park at once as before.

// ringCore is the non-blocking half of a ring; the blocking loops below
// are shared by every kind.
type ringCore[T any] interface {
	// push is one attempt to add v; on success it has rung notEmpty.
	push(v T) status
	// pop is one attempt to take an item; on success it has rung notFull.
	pop() (T, status)
	// indices loads tail and head, for a waiter's lastPark hint.
	indices() (tail, head uint64)
	// sharedPush and sharedPop report that several goroutines may push,
	// or pop: a blocked one yields once before it sleeps (yieldFirst).
	sharedPush() bool
	sharedPop() bool
	// sides returns the guards of the single sides (nil for a side that
	// several goroutines may share) and the ring's name, for the checked
	// build: a blocked call holds its side for the whole wait.
	sides() (push, pop *sideGuard, ring string)
}

// pushSlow is Push after its fast attempt failed: register on notFull,
// re-check, wait; the Event's protocol (and prepare's, above) makes the
// re-check after prepare the guarantee that a slot freed in between is
// not slept through.
func pushSlow[T any](r ringCore[T], b *ringBells, ctx context.Context, v T) error {
	if checkEnds {
		if g, _, ring := r.sides(); g != nil {
			g.enter(ring, "producer")
			defer g.leave()
		}
	}
	yielded := !r.sharedPush() // see yieldFirst
	for {
		switch r.push(v) {
		case stOK:
			return nil
		case stClosed:
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !yielded {
			yielded = true
			runtime.Gosched()
			continue
		}
		_, head := r.indices()
		t, fenced := b.notFull.prepare(head)
		st := r.push(v)
		if st == stFull && !fenced {
			b.notFull.fence()
			st = r.push(v)
		}
		switch st {
		case stOK:
			b.notFull.Cancel(t)
			return nil
		case stClosed:
			b.notFull.Cancel(t)
			return ErrClosed
		}
		if err := b.notFull.Wait(ctx, t, b.park); err != nil {
			return err
		}
	}
}

// popSlow is Pop after its fast attempt failed.
func popSlow[T any](r ringCore[T], b *ringBells, ctx context.Context) (T, error) {
	if checkEnds {
		if _, g, ring := r.sides(); g != nil {
			g.enter(ring, "consumer")
			defer g.leave()
		}
	}
	var zero T
	yielded := !r.sharedPop() // see yieldFirst
	for {
		v, st := r.pop()
		switch st {
		case stOK:
			return v, nil
		case stDrained:
			return zero, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		if !yielded {
			yielded = true
			runtime.Gosched()
			continue
		}
		tail, _ := r.indices()
		t, fenced := b.notEmpty.prepare(tail &^ closedBit)
		v, st = r.pop()
		if st == stEmpty && !fenced {
			b.notEmpty.fence()
			v, st = r.pop()
		}
		switch st {
		case stOK:
			b.notEmpty.Cancel(t)
			return v, nil
		case stDrained:
			b.notEmpty.Cancel(t)
			return zero, ErrClosed
		}
		if err := b.notEmpty.Wait(ctx, t, b.park); err != nil {
			return zero, err
		}
	}
}

// closed wakes everyone once the closed bit is published, by a locked
// instruction or by storeRel and storeLoadFence: producers to return
// ErrClosed, consumers to drain and then return ErrClosed.
func (b *ringBells) closed() {
	b.notEmpty.NotifyAll()
	b.notFull.NotifyAll()
}

// ringLen turns the two indices into a length; the loads are not one
// snapshot, so the result is clamped into [0, cap].
func ringLen(tail, head uint64, capacity int) int {
	n := int64(tail&^closedBit) - int64(head)
	return int(min(max(n, 0), int64(capacity)))
}

// sizeOf is unsafe.Sizeof for a type parameter.
func sizeOf[T any]() uintptr {
	var v T
	return unsafe.Sizeof(v)
}

// holdsPointers reports whether a value of type t can reference memory,
// so that a ring clears a popped slot only where that keeps something
// alive: clearing an int32 slot is a store the consumer does not need,
// to a line the producer must then take back dirty.
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true // pointers, strings, slices, maps, channels, funcs, interfaces
}
