package knit

// The Broadcast's producer and one subscription make a ring with the
// method set of an SPSC's two ends, so every table-driven ring test runs
// on it too.
func init() {
	ringKinds = append(ringKinds, ringKind{
		name: "Broadcast 1 subscriber",
		newInt: func(n int, o ...Option) Queue[int] {
			b := NewBroadcast[int](n, o...)
			return joined[int]{b, b.Subscribe()}
		},
		newPtr: func(n int) Queue[*int] {
			b := NewBroadcast[*int](n)
			return joined[*int]{b, b.Subscribe()}
		},
		slotsAreZeroed: func(q Queue[*int]) bool {
			for _, p := range q.(joined[*int]).sender.(*Broadcast[*int]).buf {
				if p != nil {
					return false
				}
			}
			return true
		},
	})
}
