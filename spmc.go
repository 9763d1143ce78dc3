package knit

// SPMC is a bounded single-producer multi-consumer ring: consumers claim
// positions by CAS as in MPMC. The one producer still publishes through a
// CAS on tail, uncontended but for Close: that CAS is what orders a push
// against Close so no item is published after the ring reads as drained.
//
// Contract: at most one goroutine pushes (TryPush, Push, PushBatch) at a
// time.
type SPMC[T any] struct {
	seqRing[T]
}

// NewSPMC returns an SPMC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity.
func NewSPMC[T any](capacity int, opts ...Option) *SPMC[T] {
	q := &SPMC[T]{}
	q.init("SPMC", capacity, false, opts)
	return q
}
