package knit

import (
	"context"
	"sync/atomic"
	"unsafe"

	"github.com/knit-go/knit/internal/relstore"
	"github.com/knit-go/knit/internal/sched"
)

// Slot is a one-value handoff between goroutines, the one a pool makes
// to a parked worker for each task, ready-made: put a value and wake the
// taker, take with a ctx, close. It holds at most one value.
//
//   - Put stores v, waiting while the slot holds a value, and wakes a
//     waiting taker; TryPut never waits and returns [ErrFull] instead.
//     Two putters at once: one stores, the other waits (or gets ErrFull).
//   - Take waits for a value and empties the slot, waking a waiting
//     putter; TryTake never waits and returns [ErrEmpty] instead.
//   - Close is idempotent and loses nothing: a value inside is still
//     taken, and then Take returns [ErrClosed]; a Put or TryPut after
//     Close, and a Put waiting when it comes, returns ErrClosed and
//     stores nothing.
//   - A Put or Take whose ctx ends while it waits returns ctx.Err() and
//     has moved nothing; one whose ctx is already done does nothing.
//
// Any number of goroutines may put and take at once; each value is taken
// exactly once. A Put that wakes a taker asleep in the scheduler then
// yields its P to it, as [Event.Handoff] does, at every GOMAXPROCS: the
// taker runs at once on the putter's P and the putter runs after it
// (docs/pool-authors.md, "Handoff or Notify", has the measurements
// behind the rule, at GOMAXPROCS 1 and 2). A taker that waits with a
// ctx that cannot be cancelled parks at once, without spinning, on a
// word of the Slot's own when no other taker does (a pool's worker on
// its own Slot); any other waits on an [Event] with the zero [Park].
// Put, Take and their Try forms allocate nothing. The zero Slot is
// empty, open and ready to use. A Slot must not be copied after first
// use.
type Slot[T any] struct {
	// state is the phase (slotEmpty ... slotTaking) and slotClosed. Only
	// the caller that moved the phase to slotPutting or slotTaking
	// touches v, and it moves the phase on when done (see "Slot: the
	// proof" below).
	state atomic.Uint32
	// takers wait for a value (or for closed and empty); putters for
	// room (or for closed).
	takers  Event
	putters Event
	// solo is the word one taker sleeps on, when it waits with a ctx
	// that cannot be cancelled and no other taker holds the word (a
	// pool's worker on its own slot): no lock, no count, no node. Every
	// other taker waits on takers. See "The solo taker" below.
	solo parkWord
	v    T
}

// The phases of a Slot's state (its low two bits), and its closed bit.
const (
	slotEmpty   uint32 = iota // no value: a Put may claim it
	slotPutting               // claimed by a Put, which is writing v
	slotFull                  // v holds a value: a Take may claim it
	slotTaking                // claimed by a Take, which is reading v
	slotPhase   uint32 = 3
	slotClosed  uint32 = 4
)

// Slot: the proof.
//
// Each value is taken exactly once. A value enters v only between a
// CompareAndSwap slotEmpty -> slotPutting and the Add that moves the
// phase on to slotFull, and leaves it only between a CompareAndSwap
// slotFull -> slotTaking and the Add that moves it to slotEmpty. The
// CompareAndSwaps make those sections exclusive (at most one caller
// holds the phase out of empty or full at a time), and every move is a
// sync/atomic operation, so the write of v happens before the read of
// it. Close only sets the closed bit (Or); the Adds that end a section
// keep it, so a Put that claimed the slot before Close delivers its
// value, and Take hands out a value present whatever the bit says.
//
// No waiter sleeps through the change it waits for. A taker waits for
// phase full, or for closed with phase empty; a putter for phase empty,
// or closed. Each registers (Prepare on its Event, or a claim of the
// solo word) and only then re-checks the state, and every change of
// state is an atomic write followed by a look for the waiters it may
// release: Put's Add to full wakes a taker (the solo word's, else one on
// takers), Take's Add to empty notifies putters, and Close wakes all.
// The Event's argument (event.go, "Why no wakeup is lost") covers both
// ways of registering: each side writes with a sync/atomic operation and
// then loads what the other wrote. One case is not a move of the phase:
// a taker that found closed with a Put or another Take mid-section waits
// for that section to end, so an Add that ends a section on a closed
// slot wakes every waiter of both kinds.
//
// One wake per Add is enough: one value or one room appears, and one
// claimant can use it. A woken waiter that loses the claim to a caller
// that did not sleep waits again: what it was woken for went to that
// caller. A wake is never taken by a waiter that then gives up:
// Event.Wait reports a Notify that raced the cancellation of its ctx as
// the wake (nil), and the loop then re-checks and claims what it was
// woken for; a waiter whose ctx ended took no wake from another (Notify
// wakes the next sleeper in its place) and claimed nothing. The solo
// word's sleeper cannot give up: only a ctx that cannot be cancelled
// waits there.

