package pool

import (
	"math/bits"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/emul"
)

// Who rings whom. Every worker parks on its own doorbell (a knit.Event).
// A worker about to park sets its bit in sleepers (after Prepare, before
// its re-check), and a publisher rings a worker only if it claims, by
// clearing, that worker's set bit, and then rings that worker's doorbell.
// So a publish wakes no more workers than it has tasks, and with no bit
// set it costs a load.
//
// Why nothing is lost. (1) A publish racing a worker's registration is
// the Event's register-then-recheck, with the bit as the registration:
// the worker sets its bit, then re-checks the queues; the publisher
// pushes, then loads the bits (the argument is beside knit.Event's
// notify, "Why no wakeup is lost"). It needs the push ordered before that
// load: the queues are kept fenced (newQueue, internal/ringmode), so every
// publish is a sync/atomic store; a relaxed ring's plain store would need
// a fence after it, which costs more than the XCHG (BENCHMARKS.md, "Rings:
// relaxed bells on the multi-sided rings"). (2) Bits are cleared only by claims,
// never by their owner, and a claim rings its owner's own doorbell: if
// the owner is registered there, between its Prepare and the end of its
// Wait, the Wait returns; if not, it sets its bit again before it next
// sleeps. So a parked worker's bit is set, and a publish that finds no
// bit set finds no worker parked: every worker is awake and looks at the
// queues before it parks. A worker that finds work in its re-check
// clears its own bit as it cancels the park (worker.unpark): left set, it
// would draw a ring that this busy worker cannot answer while an idle one
// sleeps on, which a task waiting for a later task turns into a hang
// (TestStealWakesClaimedWorker, in the CI's flake hunt). A ring whose
// claimed worker is no longer registered on its doorbell is not counted
// as delivered, and goes to the next set bit (workerSet.ringAsleep); one
// that claimed the bit of a worker still registered but past its last
// look (its re-check found a task, or its wait of its own ended) is
// counted, and that worker passes it on (worker.passRing); one that
// reached a worker Resize then removed is rung again by Resize (shrink).
//
// Why the ring goes to the claimed worker's doorbell, not to one shared
// by the workers: Notify on a shared Event wakes some sleeper, not
// necessarily the one whose bit was claimed. That one then sleeps on with
// its bit clear, and once the worker woken in its place is busy, a
// publish finds no bit and rings nobody while a worker sleeps and a task
// waits (TestStealWakesClaimedWorker: two workers, two tasks, the first
// blocking until the second runs).

// sleeperWord is 64 bits, one per worker of an idBlock, on a cache line
// of its own: it is written by parking workers and claiming publishers,
// and must not share a line with anything else. The pool keeps two per
// block: idle workers (asleep) and workers parked in a wait of their own
// (nested, see help.go).
type sleeperWord struct {
	atomic.Uint64
	_ [knit.CacheLineSize - 8]byte
}

// set marks the worker of bit as about to park.
func (s *sleeperWord) set(bit uint64) {
	if s.Load()&bit == 0 {
		s.Or(bit)
	}
}

// claim clears bit and reports whether it was set.
func (s *sleeperWord) claim(bit uint64) bool {
	return s.Load()&bit != 0 && s.And(^bit)&bit != 0
}

// mark sets bit with a store even when it is set already: the owner of a
// nested bit (see help.go) relies on its own store, then its re-check,
// for the argument above.
func (s *sleeperWord) mark(bit uint64) { s.Or(bit) }

// unmark clears bit; only its owner does so (for a nested bit, or for
// either bit as it leaves the pool for good).
func (s *sleeperWord) unmark(bit uint64) {
	if s.Load()&bit != 0 {
		s.And(^bit)
	}
}

// claimBits clears up to n set bits and returns them.
func (s *sleeperWord) claimBits(n int) uint64 {
	for {
		old := s.Load()
		if old == 0 {
			return 0
		}
		take := old
		for k := bits.OnesCount64(old) - n; k > 0; k-- {
			take &= take - 1 // leave the lowest bits for other publishers
		}
		if s.CompareAndSwap(old, old&^take) {
			return take
		}
	}
}

// storeLoadFence orders the caller's earlier atomic stores before its
// later atomic loads under qemu-user emulation, where sync/atomic alone
// does not (see internal/emul). Each pairing above (publish then load the
// bits; set a bit or a flag then re-check) is exactly that pattern, and
// Event's own fence is no help when the pool decides not to call Notify.
func storeLoadFence() { emul.StoreLoadFence() }
