package knit

import (
	"context"
	"math"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit/internal/relstore"
)

// Mailbox is an unbounded multi-producer single-consumer queue: an
// actor's inbox. Any number of goroutines push, one pops. A push never
// waits and never fails while the mailbox is open: TryPush and Push
// return nil until Close. The consumer's calls block as a ring's do
// (spin, then park, with no wake while nobody waits), Close is lossless,
// and a Mailbox has the method set of the rings ([Queue]), so it is a
// case of Select and [All] ranges over it.
//
// Items live in segments of mailboxSegSize slots. A producer claims a
// slot with one atomic add on the last segment's counter (no CAS loop)
// and publishes it with a release store of the slot's sequence; when a
// segment fills, the producer that finds it full first links the next
// one. The consumer reads slots in order and hands each segment it has
// finished back for reuse: one is kept spare, the rest go to a sync.Pool
// of the mailbox's own. So a mailbox that the consumer keeps up with
// allocates nothing, one that grew (producers ahead of the consumer)
// reuses its segments for the next burst instead of allocating them
// again, and once drained it holds at most two segments itself: the
// pooled ones are the garbage collector's to drop, as sync.Pool's are.
// Popped slots are cleared when T holds pointers, so a drained mailbox
// keeps nothing alive.
//
// Cap is math.MaxInt: there is no bound, and memory grows while
// producers outrun the consumer, one allocation per segment. Put
// backpressure elsewhere (a bounded ring, a semaphore) where that could
// exhaust memory.
//
// Like SPSC, the mailbox publishes with a release store and skips the
// fence while its consumer does not park (bell.go, "Publication and the
// doorbell"): wait for a Mailbox with its own calls or Select, or, to
// watch it with an Event of your own (TryPush, then Notify), first keep
// it fenced with [KeepFenced], or the Event can miss a push.
//
// The zero Mailbox is not a queue; create one with NewMailbox.
type Mailbox[T any] struct {
	_ [CacheLineSize]byte

	// The producers' line: read by every push, written once a segment.
	tailSeg atomic.Pointer[mboxSeg[T]] // the last segment; moved by the linker under mu
	_       [CacheLineSize - 8]byte

	// The consumer's line.
	headSeg  *mboxSeg[T]   // the segment being read; the consumer's own
	readIdx  uint64        // next slot of headSeg to read; the consumer's own
	headLap  uint64        // headSeg.lap, copied when the consumer moves to it
	headBase uint64        // headSeg.base, likewise
	head     atomic.Uint64 // the consumer's position, for Len; stored by the consumer only
	_        [CacheLineSize - 40]byte

	bells ringBells // notEmpty: the consumer waits; notFull is never rung (a push never waits)

	spare  atomic.Pointer[mboxSeg[T]] // a finished segment kept for the next link, or nil
	pool   sync.Pool                  // finished segments past the spare, until a GC drops them
	mu     sync.Mutex                 // linking a segment, and Close
	closed bool                       // under mu

	consSide   sideGuard   // empty, unless built with knit_checkends
	clearSlots bool        // T holds pointers; read-only after construction
	shared     bool        // a Backlog's: several consumers; read-only after construction
	shut       atomic.Bool // stored by Close before it seals: see wake
}

// mailboxSegSize is the number of slots in a segment: a segment boundary
// costs a lock and a link (and, while the mailbox grows, an allocation),
// so it must be rare next to the items; xsync's UMPSCQueue found no gain
// past 4096 on 64 cores and losses under 1024.
const mailboxSegSize = 1024

// mboxSeg is one segment. In each incarnation (between two links) its
// slots are positions base..base+mailboxSegSize-1, and a slot holds its
// item once its ready word equals lap. lap is new at every link, so a
// recycled segment needs no pass to reset its slots: a slot written in an
// earlier incarnation reads as not ready.
//
// The read-mostly line comes first: Go checks a pointer for nil by
// loading from its offset 0, and the consumer's pop does so on its
// segment, so at offset 0 claim would be pulled from the producers on
// every look for an item.
type mboxSeg[T any] struct {
	next   atomic.Pointer[mboxSeg[T]] // the following segment, once linked
	base   atomic.Uint64              // the position of slot 0
	sealed atomic.Uint64              // 1 + the slots claimed before Close, once Close sealed this segment
	lap    uint64                     // written by the linker before claim's reset and the link; read after them
	_      [CacheLineSize - 32]byte

	// claim is the next slot to claim: producers add to it, so it
	// passes mailboxSegSize by the number of producers that found the
	// segment full. | closedBit once Close sealed the segment. It holds
	// at least mailboxSegSize from the moment the segment fills until
	// the linker resets it, so a producer still holding the segment from
	// an earlier incarnation, or from the spare, only ever finds it full.
	claim atomic.Uint64
	_     [CacheLineSize - 8]byte

	slots [mailboxSegSize]mboxSlot[T]
}