// Put stores v in the slot, waiting while it is full, and wakes one
// waiting taker. It returns nil, or [ErrClosed] if the slot is closed
// before v is stored (v is then not stored), or ctx.Err() if ctx ends
// first.
func (s *Slot[T]) Put(ctx context.Context, v T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if !s.state.CompareAndSwap(slotEmpty, slotPutting) {
		if err := s.claimPut(ctx); err != nil {
			return err
		}
	}
	s.v = v
	s.filled()
	return nil
}

// TryPut stores v if the slot is empty and open, and wakes one waiting
// taker. It never waits: it returns [ErrFull] while the slot holds a
// value (or another call is mid-way through moving one), [ErrClosed]
// once it is closed.
func (s *Slot[T]) TryPut(v T) error {
	if err := s.tryClaimPut(); err != nil {
		return err
	}
	s.v = v
	s.filled()
	return nil
}

// tryClaimPut moves the phase from empty to putting.
func (s *Slot[T]) tryClaimPut() error {
	for {
		st := s.state.Load()
		switch {
		case st&slotClosed != 0:
			return ErrClosed
		case st != slotEmpty:
			return ErrFull
		case s.state.CompareAndSwap(st, slotPutting):
			return nil
		}
	}
}

// claimPut is Put's wait: it returns once this caller moved the phase to
// putting, or with ErrClosed or ctx.Err().
func (s *Slot[T]) claimPut(ctx context.Context) error {
	for {
		err := s.tryClaimPut()
		if err != ErrFull {
			return err
		}
		t := s.putters.Prepare()
		if st := s.state.Load(); st == slotEmpty || st&slotClosed != 0 {
			s.putters.Cancel(t)
			continue
		}
		if err := s.putters.Wait(ctx, t, Park{}); err != nil {
			return err
		}
	}
}

// filled ends a Put's section: the phase goes from putting to full, and
// a waiting taker is woken; if it was asleep, the putter yields its P to
// it (slotHandoff).
func (s *Slot[T]) filled() {
	if st := s.state.Add(slotFull - slotPutting); st&slotClosed != 0 {
		s.wakeAll()
		return
	}
	slotRaceHook()
	if parked, ok := s.wakeSolo(); ok {
		if parked && slotHandoff() {
			sched.Yield()
		}
		return
	}
	if slotHandoff() {
		s.takers.Handoff()
	} else {
		s.takers.Notify(1)
	}
}

// Take waits for a value and returns it, emptying the slot and waking
// one waiting Put. It returns [ErrClosed] once the slot is closed and
// empty, or ctx.Err() if ctx ends first (the slot keeps its value, if
// one came, for the next Take).
func (s *Slot[T]) Take(ctx context.Context) (T, error) {
	if err := ctxErr(ctx); err != nil {
		var zero T
		return zero, err
	}
	for {
		v, err := s.TryTake()
		if err != ErrEmpty {
			return v, err
		}
		if ctx.Done() == nil && parkLinked() && s.sleepSolo() {
			continue
		}
		t := s.takers.Prepare()
		if st := s.state.Load(); slotTakeable(st) {
			s.takers.Cancel(t)
			continue
		}
		if err := s.takers.Wait(ctx, t, Park{}); err != nil {
			return v, err
		}
	}
}

// slotTakeable reports a state a waiting taker must look at: a value,
// or closed and empty.
func slotTakeable(st uint32) bool {
	return st&slotPhase == slotFull || st == slotClosed // closed, its phase slotEmpty (0)
}

