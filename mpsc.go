package knit

// MPSC is a bounded multi-producer single-consumer ring: producers claim
// positions by CAS as in MPMC; the one consumer moves head with a plain
// store, so a pop costs no read-modify-write.
//
// Contract: at most one goroutine pops (TryPop, Pop, PopBatch) at a time.
type MPSC[T any] struct {
	seqRing[T]
}

// NewMPSC returns an MPSC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity.
func NewMPSC[T any](capacity int, opts ...Option) *MPSC[T] {
	q := &MPSC[T]{}
	q.init("MPSC", capacity, true, opts)
	return q
}