type mboxSlot[T any] struct {
	val   T             // written by the producer that claimed the slot, read by the consumer once ready
	ready atomic.Uint64 // the segment's lap once val is written
}

// NewMailbox returns an empty, open Mailbox with one segment; park says
// how a blocked Pop waits (Park{}: the default).
func NewMailbox[T any](park Park) *Mailbox[T] {
	m := &Mailbox[T]{}
	m.init(park)
	return m
}

func (m *Mailbox[T]) init(park Park) {
	m.clearSlots = holdsPointers(reflect.TypeFor[T]())
	s := new(mboxSeg[T])
	s.lap = 1
	m.headSeg, m.headLap = s, s.lap
	m.tailSeg.Store(s)
	m.bells.park = ringPark(park)
}

// push claims a slot with an add and fills it. A claim past the end
// means the segment is full: link the next (grow) and claim again there.
func (m *Mailbox[T]) push(v T) status {
	for {
		s := m.tailSeg.Load()
		if s == nil {
			panicZero("Mailbox", "NewMailbox")
		}
		i := s.claim.Add(1) - 1
		if i < mailboxSegSize {
			sl := &s.slots[i]
			sl.val = v
			// Release: pairs with the consumer's acquire load of ready;
			// the item is written before it on both arches.
			pos := s.base.Load() + i
			b := &m.bells.notEmpty
			publish(&sl.ready, s.lap, &b.mode)
			if b.pending(pos, pos+1) {
				m.wake(b, pos, pos+1)
			}
			return stOK
		}
		if i&closedBit != 0 {
			return stClosed
		}
		if !m.grow(s) {
			return stClosed
		}
	}
}

// grow links a segment after full, unless another producer already did
// or the mailbox is closed (false). The lock serialises the links and
// Close; the other producers that found full full wait on it, which
// happens once a segment.
func (m *Mailbox[T]) grow(full *mboxSeg[T]) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tailSeg.Load() != full {
		return true // linked already, or full was stale: claim again
	}
	if m.closed {
		return false
	}
	if full.claim.Load() < mailboxSegSize {
		// full was recycled and linked again since its caller found it
		// full: the last segment, in a later incarnation, with room.
		// (Its claim cannot be reset while it is the last: only a
		// finished segment, from the spare or the pool, is reset, and
		// only here.)
		return true
	}
	n := m.spare.Swap(nil)
	if n == nil {
		n, _ = m.pool.Get().(*mboxSeg[T])
	}
	if n == nil {
		n = new(mboxSeg[T]) // the one allocation of a segment
	}
	base := full.base.Load() + mailboxSegSize
	// n.next is nil: n is new, or advance cleared it before n became
	// the spare or went to the pool.
	n.sealed.Store(0)
	n.base.Store(base)
	n.lap = base/mailboxSegSize + 1
	// Open n for claims. From here a producer that still holds n from
	// an earlier incarnation may claim in it, which is right: full is
	// full, so n is the next segment, and it is linked below without
	// fail.
	n.claim.Store(0)
	full.next.Store(n) // release: the consumer that loads it sees lap and base
	m.tailSeg.Store(n)
	return true
}

// pop is the consumer's attempt: the next slot in order, if it is ready.
// The common case, a ready slot in the segment being read, is small
// enough to be inlined into Pop and TryPop; the rest is popMiss.
func (m *Mailbox[T]) pop() (T, status) {
	if checkEnds {
		// The checked build's guard is in popMiss: nothing of the
		// consumer's may be read before it.
		return m.popMiss()
	}
	if s, i := m.headSeg, m.readIdx; s != nil && i < mailboxSegSize {
		sl := &s.slots[i]
		// Acquire: pairs with the producer's release store of ready.
		if sl.ready.Load() == m.headLap {
			v := sl.val
			if m.clearSlots {
				var zero T
				sl.val = zero
			}
			m.readIdx = i + 1
			m.storeHead(m.headBase + i + 1)
			return v, stOK
		}
	}
	return m.popMiss()
}

