package knit

import "errors"

// Errors of the ring calls (see the grid, on Producer and Consumer) and of
// Slot's; test with errors.Is. pool.ErrClosed and shm.ErrClosed match
// ErrClosed.
var (
	// ErrClosed is returned by a push on a closed ring, and by a pop on a
	// closed ring once it is drained; the same for a Slot's Put and Take.
	ErrClosed = errors.New("knit: closed")
	// ErrFull is returned by TryPush and TryPushBatch when the ring has
	// no room, and by a Slot's TryPut when it holds a value.
	ErrFull = errors.New("knit: full")
	// ErrEmpty is returned by TryPop and TryPopBatch when the ring holds
	// nothing ready, and by a Slot's TryTake when it holds none.
	ErrEmpty = errors.New("knit: empty")
)
