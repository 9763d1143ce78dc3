package knit

// # Watching a ring with an Event of your own
//
// A ring's own blocking calls and Select wait for it safely in every
// mode of its doorbells (bell.go, "Publication and the doorbell"). Code
// that waits through an Event of its own instead (TryPush, then Notify
// on one side; Prepare, a TryPop re-check, then Wait on the other, as a
// pool's workers do) needs the push ordered before Notify's load of the
// waiter count: the store-buffering shape, which a ring whose bells went
// relaxed breaks on amd64, since it then publishes with a plain MOV that
// the load may pass. KeepFenced keeps a ring's bells fenced for good, so
// that every publish is the XCHG of sync/atomic's Store: the same switch
// the pool throws on its queues through internal/ringmode, whose hook
// (installed by bell.go's init) is keepFencedAny below.

// Watchable is a knit ring or an end of one: the values [KeepFenced]
// accepts. Its method is unexported, so no other type implements it and
// KeepFenced cannot be called with anything but a ring. The rings
// ([SPSC], [Words], [MPSC], [SPMC], [MPMC], [Mailbox], [Backlog],
// [Broadcast]) implement it as pointers; the ends ([SPSCProducer],
// [SPSCConsumer], [WordsProducer], [WordsConsumer], [Subscription]) reach
// their ring. A value held as a [Producer], [Consumer] or [Queue] does not
// implement it: call KeepFenced where the ring is made, as its contract
// asks anyway.
type Watchable interface {
	// watchBells returns every doorbell of the ring: a second one only
	// for a Broadcast, whose followers wait on a bell of their own.
	watchBells() (*ringBells, *ringBells)
}

// KeepFenced makes r's ring safe to watch with an Event of your own, and
// returns r, so that a ring can be made and kept in one expression:
//
//	q := knit.KeepFenced(knit.NewMPMC[Task](1024, knit.Park{}))
//
// After it, every call of the ring that makes an item or a free slot
// visible (TryPush, Push and their batches; TryPop, Pop and theirs, which
// free slots; Close) is a write no later load of the same goroutine
// passes, as a sync/atomic write is: a goroutine that pushes and then
// calls Notify on an Event is seen by a waiter that called Prepare and
// then found the ring empty, in either direction (items, or room). The
// ring's own calls and Select behave as before; they never needed it.
//
// Call it before the ring is shared: right after the constructor, or
// while no other goroutine uses the ring (it writes the ring's bells
// without synchronisation). Calling it on any end keeps the whole ring,
// both directions and, for a Broadcast, every subscription's; so keep a
// Broadcast when it is made, not through a Subscription taken while its
// producer runs. Calling it again does nothing more. It panics if r is a
// nil ring or end.
//
// What it costs: on amd64 Linux (without the purego tag or the race
// detector) a ring that streams with nobody waiting in its own calls
// stops publishing with a plain MOV and keeps the XCHG it publishes with
// while waiters park; BENCHMARKS.md, "KeepFenced: what a kept ring
// costs", measures it. Elsewhere (arm64, other systems, purego, -race)
// rings publish that way always, and KeepFenced changes nothing.
func KeepFenced[R Watchable](r R) R {
	a, b := r.watchBells()
	keepBells(a)
	if b != nil {
		keepBells(b)
	}
	return r
}

// keepBells keeps both bells of bs fenced, taking back to fenced one that
// went relaxed while a single goroutine used the ring (fence runs the
// asymmetric barrier, as a waiter would).
func keepBells(bs *ringBells) {
	for _, b := range [...]*ringBell{&bs.notEmpty, &bs.notFull} {
		b.kept = true
		if b.mode.Load() != modeFenced {
			b.fence()
		}
	}
}

// keepFencedAny is internal/ringmode's KeepFenced: KeepFenced for a
// Watchable, and for the module's other values with doorbells (a ring's
// ringOps, the tests' adapters) their bells; false for anything else.
func keepFencedAny(ring any) bool {
	switch r := ring.(type) {
	case Watchable:
		KeepFenced(r)
		return true
	case interface{ bellsOf() *ringBells }:
		keepBells(r.bellsOf())
		return true
	}
	return false
}

func (r *seqRing[T]) watchBells() (*ringBells, *ringBells) { return &r.bells, nil }
func (q *SPSC[T]) watchBells() (*ringBells, *ringBells)    { return &q.bells, nil }
func (p SPSCProducer[T]) watchBells() (*ringBells, *ringBells) {
	return p.q.watchBells()
}
func (c SPSCConsumer[T]) watchBells() (*ringBells, *ringBells) {
	return c.q.watchBells()
}
func (q *Words) watchBells() (*ringBells, *ringBells)        { return &q.r.bells, nil }
func (p WordsProducer) watchBells() (*ringBells, *ringBells) { return p.q.watchBells() }
func (c WordsConsumer) watchBells() (*ringBells, *ringBells) { return c.q.watchBells() }
func (m *Mailbox[T]) watchBells() (*ringBells, *ringBells)   { return &m.bells, nil }
func (b *Backlog[T]) watchBells() (*ringBells, *ringBells)   { return &b.m.bells, nil }
func (b *Broadcast[T]) watchBells() (*ringBells, *ringBells) { return &b.bells, &b.stage }
func (s *Subscription[T]) watchBells() (*ringBells, *ringBells) {
	return s.b.watchBells()
}

// Every ring and end a caller can hold is Watchable.
var (
	_ Watchable = (*SPSC[int])(nil)
	_ Watchable = SPSCProducer[int]{}
	_ Watchable = SPSCConsumer[int]{}
	_ Watchable = (*Words)(nil)
	_ Watchable = WordsProducer{}
	_ Watchable = WordsConsumer{}
	_ Watchable = (*MPSC[int])(nil)
	_ Watchable = (*SPMC[int])(nil)
	_ Watchable = (*MPMC[int])(nil)
	_ Watchable = (*Mailbox[int])(nil)
	_ Watchable = (*Backlog[int])(nil)
	_ Watchable = (*Broadcast[int])(nil)
	_ Watchable = (*Subscription[int])(nil)
)