// TryTake returns the slot's value if it holds one, emptying it and
// waking one waiting Put. It never waits: it returns [ErrEmpty] while the
// slot is empty and open (or another call is mid-way through moving a
// value), [ErrClosed] once it is closed and empty.
func (s *Slot[T]) TryTake() (v T, err error) {
	for {
		st := s.state.Load()
		switch {
		case st&slotPhase == slotFull:
			if !s.state.CompareAndSwap(st, st+slotTaking-slotFull) {
				continue
			}
		case st == slotClosed: // closed, its phase slotEmpty (0)
			return v, ErrClosed
		default:
			return v, ErrEmpty
		}
		v = s.v
		var zero T
		s.v = zero // the slot keeps no reference to what it handed out
		// ^(slotTaking - 1) adds minus slotTaking: the phase to empty.
		if st = s.state.Add(^(slotTaking - 1)); st&slotClosed != 0 {
			s.wakeAll()
		} else {
			s.putters.Notify(1)
		}
		return v, nil
	}
}

// Close closes the slot and wakes every waiter: waiting Puts return
// ErrClosed, waiting Takes take the value inside if there is one and
// return ErrClosed otherwise. It is idempotent.
func (s *Slot[T]) Close() {
	if s.state.Or(slotClosed)&slotClosed == 0 {
		s.wakeAll()
	}
}

// wakeAll wakes every waiter of both kinds, after a change of state on a
// closed slot.
func (s *Slot[T]) wakeAll() {
	s.wakeSolo()
	s.takers.NotifyAll()
	s.putters.NotifyAll()
}

// Len reports whether the slot holds a value now: 1 if it does (or a
// Take is reading it out), 0 if not.
func (s *Slot[T]) Len() int {
	if s.state.Load()&slotPhase >= slotFull {
		return 1
	}
	return 0
}

// slotHandoff says how Put wakes a taker asleep in the scheduler: true,
// Handoff (ready it and yield the P to it: it runs now, on this P, and
// the putter after it), at every GOMAXPROCS; false, Notify (ready it:
// it runs when the putter blocks, or on another P that takes it), only
// where the tests and BenchmarkSlotRule ask for it to compare.
//
// Handoff measured faster than Notify in every shape BenchmarkSlotRule
// runs, at GOMAXPROCS 1 and 2 (docs/pool-authors.md, "Handoff or Notify",
// has the figures). The submitter's next step is to find a free worker,
// which once the pool is busy means waiting for one: with Notify the
// worker runs only after the submitter parked, and wakes it again.
// GOMAXPROCS is not read: no setting measured turned the answer over.
func slotHandoff() bool { return !slotNotifies() }

// The solo taker. A Slot's solo word is a parkWord (parkword.go): free,
// awake (a taker claimed it and re-checks), the taker's goroutine
// (parked by gopark's unlockf), or woken (a putter, or Close, took it).
// The taker claims (a CAS from free) and then re-checks the state; the
// putter makes the state full (an Add) and then takes the word (a CAS
// from awake or a goroutine): each side stores and then loads, so either
// the re-check sees the value or the putter sees the taker, as in the
// Event's argument ("Why no wakeup is lost"). A word is claimed only
// from free, so the woken taker frees it itself once it runs: a second
// taker that came meanwhile waits on the Event rather than claim a word
// whose last sleeper has not yet looked at it.

// sleepSolo is a taker's wait on the solo word. It reports false when
// another taker holds the word (the caller waits on the Event instead),
// true once it has waited, or found the state worth a look: the caller
// then looks again.
func (s *Slot[T]) sleepSolo() bool {
	if !s.solo.claim() {
		return false
	}
	slotRaceHook()
	if slotTakeable(s.state.Load()) {
		if !s.solo.unclaim() {
			s.releaseSolo() // a putter took the word: the wake is ours
		}
		return true
	}
	slotRaceHook()
	s.solo.sleep()
	s.releaseSolo()
	return true
}

// releaseSolo frees the word after a wake. Only the woken taker moves
// the word out of woken (claims and takes need another state), so the
// store needs no fence: with a release store (a MOV on amd64, where
// sync/atomic's Store is an XCHG), a putter that still reads woken for a
// moment finds no taker to wake, which is so: this one is awake and will
// re-check, and its next claim is a CAS.
func (s *Slot[T]) releaseSolo() {
	if unsafe.Sizeof(uintptr(0)) == 8 {
		relstore.Store((*atomic.Uint64)(unsafe.Pointer(&s.solo.v)), uint64(wordFree))
	} else {
		s.solo.release()
	}
}

// wakeSolo takes the word from a taker on it, readying it if parked. It
// reports whether there was a taker, and whether it was parked.
func (s *Slot[T]) wakeSolo() (parked, ok bool) {
	w, ok := s.solo.take()
	if ok {
		ready(w) // a no-op for a taker not yet parked
	}
	return ok && w != wordAwake, ok
}
