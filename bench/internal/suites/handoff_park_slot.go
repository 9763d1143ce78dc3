package suites

import "sync/atomic"

// parkCell's word, besides a parked taker's goroutine.
const (
	parkCellEmpty uintptr = iota
	parkCellFull
)

// parkSlot is the handoff suite's limit row: a worker's slot as a bare
// parkCell.
type parkSlot struct{ c parkCell[func()] }

func (s *parkSlot) put(f func()) bool { s.c.put(f); return false }
func (s *parkSlot) take() func()      { return s.c.take() }
func (s *parkSlot) done() bool        { return true }

// semaSlot is the handoff suite's other limit row: a worker's slot as
// the runtime's semaphore, released with handoff, so the submitter gives
// its P to the worker it wakes (what sync.Mutex does in starvation
// mode). No lock of the harness's, no registration: the other way the
// runtime hands a parked goroutine something.
type semaSlot struct {
	fn   func()        // written before full is set, read after it is seen
	full atomic.Uint32 // orders fn for the race detector, which does not see the semaphore
	sema uint32
}

func (s *semaSlot) put(f func()) bool {
	s.fn = f
	s.full.Store(1)
	semrelease(&s.sema, true, 0)
	return false
}

func (s *semaSlot) take() func() {
	for s.full.Load() == 0 {
		semacquire(&s.sema)
	}
	f := s.fn
	s.fn = nil
	s.full.Store(0)
	return f
}

func (s *semaSlot) done() bool { return true }
