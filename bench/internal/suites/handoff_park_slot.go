package suites

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
