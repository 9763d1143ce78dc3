//go:build knit_checkends

package knit

import (
	"sync/atomic"

	"github.com/knit-go/knit/internal/goid"
)

// checkEnds makes the single sides of the rings detect sharing: built
// with -tags knit_checkends, a call on a single side (SPSC's and Words'
// producer and consumer, MPSC's and the Mailbox's consumer, SPMC's and
// Broadcast's producer, a Subscription) panics when another goroutine is
// inside a call on the same side at that moment, a blocked Push or Pop
// included. That is the misuse that loses items (two producers of one
// SPSC overwrite each other's slots); it is caught without false alarms,
// since a side handed from one goroutine to another with the program's
// own synchronisation is never used by both at once. A handoff without
// synchronisation is a data race, which -race reports.
//
// Close on a ring with one producer is the producer's call too (see
// SPSC's Close): it panics while the producer is inside a call, and once
// another goroutine has closed the ring, the goroutine that made the last
// producer call before that Close panics at its next one. A producer
// still pushing after someone else closed its ring is the shape in which
// the producer's next index store can undo the Close, whether or not the
// two calls happened to overlap in this run.
const checkEnds = true

// sideGuard watches one single side.
//
// It names goroutines by goid.ID, the runtime's goroutine id, which no
// two goroutines ever share, and not by the address of their g
// (goid.Curg): the runtime starts the next goroutine on a finished one's
// g, and last and closedUnder outlive the goroutine they name. Keyed on
// the g, a fresh goroutine handed a closed end after the producer had
// exited, the documented way to close from outside (the producer's last
// call, a WaitGroup, Close), was taken for the old producer and panicked
// instead of getting ErrClosed (issue 48). With ids nothing needs to
// forget a producer that was synchronised away: a record naming a
// goroutine that has exited matches no goroutine again. Where
// goid.Cheap holds, ID is a load from the g, about a nanosecond over
// Curg (goid's BenchmarkID and BenchmarkCurg).
type sideGuard struct {
	_      [CacheLineSize]byte
	holder atomic.Uint64 // the goroutine inside a call on this side (goid.ID), 0 when none
	depth  int32         // the holder's nesting of calls (a Pop's attempts inside its wait); the holder's alone
	last   atomic.Uint64 // the goroutine that made the side's latest call
	// closedUnder is the goroutine that was the producer (last) when
	// another goroutine closed the ring: its next call on the side is
	// the race. Only that goroutine ever matches it, so a goroutine the
	// side is handed to after the Close gets ErrClosed.
	closedUnder atomic.Uint64
	// Every call writes the guard: on a line of its own it does not
	// take the lines the other side reads away from it.
	_ [CacheLineSize - 4*8]byte
}

func (g *sideGuard) enter(ring, side string) {
	me := goid.ID()
	if g.holder.CompareAndSwap(0, me) {
		g.depth = 1
	} else if g.holder.Load() == me {
		g.depth++
		return
	} else {
		panic("knit: two goroutines used the " + side + " side of one " + ring + " at once; only one may (knit_checkends)")
	}
	if c := g.closedUnder.Load(); c != 0 && c == me {
		g.leave()
		panic("knit: the producer of a " + ring + " called it after another goroutine closed it; a Close racing the producer can be undone: let the producer close, or close only after its last call, with synchronisation (knit_checkends)")
	}
	if g.last.Load() != me { // a store is a locked XCHG: only on a handoff
		g.last.Store(me)
	}
}

func (g *sideGuard) leave() {
	if g.depth--; g.depth == 0 {
		g.holder.Store(0)
	}
}

// closing is a producer's Close: a producer call, which also notes a
// Close made from a goroutine other than the producer's.
func (g *sideGuard) closing(ring string) {
	last := g.last.Load()
	g.enter(ring, "producer")
	if me := goid.ID(); last != 0 && last != me {
		g.closedUnder.Store(last)
	}
}
