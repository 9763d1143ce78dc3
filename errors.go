package knit

import "errors"

// Errors of the ring calls (see the grid, on Producer and Consumer); test
// with errors.Is. pool.ErrClosed and shm.ErrClosed match ErrClosed.
var (
	// ErrClosed is returned by a push on a closed ring, and by a pop on a
	// closed ring once it is drained.
	ErrClosed = errors.New("knit: ring closed")
	// ErrFull is returned by TryPush and TryPushBatch when the ring has
	// no room.
	ErrFull = errors.New("knit: ring full")
	// ErrEmpty is returned by TryPop and TryPopBatch when the ring holds
	// nothing ready.
	ErrEmpty = errors.New("knit: ring empty")
)
