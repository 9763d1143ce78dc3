package pool

import (
	"math/bits"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/emul"
)

// Who rings whom. A knit.Event's Notify is one load when nobody is
// registered, but a worker that is registered and not yet asleep (it is
// re-checking, or spinning) still makes every Notify bump the Event's
// word, and with several workers parked on one shared Event each publish
// would otherwise wake one more of them than the work needs. So the pool
// hands out one ring per sleep: a
// worker that is about to park sets its bit in sleepers (after Prepare,
// before its re-check), and a publisher rings only if it claims, by
// clearing, a set bit.
//
// Why nothing is lost. (1) A publish racing a worker's registration is
// the Event's register-then-recheck, with the bit as the registration:
// the worker sets its bit, then re-checks the queues; the publisher
// pushes, then loads the bits (the argument is beside knit.Event's
// notify, "Why no wakeup is lost"). (2) Bits are cleared only by
// claims, never by their owner, and each claim's Notify(1) wakes a
// sleeper whenever any sleeps (or makes a registered waiter's Wait return
// at once): so if every worker were asleep with every bit clear, the last
// claim woke some worker, which set its bit again before it went back to
// sleep, and no claim has cleared that bit since. Hence while all workers
// sleep, some bit is set, and the next publish rings. A bit left set by a
// worker that found work instead of sleeping costs one spare ring later.

// sleepers is a bit set of workers that may be parked, one bit per worker.
type sleepers struct {
	words []sleeperWord // read-only slice; bit i%64 of words[i/64] is worker i
}

// sleeperWord is 64 bits of sleepers on a cache line of its own: it is
// written by parking workers and claiming publishers, and must not share
// a line with anything else.
type sleeperWord struct {
	atomic.Uint64
	_ [knit.CacheLineSize - 8]byte
}

func newSleepers(n int) sleepers {
	return sleepers{words: make([]sleeperWord, (n+63)/64)}
}

// set marks worker i as about to park.
func (s *sleepers) set(i int) {
	w := &s.words[i/64]
	if bit := uint64(1) << (i % 64); w.Load()&bit == 0 {
		w.Or(bit)
	}
}

// claim clears worker i's bit and reports whether it was set.
func (s *sleepers) claim(i int) bool {
	w := &s.words[i/64]
	bit := uint64(1) << (i % 64)
	return w.Load()&bit != 0 && w.And(^bit)&bit != 0
}

// mark sets worker i's bit with a store even when it is set already: the
// owner of a nested bit (see help.go) relies on its own store, then its
// re-check, for the argument above.
func (s *sleepers) mark(i int) {
	s.words[i/64].Or(uint64(1) << (i % 64))
}

// unmark clears worker i's bit; only the owner of a nested bit does so.
func (s *sleepers) unmark(i int) {
	w := &s.words[i/64]
	if bit := uint64(1) << (i % 64); w.Load()&bit != 0 {
		w.And(^bit)
	}
}

// maybeAny reports whether a bit may be set: a load of the only word, or
// true when there are more (pools of over 64 workers then look further).
// Inlined into the publish path, so a pool nobody nests in pays one load.
func (s *sleepers) maybeAny() bool {
	return len(s.words) != 1 || s.words[0].Load() != 0
}

// claimBits clears up to n set bits of word i and returns them.
func (s *sleepers) claimBits(i, n int) uint64 {
	w := &s.words[i]
	for {
		old := w.Load()
		if old == 0 {
			return 0
		}
		take := old
		for k := bits.OnesCount64(old) - n; k > 0; k-- {
			take &= take - 1
		}
		if w.CompareAndSwap(old, old&^take) {
			return take
		}
	}
}

// claimAny clears up to n set bits, any workers', and returns how many.
func (s *sleepers) claimAny(n int) int {
	got := 0
	for i := range s.words {
		w := &s.words[i]
		for got < n {
			old := w.Load()
			if old == 0 {
				break
			}
			take := old
			for k := bits.OnesCount64(old) - (n - got); k > 0; k-- {
				take &= take - 1 // leave the lowest bits for other publishers
			}
			if w.CompareAndSwap(old, old&^take) {
				got += bits.OnesCount64(take)
			}
		}
	}
	return got
}

// storeLoadFence orders the caller's earlier atomic stores before its
// later atomic loads under qemu-user emulation, where sync/atomic alone
// does not (see internal/emul). Each pairing above (publish then load the
// bits; set a bit or a flag then re-check) is exactly that pattern, and
// Event's own fence is no help when the pool decides not to call Notify.
func storeLoadFence() { emul.StoreLoadFence() }