// popMiss is pop past the end of a segment, at a slot not yet ready, and
// every pop of the checked build.
func (m *Mailbox[T]) popMiss() (T, status) {
	if checkEnds {
		m.consSide.enter("Mailbox", "consumer")
		defer m.consSide.leave()
	}
	var zero T
	s, i := m.headSeg, m.readIdx
	if i >= mailboxSegSize || s == nil {
		if st := m.advance(); st != stOK {
			return zero, st
		}
		s, i = m.headSeg, 0
	}
	sl := &s.slots[i]
	// Acquire: pairs with the producer's release store of ready.
	if sl.ready.Load() != m.headLap {
		return zero, m.emptyStatus(s, i)
	}
	v := sl.val
	if m.clearSlots {
		sl.val = zero
	}
	m.readIdx = i + 1
	m.storeHead(m.headBase + i + 1)
	return v, stOK
}

// storeHead publishes the consumer's position. A Mailbox's is read only
// for Len and a waiter's hint, which want a recent value and nothing
// ordered with it, so it is relstore.Hint's plain store, inlined into pop; a
// Backlog's consumers are several, and popInFlight orders its load of
// head before its load of the tail, so theirs is the release store.
func (m *Mailbox[T]) storeHead(pos uint64) {
	if m.shared {
		storeRel(&m.head, pos)
	} else {
		relstore.Hint(&m.head, pos)
	}
}

// advance moves the consumer from a finished segment to the next one and
// hands the finished one back; stEmpty or stDrained when there is no
// next one yet.
func (m *Mailbox[T]) advance() status {
	s := m.headSeg
	if s == nil {
		panicZero("Mailbox", "NewMailbox")
	}
	n := s.next.Load() // acquire: pairs with grow's release
	if n == nil {
		return m.emptyStatus(s, mailboxSegSize)
	}
	m.headSeg, m.readIdx = n, 0
	m.headLap, m.headBase = n.lap, n.base.Load()
	// Every slot of s was claimed, filled and read: no producer will
	// touch it again except to find its claim full. Keep it for the
	// next link: as the spare if that is free, else in the pool.
	//
	// First cut s from the chain: a spare that still pointed to n would
	// keep every segment from n to the consumer's reachable, so a
	// drained burst would stay in memory until the next link. The store
	// can neither lose a link nor race with one. Only the consumer reads
	// next, and it is past s. Only grow writes next, under mu, on the
	// last segment once it is full; s's one link in this incarnation is
	// the n just loaded, and grow moved (or, holding mu, is moving)
	// tailSeg to n without reading s.next again. A producer holding s
	// from before finds it full and its grow, once it has mu, sees
	// tailSeg is not s. s can be the last segment again only once grow
	// takes it from the spare or the pool, and the CAS or the Put below
	// publishes it there after this store (grow's Swap or Get acquires
	// it), so the nil precedes every later link after s. A segment is
	// never left in the spare or the pool with a next, so grow need not
	// clear it.
	s.next.Store(nil)
	if !m.spare.CompareAndSwap(nil, s) {
		m.pool.Put(s)
	}
	return stOK
}

// emptyStatus tells "nothing ready" from "drained": once Close sealed the
// last segment, the slots claimed before it are all there will be, and a
// consumer past them is done; one short of them waits for an item still
// being written.
func (m *Mailbox[T]) emptyStatus(s *mboxSeg[T], i uint64) status {
	if x := s.sealed.Load(); x != 0 && i >= min(x-1, mailboxSegSize) {
		return stDrained
	}
	return stEmpty
}

// popEmpty: see ringOps. Past a finished segment it answers as advance
// does; a link there means items came since the batch's look.
func (m *Mailbox[T]) popEmpty() status {
	s, i := m.headSeg, m.readIdx
	if s == nil {
		return stEmpty
	}
	if i >= mailboxSegSize {
		if s.next.Load() != nil {
			return stEmpty
		}
		i = mailboxSegSize
	}
	return m.emptyStatus(s, i)
}

