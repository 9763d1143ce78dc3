//go:build !race

package suites

import (
	"sync/atomic"
	"unsafe"
)

// The runtime's park and ready, as channels and knit's runtime backend
// use them. The runtime marks both "Do not remove or change the type
// signature" (go.dev/issue/67401). reason and traceReason 0 are the
// values every Go version gives the same meaning ("[waiting]").

//go:linkname gopark runtime.gopark
func gopark(unlockf func(gp, lock unsafe.Pointer) bool, lock unsafe.Pointer, reason, traceReason uint8, traceskip int)

//go:linkname goready runtime.goready
func goready(gp unsafe.Pointer, traceskip int)

// parkCell hands a parked goroutine a value with the runtime's own park
// and ready and nothing else: no lock, no registration, no note. One
// putter at a time hands one taker a value; the taker takes it before
// the next put. The word is empty, full, or the parked taker's
// goroutine. put stores the value and swaps in full, readying the
// goroutine it swapped out if there was one; a taker that finds the word
// empty parks, and gopark's unlockf publishes its goroutine with a CAS
// from empty, which fails (and the taker runs on) if the value came
// first. A channel, a knit ring or an Event does this and its own
// bookkeeping. A parkCell must not live on its taker's stack: the
// unlockf runs while that stack may move.
type parkCell[T any] struct {
	v     T // written before state is full, read after it is seen
	state atomic.Uintptr
}

func (c *parkCell[T]) put(v T) {
	c.v = v
	if g := c.state.Swap(parkCellFull); g != parkCellEmpty {
		// The goroutine's address, kept as a uintptr: a g does not
		// move and the runtime's list of goroutines keeps it alive, so
		// the round trip is safe (written through memory, as vet asks).
		goready(*(*unsafe.Pointer)(unsafe.Pointer(&g)), 0)
	}
}

func (c *parkCell[T]) take() T {
	for c.state.Load() != parkCellFull {
		gopark(parkCellCommit, unsafe.Pointer(&c.state), 0, 0, 1)
	}
	v := c.v
	var zero T
	c.v = zero
	c.state.Store(parkCellEmpty)
	return v
}

// parkCellCommit is gopark's unlockf: it runs on the scheduler's stack
// with gp already marked waiting, must not touch gp's stack, and keeps
// gp asleep only if no value came in the meantime. Race builds take
// handoff_park_race.go instead: there the CAS is a call into the race
// detector, which has no context on the scheduler's stack.
//
//go:nosplit
func parkCellCommit(gp, state unsafe.Pointer) bool {
	return (*atomic.Uintptr)(state).CompareAndSwap(parkCellEmpty, uintptr(gp))
}
