package knit

import (
	"runtime"
	"sync/atomic"

	"github.com/knit-go/knit/internal/emul"
	"github.com/knit-go/knit/internal/ringmode"
)

// # Publication and the doorbell
//
// Every ring publishes (an index, a slot's sequence, the closed bit) with
// a release store (publish, storeRel): a plain MOV on amd64, where x86-TSO
// makes every store a release, STLR on arm64, sync/atomic's Store
// elsewhere and under the race detector. The matching loads are
// sync/atomic Loads, which are acquire loads (MOV on amd64, LDAR on
// arm64): a reader that sees the published value sees every write the
// publisher made before it.
//
// Release/acquire orders one direction; the doorbell needs the other.
// The Event's argument ("Why no wakeup is lost", beside its notify) has
// the publisher store, then load the waiter count, and the waiter
// register (a locked add), then re-check: Dekker's pattern, which needs
// the publisher's store ordered before its load. On arm64 it is: a
// Load-Acquire (LDAR) is never satisfied before an earlier Store-Release
// (STLR) of the same thread is visible (ARMv8's release/acquire are
// sequentially consistent with each other), and sync/atomic's Load and
// Store are exactly LDAR and STLR. On amd64 a load may pass an earlier
// store still in the store buffer, so a publisher could read "no waiter"
// while its store is not yet visible to the waiter's re-check: a lost
// wakeup. A fence after every publish would cost what the release store
// saves, since the fence waits for the line the other side is polling. So
// on amd64 the waiter pays instead, and only when it matters: each bell
// has a mode.
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
// membarrier, which is dear while another thread runs; where waiters park
// every few hundred items every threshold measured slower than staying
// fenced, and a ring driven by try loops, where nobody registers, relaxes
// after a few laps and stays relaxed (BENCHMARKS.md, "Bell modes").
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
	kept     bool          // kept fenced: never relaxes (internal/ringmode); set before the ring is shared
}

func init() { ringmode.SetKeepFenced(keepFencedAny) } // the public switch, KeepFenced (watch.go)

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

// A publisher makes positions (from, to] visible with publish (or with
// assembly that does publish's steps) and then rings the bell:
//
//	publish(&index, to, &b.mode)
//	if b.pending(from, to) {
//		b.ring(from, to)
//	}
//
// pending is one load and a compare, inlined into every push and pop;
// ring, out of line, wakes one waiter per position and now and then looks
// whether the bell may go relaxed.

// pending reports whether publishing (from, to] needs ring: a waiter is
// registered, or a relax check is due.
func (b *ringBell) pending(from, to uint64) bool {
	return uint64(b.waiters.Load())|emul.Pending()|relaxBits(from, to) != 0
}

// ring is the rest of the sequence above, out of line.
func (b *ringBell) ring(from, to uint64) {
	b.Notify(int(to - from))
	if relaxDue(from, to) {
		b.maybeRelax(to)
	}
}

// relaxCheck is how often, in positions, publishers look whether a fenced
// bell may go relaxed: rarely enough that the look costs nothing per item.
const relaxCheck = 64

// relaxDue reports whether publishing positions (from, to] crossed a
// multiple of relaxCheck (a power of two: from and to then differ in a
// bit at or above it).
func relaxDue(from, to uint64) bool { return relaxBits(from, to) != 0 }

// relaxBits is non-zero where relaxDue is true: a form pending folds
// into its one test of the waiter count.
func relaxBits(from, to uint64) uint64 {
	if !relaxedPublish {
		return 0
	}
	return (from ^ to) &^ (relaxCheck - 1)
}

// maybeRelax takes a fenced bell to relaxed once relaxAfter positions have
// gone by since a waiter last parked, and the asymmetric barrier that
// taking it back needs is available.
func (b *ringBell) maybeRelax(pos uint64) {
	if !b.kept && b.mode.Load() == modeFenced && int64(pos-b.lastPark.Load()) > relaxAfter && asymBarrierReady() &&
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

// closed wakes everyone once the closed bit is published, by a locked
// instruction or by storeRel and storeLoadFence: producers to return
// ErrClosed, consumers to drain and then return ErrClosed.
func (b *ringBells) closed() {
	b.notEmpty.NotifyAll()
	b.notFull.NotifyAll()
}
