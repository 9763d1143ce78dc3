package knit

import "sync/atomic"

// The deferred handoff. A goroutine that Notify readies goes to the
// notifier's P and runs when the notifier blocks, as a channel receiver
// does. In a request and reply the notifier blocks at once, in Wait for
// the reply, and would park there: two parks and two wakes per round
// trip. So a Notify that wakes a waiter leaves a note on its P, and a
// Wait on that P soon after, if it must sleep, first yields the P (to
// the back of the local run queue) and re-checks: the woken goroutine
// runs, usually replies, and the waiter returns without parking. The
// replier's own Notify leaves a note too, so its next Wait yields back,
// and a steady request and reply runs with no park at all. A stream's
// producer does not wait soon after its Notify, and its note goes
// stale. The alternatives measured worse (BENCHMARKS.md, "Parking"):
// the semaphore's own handoff, a yield in every release, cut a stream's
// throughput many times over; a yield in every Wait slowed a stream.
// A stale note costs one yield.
//
// readied is the table of notes, one slot per P (modulo its length),
// shared by every Event in the process. Its invariants:
//
//   - readied[p % len].v is 0 (no note: none left yet, or a Handoff
//     took it back) or archCycles()|1 at the last notify on a P p that
//     maps to the slot and found a waiter registered; the |1 keeps a
//     note from reading as none.
//   - Only notify writes it (markReadied, or clearReadied for a Handoff
//     that woke a sleeper), only Wait on BackendRuntime reads it
//     (takeReadied), and only in a build with haveLinkname: without the
//     runtime's P id there is no note.
//   - A note is a hint and never guards a wake: a Wait that takes one
//     yields once and then re-checks seq, so a note that is stale,
//     another P's (Ps p and p+len share a slot; a goroutine moves
//     between curP and the access), or missing changes only whether a
//     waiter yields, not whether a Notify reaches it ("Why no wakeup is
//     lost", event.go).
//   - Each slot has a cache line of its own, so Ps do not contend for
//     their notes.
var readied [64]struct {
	v atomic.Uint64
	_ [CacheLineSize - 8]byte
}

// A note that never expires (cleared by the Wait that takes it) saves
// the two counter reads and measured a little faster on a request and
// reply, but a stale note then makes a stream's consumer yield, which
// cost batch-1 SPSC far more per item (BENCHMARKS.md, "Parking").
// Hence the window.
//
// readiedWindow is how soon after the Notify, in counter ticks, a Wait
// takes its note: long enough for a notifier that blocks right after its
// Notify, short enough that a producer that notifies now and then
// between bursts of work does not yield (BENCHMARKS.md, "Parking", has
// the window in nanoseconds). amd64 does not know its TSC rate before
// calibration (see calibrateClock), so it takes a fixed tick count.
var readiedWindow = func() uint64 {
	if hz := archCounterHz(); hz > 0 {
		return uint64(hz) * 400 / 1e9
	}
	return 1024
}()

func markReadied() {
	readied[curP()%len(readied)].v.Store(archCycles() | 1)
}

// clearReadied takes back the note on the caller's P, if there is one: a
// load first, since the note is most often clear already and the store
// is an XCHG.
func clearReadied() {
	if r := &readied[curP()%len(readied)].v; r.Load() != 0 {
		r.Store(0)
	}
}

// takeReadied reports a note on the caller's P from a Notify less than
// readiedWindow ago. It leaves the note: a second Wait within the
// window yields too, and clearing it would cost every taker a store.
func takeReadied() bool {
	t := readied[curP()%len(readied)].v.Load()
	return t != 0 && archCycles()-t < readiedWindow
}
