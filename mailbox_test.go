package knit

// Mailbox has the rings' method set, so every table-driven ring test runs
// on it, skipping the steps that need a full ring.
func init() {
	ringKinds = append(ringKinds, ringKind{
		name: "Mailbox", multiProducer: true, unbounded: true, relaxedBells: true,
		newInt:         func(_ int, o ...Option) Queue[int] { return NewMailbox[int](o...) },
		newPtr:         func(int) Queue[*int] { return NewMailbox[*int]() },
		slotsAreZeroed: func(q Queue[*int]) bool { return mailboxSlotsZero(q.(*Mailbox[*int])) },
	})
}

// mailboxSlotsZero reports whether no slot of any segment the mailbox
// holds (the chain from the consumer's segment, and the spare) references
// anything.
func mailboxSlotsZero[T comparable](m *Mailbox[T]) bool {
	var zero T
	for _, s := range mailboxSegs(m) {
		for i := range s.slots {
			if s.slots[i].val != zero {
				return false
			}
		}
	}
	return true
}

// mailboxSegs lists the segments a mailbox holds: the chain from the
// consumer's, then the spare.
func mailboxSegs[T any](m *Mailbox[T]) []*mboxSeg[T] {
	var segs []*mboxSeg[T]
	for s := m.headSeg; s != nil; s = s.next.Load() {
		segs = append(segs, s)
	}
	if s := m.spare.Load(); s != nil {
		segs = append(segs, s)
	}
	return segs
}