// wake is a push's ring of the consumers' bell for positions [from, to),
// once pending said it is due. A Backlog's consumers that found, after
// Close, an item claimed before it and not yet written sleep waiting for
// it, all of them; Close's own NotifyAll came before they slept, and one
// wake per item would leave the rest asleep beside a drained backlog. So
// once shut, such a push wakes them all. It sees shut if any of them
// registered after seeing the backlog sealed: Close stores shut before it
// seals, the consumer registers after it saw the seal, and pending's load
// of the waiter count saw that registration.
func (m *Mailbox[T]) wake(b *ringBell, from, to uint64) {
	b.ring(from, to)
	if m.shared && m.shut.Load() {
		b.NotifyAll()
	}
}

// pushBatch claims up to len(vs) slots of the last segment with one add,
// fills them in order, and repeats in the next segment for the rest.
// Items of one batch are in order; a batch that crosses into the next
// segment may have other producers' items between its two parts.
func (m *Mailbox[T]) pushBatch(vs []T) int {
	n := 0
	for n < len(vs) {
		s := m.tailSeg.Load()
		if s == nil {
			panicZero("Mailbox", "NewMailbox")
		}
		k := uint64(len(vs) - n)
		i := s.claim.Add(k) - k
		if i < mailboxSegSize {
			end := min(i+k, mailboxSegSize)
			for j := i; j < end-1; j++ {
				s.slots[j].val = vs[n]
				storeRel(&s.slots[j].ready, s.lap) // ordered before the last one's publish below
				n++
			}
			s.slots[end-1].val = vs[n]
			n++
			pos := s.base.Load()
			// One Notify for the run where the consumer is one goroutine
			// (a Mailbox), one per item where it is shared (a Backlog).
			from := pos + end - 1
			if m.shared {
				from = pos + i
			}
			b := &m.bells.notEmpty
			publish(&s.slots[end-1].ready, s.lap, &b.mode)
			if b.pending(from, pos+end) {
				m.wake(b, from, pos+end)
			}
			continue
		}
		if i&closedBit != 0 || !m.grow(s) {
			break
		}
	}
	return n
}

// popBatch takes up to len(dst) ready items, in order, across segments.
func (m *Mailbox[T]) popBatch(dst []T) int {
	if checkEnds {
		m.consSide.enter("Mailbox", "consumer")
		defer m.consSide.leave()
	}
	n := 0
	for n < len(dst) {
		if m.readIdx >= mailboxSegSize || m.headSeg == nil {
			if m.advance() != stOK {
				break
			}
		}
		s, i := m.headSeg, m.readIdx
		j := i
		for end := min(mailboxSegSize, i+uint64(len(dst)-n)); j < end && s.slots[j].ready.Load() == s.lap; j++ {
			dst[n] = s.slots[j].val
			n++
		}
		if m.clearSlots {
			for k := i; k < j; k++ {
				var zero T
				s.slots[k].val = zero
			}
		}
		m.readIdx = j
		if j < mailboxSegSize {
			break // the next slot is not ready
		}
	}
	if n > 0 {
		storeRel(&m.head, m.headSeg.base.Load()+m.readIdx)
	}
	return n
}

// indices returns the last claimed position (for a waiter's hint, and
// Len) and the consumer's.
func (m *Mailbox[T]) indices() (tail, head uint64) {
	s := m.tailSeg.Load()
	if s == nil {
		return 0, 0
	}
	c := s.claim.Load()
	if c&closedBit != 0 {
		// Claims after the bit failed and keep nothing: count those
		// before it, once Close has stored how many.
		if x := s.sealed.Load(); x != 0 {
			c = x - 1
		}
	}
	return s.base.Load() + min(c&^closedBit, mailboxSegSize), m.head.Load()
}

// A push never blocks, and the consumer is one goroutine.
func (m *Mailbox[T]) sharedPush() bool { return false }
func (m *Mailbox[T]) sharedPop() bool  { return false }

// One consumer: every Notify of its bell is for it (see "In flight").
func (m *Mailbox[T]) pushInFlight() bool { return false }
func (m *Mailbox[T]) popInFlight() bool  { return false }

func (m *Mailbox[T]) sides() (push, pop *sideGuard, ring string) {
	return nil, &m.consSide, "Mailbox"
}

func (m *Mailbox[T]) pushN(vs []T) int    { return m.pushBatch(vs) }
func (m *Mailbox[T]) popN(dst []T) int    { return m.popBatch(dst) }
func (m *Mailbox[T]) bellsOf() *ringBells { return &m.bells }

// The grid (see Producer and Consumer). A Mailbox is never full: a push
// fails only with ErrClosed, and the waiting pushes never wait.

