//go:build race

package suites

import "sync/atomic"

// parkCell under the race detector: gopark's unlockf runs on the
// scheduler's stack, where the detector's atomics (calls into its
// runtime) cannot run, so the taker sleeps on the runtime's semaphore
// instead. The rows built on it then measure nothing of note, as no row
// does under -race; they run so that the suites' checks cover them.
type parkCell[T any] struct {
	v     T // written before state is full, read after it is seen
	state atomic.Uintptr
	sema  uint32
}

func (c *parkCell[T]) put(v T) {
	c.v = v
	c.state.Store(parkCellFull)
	semrelease(&c.sema, false, 0)
}

// take sleeps until the value is there. A release whose value an earlier
// take found without sleeping is left in the semaphore and wakes a later
// take early, which looks again and sleeps on.
func (c *parkCell[T]) take() T {
	for c.state.Load() != parkCellFull {
		semacquire(&c.sema)
	}
	v := c.v
	var zero T
	c.v = zero
	c.state.Store(parkCellEmpty)
	return v
}
