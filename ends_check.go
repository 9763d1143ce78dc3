//go:build knit_checkends

package knit

import "sync/atomic"

// checkEnds makes the single sides of the rings detect sharing: built
// with -tags knit_checkends, a call on an SPSC's or Words' producer or
// consumer side, MPSC's consumer side or SPMC's producer side panics when
// another goroutine is inside a call on the same side at that moment.
// That is the misuse that loses items (two producers of one SPSC
// overwrite each other's slots); it is caught without false alarms,
// since a side handed from one goroutine to another with the program's
// own synchronisation is never used by both at once. A handoff without
// synchronisation is a data race, which -race reports.
const checkEnds = true

// sideGuard counts the goroutines inside one single side's calls.
type sideGuard struct{ inside atomic.Int32 }

func (g *sideGuard) enter(ring, side string) {
	if g.inside.Add(1) != 1 {
		g.inside.Add(-1)
		panic("knit: two goroutines used the " + side + " side of one " + ring + " at once; only one may (knit_checkends)")
	}
}

func (g *sideGuard) leave() { g.inside.Add(-1) }
