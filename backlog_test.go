package knit

// The Backlog runs the table-driven ring tests (ring_test.go) as a
// multi-producer multi-consumer ring with no bound, skipping the steps
// that need a full ring: every count, Close racing blocked consumers,
// and the fuzz model.
func init() {
	ringKinds = append(ringKinds, ringKind{
		name: "Backlog", multiProducer: true, multiConsumer: true, unbounded: true,
		newInt:         func(_ int, park Park) Queue[int] { return NewBacklog[int](park) },
		newPtr:         func(int) Queue[*int] { return NewBacklog[*int](Park{}) },
		slotsAreZeroed: func(q Queue[*int]) bool { return mailboxSlotsZero(&q.(*Backlog[*int]).m) },
	})
}