// TryPush adds v: nil, or ErrClosed after Close; never ErrFull.
func (m *Mailbox[T]) TryPush(v T) error { return statusErr[m.push(v)&7] }

// TryPop removes the oldest ready item: see Consumer.TryPop.
func (m *Mailbox[T]) TryPop() (T, error) {
	v, st := m.pop()
	return v, statusErr[st&7]
}

// Push is TryPush with the done-ctx rule: it never waits.
func (m *Mailbox[T]) Push(ctx context.Context, v T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	return statusErr[m.push(v)&7]
}

// Pop removes the oldest item, waiting while the mailbox is empty: see
// Consumer.Pop.
func (m *Mailbox[T]) Pop(ctx context.Context) (T, error) {
	if err := ctxErr(ctx); err != nil {
		var zero T
		return zero, err
	}
	if v, st := m.pop(); st == stOK {
		return v, nil
	}
	return m.popWait(ctx)
}

// popWait is Pop once its attempts found nothing: popSlow's wait, on
// the Mailbox's own pop.
func (m *Mailbox[T]) popWait(ctx context.Context) (T, error) {
	if checkEnds {
		m.consSide.enter("Mailbox", "consumer")
		defer m.consSide.leave()
	}
	v, st, err := await(ctx, &m.bells.notEmpty, m.bells.park, yieldsBefore(m.sharedPop()), mboxPopCall[T]{m})
	if err == nil && st == stDrained {
		err = ErrClosed
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// mboxPopCall is a Mailbox's blocked Pop, as await drives it.
type mboxPopCall[T any] struct{ m *Mailbox[T] }

func (c mboxPopCall[T]) attempt() (T, status) { return c.m.pop() }
func (c mboxPopCall[T]) inFlight() bool       { return c.m.popInFlight() }
func (c mboxPopCall[T]) position() uint64 {
	tail, _ := c.m.indices()
	return tail &^ closedBit
}

// TryPushBatch adds all of vs, in order, unless the mailbox closes
// meanwhile (ErrClosed), moving a counter once per segment it touches.
func (m *Mailbox[T]) TryPushBatch(vs []T) (int, error) { return tryPushBatch[T](m, vs) }

// PushBatch is TryPushBatch with the done-ctx rule: it never waits.
func (m *Mailbox[T]) PushBatch(ctx context.Context, vs []T) (int, error) {
	return pushBatch[T](ctx, m, vs)
}

// TryPopBatch takes up to len(dst) ready items: see Consumer.TryPopBatch.
func (m *Mailbox[T]) TryPopBatch(dst []T) (int, error) { return tryPopBatch[T](m, dst) }

// PopBatch waits for an item, then takes what is ready: see
// Consumer.PopBatch.
func (m *Mailbox[T]) PopBatch(ctx context.Context, dst []T) (int, error) {
	return popBatch[T](ctx, m, dst)
}

// Close stops intake and wakes the consumer, which drains what was pushed
// before and then gets ErrClosed. Any goroutine may call it; it is
// idempotent. A push racing Close either lands before it (and is popped)
// or returns ErrClosed and keeps nothing.
func (m *Mailbox[T]) Close() {
	m.mu.Lock()
	if m.closed || m.tailSeg.Load() == nil {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.shut.Store(true) // before the seal: see wake
	// No link can follow (grow checks closed under mu), so the last
	// segment stays last. Claims the add made before the bit are served;
	// claims after it see the bit and fail.
	s := m.tailSeg.Load()
	claimed := s.claim.Or(closedBit)
	s.sealed.Store(min(claimed, mailboxSegSize) + 1)
	m.mu.Unlock()
	m.bells.closed()
}

// Len is the number of items in the mailbox, including any a producer
// has claimed and is still writing (a snapshot).
func (m *Mailbox[T]) Len() int {
	t, h := m.indices()
	return int(max(int64(t-h), 0))
}

// Cap is math.MaxInt: a Mailbox has no bound.
func (m *Mailbox[T]) Cap() int {
	if m.tailSeg.Load() == nil {
		return 0
	}
	return math.MaxInt
}

func (m *Mailbox[T]) pushOps() ringOps[T] { return m }
func (m *Mailbox[T]) popOps() ringOps[T]  { return m }

// pushClosed: a Mailbox's batch stops short only once it is closed.
func (m *Mailbox[T]) pushClosed() bool { return true }
