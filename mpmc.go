package knit

// MPMC is a bounded multi-producer multi-consumer ring (Vyukov's, see
// seqRing): any number of goroutines may push and pop at once. Producers
// contend on one CAS per push (or per batch), consumers on another.
type MPMC[T any] struct {
	seqRing[T]
}

// NewMPMC returns an MPMC ring holding capacity items, rounded up to a
// power of two. It panics if capacity is < 1 or > MaxCapacity.
func NewMPMC[T any](capacity int, opts ...Option) *MPMC[T] {
	q := &MPMC[T]{}
	q.init("MPMC", capacity, false, opts)
	return q
}
