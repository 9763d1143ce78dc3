package knit

import (
	"context"
	"math"
	"sync/atomic"
)

// futexCancel is a futex sleeper's cancellation hook, allocated only for
// a cancellable ctx (so Wait with context.Background stays allocation
// free).
type futexCancel struct {
	e    *Event
	left atomic.Bool // the sleeper is out of its loop: no kick needed
	stop func() bool
}

func (e *Event) armCancel(ctx context.Context) *futexCancel {
	c := &futexCancel{e: e}
	c.stop = context.AfterFunc(ctx, c.fire)
	return c
}

// fire kicks even if the word has moved since the sleeper's ticket: a
// Notify(1) may have woken another sleeper and left this one in the
// kernel on a stale ticket. It skips the kick once the sleeper has left,
// when it would only wake the others for nothing.
func (c *futexCancel) fire() {
	if !c.left.Load() {
		c.e.kick()
	}
}

func (c *futexCancel) disarm() {
	c.left.Store(true)
	c.stop()
}

// kick wakes every futex sleeper for a cancellation. It changes the word,
// so the other waiters return a spurious nil and re-check.
func (e *Event) kick() {
	e.seq.Add(1)
	if e.fsleep.Load() != 0 {
		e.countWakes(1)
		FutexWake(&e.seq, math.MaxInt32)
	}
}
