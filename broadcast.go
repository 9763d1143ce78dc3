package knit

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit/internal/emul"
)

// Broadcast is a bounded ring with one producer and any number of
// subscribers, each of which sees every item, in order: the LMAX
// disruptor's shape. The producer waits for the slowest subscriber (the
// disruptor's gating sequence) rather than dropping items; a subscriber
// waits for the producer, or, in a pipeline, for the subscriber it
// follows. Items are not copied from stage to stage: every subscription
// reads the same slot (Pop copies the item out of it, PopFunc works on it
// in place).
//
//	b := knit.NewBroadcast[Event](1024, knit.Park{})
//	parse := b.Subscribe()            // sees every item
//	store := b.SubscribeAfter(parse)  // sees each item once parse has popped it
//	audit := b.Subscribe()            // beside parse, independent of it
//
// A subscription starts at the producer's current position: it sees the
// items pushed after Subscribe returns, never older ones. Items pushed
// while there is no subscription are seen by nobody. A subscription that
// leaves (Unsubscribe) stops gating the producer at once; a subscription
// that followed it then follows whatever it followed. A stage that hands
// results to the stages after it writes them into the item in place,
// with PopFunc: its cursor moves only when its callback returns.
//
// The producer side (TryPush, Push, the batch calls, Close) belongs to one
// goroutine at a time, as an SPSC's producer end does; so does each
// Subscription. Subscribe and SubscribeAfter may be called from anywhere.
// Blocking calls spin for the ring's budget and then park, with no wake
// while nobody waits; the Park given to NewBroadcast applies to both
// sides. To watch a subscription with an Event of your own instead (the
// producer, or the stage a follower follows, pushes or pops, then
// Notifies), keep the Broadcast fenced with [KeepFenced] when it is made,
// before the producer starts; otherwise the Event can miss the item.
// Close is lossless: each subscription drains what it has not yet seen,
// then gets ErrClosed. Close is a producer call, with SPSC's rule: from
// the goroutine that pushes, or after its last call; a subscriber may not
// close (SPSCProducer.Close says why).
//
// Memory: Cap slots of T, plus under 1 KiB of padded indices and
// doorbells (1.5 KiB with arm64's 128-byte lines), and two lines per
// subscription. Where T holds pointers, a slot is cleared once every
// subscription has passed it: by the last one to pass it when that one
// can tell it is the last (it looks at the others' positions when it
// catches up with them, and at most once every 64 items while it is
// ahead), otherwise by the producer when it next reloads the
// subscriptions' positions, which it does before reusing a slot. So
// passed items are released at once in the common cases and never
// outlive the next lap.
//
// The zero Broadcast is not a ring; create one with NewBroadcast.
type Broadcast[T any] struct {
	_ [CacheLineSize]byte // keep the producer's line off whatever precedes the ring

	// The producer's line: tail is read by every subscription that has
	// caught up; the rest is the producer's own, or read-mostly.
	tail    atomic.Uint64 // next position to fill, | closedBit once closed; stored by the producer only
	gate    uint64        // the producer's last view of the slowest cursor; cursors only grow, so it only under-reports room
	cleared uint64        // slots below this position were cleared by the producer (or never held what a subscriber may read)
	// rootFollowers counts subscriptions that follow, but whose leaders
	// have all left: they wait on stage, yet what they wait for is the
	// tail, so while it is non-zero the producer rings stage too. Written
	// under mu, loaded by every push (hence on this line, which the
	// producer owns anyway).
	rootFollowers atomic.Int32
	_             [CacheLineSize - 28]byte

	// bells.notEmpty: the tail moved; subscriptions that follow nobody
	// wait here, the producer rings it. bells.notFull: a subscription
	// that held the slot the producer needs moved; the producer waits
	// here. stage.notEmpty: a subscription that others follow moved;
	// followers wait here (stage.notFull is unused). Each bell sits on
	// lines of its own (ringBells' padding).
	bells ringBells
	stage ringBells

	// subs is the set of live subscriptions, replaced (never changed in
	// place) under mu; the producer reads it when it reloads the gate,
	// subscriptions when they look whether they may clear a slot.
	subs atomic.Pointer[[]*Subscription[T]]
	mu   sync.Mutex // Subscribe, SubscribeAfter, Unsubscribe

	prodSide sideGuard // the producer's guard: empty, unless built with knit_checkends

	// Read-only after construction.
	buf        []T
	mask       uint64 // len(buf)-1: buf's length is a power of two
	last       uint64 // capacity-1: the producer has room while tail-gate <= last
	clearSlots bool   // T holds pointers
}

// Subscription is one subscriber of a Broadcast: the consumer calls of a
// ring (TryPop, Pop, the batch calls) over every item the
// Broadcast's producer pushes after it subscribed, a Select case
// through PopCase, and a range with [All], which ends once the Broadcast
// is closed and this subscription drained (or it left). One goroutine at
// a time uses it; Unsubscribe belongs to that goroutine too (cancel its
// ctx to get it out of a blocked Pop).
type Subscription[T any] struct {
	_ [CacheLineSize]byte

	// The subscriber's line: cursor is read by the producer when it
	// reloads the gate and by followers; the rest is the subscriber's own
	// (followers is written under mu, rarely).
	cursor    atomic.Uint64 // next position to take; stored by the subscriber only (and by Subscribe, before the subscriber has it)
	avail     uint64        // the subscriber's last view of its barrier, never below cursor; only under-reports items
	othersMin uint64        // a lower bound on every other subscription's position, for clearing; see clearPassed
	nextLook  uint64        // while ahead of another subscription, the position at which it may look again
	// followers counts live subscriptions whose first live leader is this
	// one; while non-zero a pop rings stage. Written under the
	// Broadcast's mu.
	followers atomic.Int32
	_         [CacheLineSize - 36]byte

	// Read-mostly: followers' barriers read left and up.
	left atomic.Bool      // Unsubscribe ran: followers look past this one
	up   *Subscription[T] // the subscription this one follows, nil for the producer; fixed
	b    *Broadcast[T]
	side sideGuard // empty, unless built with knit_checkends
}

// NewBroadcast returns a Broadcast holding capacity items (its slot array
// is rounded up to a power of two; Push reports full at capacity), and no
// subscription; park says how blocked calls wait (Park{}: the
// default). It panics if capacity is < 1 or > MaxCapacity, or if the
// slots would take more than 1 TiB.
func NewBroadcast[T any](capacity int, park Park) *Broadcast[T] {
	c := roundCapacity("Broadcast", capacity, sizeOf[T]())
	b := &Broadcast[T]{buf: make([]T, c), mask: uint64(c - 1), last: uint64(capacity - 1)}
	b.clearSlots = holdsPointers(reflect.TypeFor[T]())
	b.bells.park = ringPark(park)
	b.stage.park = b.bells.park
	b.subs.Store(new([]*Subscription[T]))
	return b
}

// # Why a subscription's start is safe
//
// A new subscription must never read a slot the producer has reused. The
// producer reuses the slot of position p once its gate, the least cursor
// it saw, passed p. Subscribe stores a provisional cursor (the tail, T0),
// publishes the subscription in subs (S1, sync/atomic), loads the tail
// again (S2, T1) and moves the cursor there. The producer, when it reloads
// the gate, fences (so its last store of the tail is visible), loads subs
// (G1) and the cursors. If G1 saw the new subscription, its gate is at
// most T0 <= T1. If not, G1 came before S1 in the order of sync/atomic
// operations, so S2 read a tail at least the one the producer had stored
// before G1, which bounds the gate it computed: gate <= T1 again. Every
// gate is at most T1, so no slot at or past T1 is reused before the
// subscription passes it. Followers start at the tail too (not at their
// leader's cursor, which moves on its own and could be past every gate
// the producer computed before it saw the follower).

// Subscribe returns a new subscription that sees every item pushed from
// now on. Any goroutine may call it, at any time; after Close, the
// subscription is drained at once.
func (b *Broadcast[T]) Subscribe() *Subscription[T] { return b.subscribe(nil) }

// SubscribeAfter returns a new subscription that sees every item pushed
// from now on, each only once leader has popped it (or left): a stage
// behind leader in a pipeline. It panics if leader belongs to another
// Broadcast. Followers of one leader, and subscriptions that follow
// nobody, run beside each other; the producer waits for the slowest of
// all.
func (b *Broadcast[T]) SubscribeAfter(leader *Subscription[T]) *Subscription[T] {
	if leader == nil || leader.b != b {
		panic("knit: Broadcast.SubscribeAfter of a subscription to another Broadcast")
	}
	return b.subscribe(leader)
}

func (b *Broadcast[T]) subscribe(up *Subscription[T]) *Subscription[T] {
	if len(b.buf) == 0 {
		panicZero("Broadcast", "NewBroadcast")
	}
	s := &Subscription[T]{b: b, up: up}
	b.mu.Lock()
	defer b.mu.Unlock()
	t0 := b.tail.Load() &^ closedBit
	s.cursor.Store(t0) // provisional: a gate reload that sees s now holds the producer at t0
	list := append(slices.Clone(*b.subs.Load()), s)
	b.subs.Store(&list)              // S1
	t1 := b.tail.Load() &^ closedBit // S2
	s.cursor.Store(t1)
	s.avail = t1
	b.recount()
	// The producer may be waiting on the provisional cursor.
	b.bells.notFull.Notify(1)
	return s
}

// Unsubscribe leaves the Broadcast: the producer stops waiting for this
// subscription at once, followers follow its leader (or the producer),
// and its own calls return ErrClosed from now on. It is idempotent, and
// belongs to the subscriber's goroutine (or to any, once that one has
// stopped).
func (s *Subscription[T]) Unsubscribe() {
	if checkEnds {
		s.side.enter("Broadcast", "subscriber")
		defer s.side.leave()
	}
	b := s.b
	if b == nil {
		panicZero("Subscription", "Broadcast.Subscribe")
	}
	b.mu.Lock()
	if s.left.Load() {
		b.mu.Unlock()
		return
	}
	list := slices.DeleteFunc(slices.Clone(*b.subs.Load()), func(x *Subscription[T]) bool { return x == s })
	b.subs.Store(&list)
	s.left.Store(true)
	b.recount()
	b.mu.Unlock()
	s.avail = s.cursor.Load() // the next pop misses and sees left
	// Followers blocked on this one look past it; the counts above came
	// first, so a follower that now waits for another subscription (or
	// the producer) is rung by it: see "Why a follower's wake is not
	// lost".
	b.stage.notEmpty.NotifyAll()
	b.bells.notFull.Notify(1) // the producer may have been waiting for this one
}

// recount recomputes, under mu, which live subscription each follower
// now waits for (its first live leader) and how many followers wait for
// the producer itself.
func (b *Broadcast[T]) recount() {
	list := *b.subs.Load()
	roots := int32(0)
	for _, s := range list {
		n := int32(0)
		for _, f := range list {
			if f.liveLeader() == s {
				n++
			}
		}
		s.followers.Store(n)
		if s.up != nil && s.liveLeader() == nil {
			roots++
		}
	}
	if old := b.rootFollowers.Swap(roots); roots > old {
		// The producer's tail stores may be relaxed, and it loads
		// rootFollowers after them: taking its bell to fenced (the
		// asymmetric barrier, if it was relaxed) makes every store it
		// made before it read the old count visible before the followers
		// re-check. See "Why a follower's wake is not lost".
		b.bells.notEmpty.fence()
	}
}

// liveLeader is the first leader of s that has not left, nil for the
// producer.
func (s *Subscription[T]) liveLeader() *Subscription[T] {
	up := s.up
	for up != nil && up.left.Load() {
		up = up.up
	}
	return up
}

// # Why a follower's wake is not lost
//
// A follower waits on stage for its barrier: its first live leader's
// cursor, or the tail once every leader has left. It registers on stage,
// reloads its barrier and sleeps (popSlow, Select). A leader publishes
// its cursor with publish2, whose second bell is stage, and then loads
// its followers count and, if that is non-zero, stage's waiter count:
// those loads are stage's P3 in the bell-mode argument (bell.go), which
// therefore gives, for a follower counted before it registered: the
// follower's reload sees the cursor, or the leader sees the follower
// registered. Counts change under mu (recount), and a follower counted
// only afterwards was registered before: Unsubscribe rings stage after
// recount, so such a follower wakes and registers again, now counted.
//
// A follower whose leaders all left waits for the tail, but on stage. The
// producer loads rootFollowers after each publish of the tail and, if it
// is non-zero, fences and rings stage. Its publish follows notEmpty's
// mode, not stage's, so recount, when the count rises, fences notEmpty
// before Unsubscribe rings stage: the bell-mode argument for notEmpty,
// with the load of rootFollowers as P3 and the count's rise standing
// before the follower's registration, gives that the follower's reload
// sees the tail, or the producer sees the count and then (after its
// fence) the registration.

// push is the producer's attempt. The slot is free (every cursor passed
// its previous item), so nobody reads it until the release store of
// tail publishes it.
func (b *Broadcast[T]) push(v T) status {
	if checkEnds {
		b.prodSide.enter("Broadcast", "producer")
		defer b.prodSide.leave()
	}
	t := b.tail.Load() // our own store
	i := t & b.mask
	// One compare covers a stale gate and the closed bit; the other
	// fails only on a zero ring.
	if t-b.gate > b.last || i >= uint64(len(b.buf)) {
		if st := b.pushMiss(t); st != stOK {
			return st
		}
	}
	b.buf[i] = v
	// Release: pairs with the subscriptions' acquire load of tail (and
	// followers' of their leader's cursor, which their leader stored
	// after its own acquire of tail).
	publish(&b.tail, t+1, &b.bells.notEmpty.mode)
	b.pushed(t, 1)
	return stOK
}

// pushMiss tells why push's fast check failed: closed, never made, full,
// or only the gate was stale (stOK).
func (b *Broadcast[T]) pushMiss(t uint64) status {
	if t&closedBit != 0 {
		return stClosed
	}
	if len(b.buf) == 0 {
		panicZero("Broadcast", "NewBroadcast")
	}
	if b.regate(t); t-b.gate > b.last {
		return stFull
	}
	return stOK
}

// regate reloads the gate, the least cursor of the live subscriptions (t,
// the tail, when there are none), and clears the slots it now knows
// every subscription has passed.
func (b *Broadcast[T]) regate(t uint64) {
	storeLoadFence() // our last store of tail before the load of subs: see "Why a subscription's start is safe"
	g := t
	for _, s := range *b.subs.Load() {
		// Acquire: pairs with the subscription's release of its cursor,
		// so it has read (and cleared) the slots below it.
		if c := s.cursor.Load(); int64(c-g) < 0 {
			g = c
		}
	}
	b.gate = g
	if b.clearSlots && int64(g-b.cleared) > 0 {
		// Every slot in [cleared, g) was passed by everyone and is not
		// yet reused: the producer reuses a slot only below gate+cap,
		// and cleared is at least every earlier gate.
		b.clearRange(b.cleared, g)
		b.cleared = g
	}
}

// clearRange zeroes the slots of positions [from, to), at most a lap.
func (b *Broadcast[T]) clearRange(from, to uint64) {
	if to-from > b.mask {
		from = to - b.mask - 1
	}
	i, j := from&b.mask, to&b.mask
	if i < j || from == to {
		clear(b.buf[i:j])
		return
	}
	clear(b.buf[i:])
	clear(b.buf[:j])
}

// pushed rings the subscriptions after positions [t, t+n) were published.
func (b *Broadcast[T]) pushed(t, n uint64) {
	ne := &b.bells.notEmpty
	ne.NotifyAll() // every waiting subscription wants every item
	if b.rootFollowers.Load() != 0 {
		storeLoadFence() // the tail before the load of stage's waiters
		b.stage.notEmpty.NotifyAll()
	}
	if relaxDue(t, t+n) {
		ne.maybeRelax(t + n)
	}
}

// pushBatch is push for a prefix of vs, with one store of the tail.
func (b *Broadcast[T]) pushBatch(vs []T) int {
	if checkEnds {
		b.prodSide.enter("Broadcast", "producer")
		defer b.prodSide.leave()
	}
	t := b.tail.Load()
	if t&closedBit != 0 || len(vs) == 0 {
		return 0
	}
	if len(b.buf) == 0 {
		panicZero("Broadcast", "NewBroadcast")
	}
	room := int64(b.gate + b.last + 1 - t)
	if room < int64(len(vs)) {
		b.regate(t)
		room = int64(b.gate + b.last + 1 - t)
	}
	n := uint64(min(int64(len(vs)), max(room, 0)))
	if n == 0 {
		return 0
	}
	i := t & b.mask
	k := copy(b.buf[i:], vs[:n])
	copy(b.buf, vs[k:n])
	publish(&b.tail, t+n, &b.bells.notEmpty.mode) // release, as in push
	b.pushed(t, n)
	return int(n)
}

// pop is the subscriber's attempt. The slot is read (and cleared, if it
// may be) before the release store of the cursor tells the producer and
// followers that this subscription is done with it.
func (s *Subscription[T]) pop() (T, status) {
	if checkEnds {
		s.side.enter("Broadcast", "subscriber")
		defer s.side.leave()
	}
	h := s.cursor.Load() // our own store
	if h == s.avail {
		if st := s.popMiss(h); st != stOK {
			var zero T
			return zero, st
		}
	}
	b := s.b
	v := b.buf[h&b.mask]
	if b.clearSlots {
		s.clearPassed(h, h+1)
	}
	s.moved(h, h+1)
	return v, stOK
}

// popMiss tells why pop's fast check failed: nothing ready, drained, left,
// never made, or only the cached barrier was stale (stOK).
func (s *Subscription[T]) popMiss(h uint64) status {
	b := s.b
	if b == nil {
		panicZero("Subscription", "Broadcast.Subscribe")
	}
	if s.left.Load() {
		return stDrained
	}
	if a := s.barrier(); int64(a-h) > 0 {
		s.avail = a
		return stOK
	}
	// Acquire, as in barrier: a closed bit seen here comes after every
	// item below it.
	if t := b.tail.Load(); t&closedBit != 0 && h == t&^closedBit {
		return stDrained
	}
	return stEmpty
}

// barrier is how far this subscription may read: its first live leader's
// cursor, or the tail. Acquire loads: pairs with the release store of
// that cursor (or of the tail), so the slots below it are filled, and a
// leader has finished with them.
func (s *Subscription[T]) barrier() uint64 {
	if up := s.liveLeader(); up != nil {
		return up.cursor.Load()
	}
	return s.b.tail.Load() &^ closedBit
}

// moved publishes the cursor after positions [h, to) were taken, and
// rings whoever may be waiting for it: the producer, if this subscription
// held the slot it needs, and followers.
func (s *Subscription[T]) moved(h, to uint64) {
	b := s.b
	nf, st := &b.bells.notFull, &b.stage.notEmpty
	// Release: pairs with the producer's and followers' acquire loads of
	// the cursor; the slots were read (and cleared) before it, and no
	// load passes a later store on amd64 or an STLR on arm64.
	publish2(&s.cursor, to, &nf.mode, &st.mode)
	if uint64(nf.waiters.Load())|emul.Pending() != 0 {
		b.gating(h)
	}
	if s.followers.Load() != 0 {
		st.NotifyAll()
	}
	if relaxDue(h, to) {
		nf.maybeRelax(to)
		st.maybeRelax(to)
	}
}

// gating wakes the producer if it waits while a subscription's old
// cursor h held the slot it needs: a producer blocked at tail t waits
// for every cursor to pass t-cap, so a subscription already past it
// does not wake it for nothing (each such wake would be a park and an
// unpark per item while a fast subscription catches up). The producer
// registered before it slept with its tail stored, so a registration this
// load sees comes with that tail, or a later one, which only makes the
// test say "wake" more often.
func (b *Broadcast[T]) gating(h uint64) {
	emul.StoreLoadFence()
	nf := &b.bells.notFull
	if nf.waiters.Load() == 0 {
		return
	}
	if t := b.tail.Load() &^ closedBit; t-h > b.last {
		nf.notify(1, false)
	}
}

// clearPassed clears the slots of positions [h, to), which this
// subscription has just read, that every other subscription has passed,
// before the cursor moves past them (after that the producer may reuse
// them). othersMin is a lower bound on where every other subscription
// is, including any that subscribe later: it is the least of their
// cursors and of the tail, loaded before subs (a subscription missing
// from that load publishes itself later and then starts at a later
// tail). It is reloaded when h reaches it; while this subscription is
// ahead of another, at most once every relaxCheck positions, so a
// subscription in the lead does not load every other cursor per item.
func (s *Subscription[T]) clearPassed(h, to uint64) {
	if int64(h-s.othersMin) >= 0 {
		if int64(h-s.nextLook) < 0 {
			return
		}
		b := s.b
		m := b.tail.Load() &^ closedBit
		for _, o := range *b.subs.Load() {
			if c := o.cursor.Load(); o != s && int64(c-m) < 0 {
				m = c
			}
		}
		s.othersMin = m
		if int64(h-m) >= 0 {
			s.nextLook = h + relaxCheck
			return
		}
	}
	if end := s.othersMin; int64(to-end) > 0 {
		to = end
	}
	s.b.clearRange(h, to)
}

// popBatch is pop for up to len(dst) items, with one store of the cursor.
func (s *Subscription[T]) popBatch(dst []T) int {
	if checkEnds {
		s.side.enter("Broadcast", "subscriber")
		defer s.side.leave()
	}
	if len(dst) == 0 {
		return 0
	}
	h := s.cursor.Load()
	if s.avail-h < uint64(len(dst)) {
		if s.b == nil {
			panicZero("Subscription", "Broadcast.Subscribe")
		}
		if s.left.Load() {
			return 0
		}
		if a := s.barrier(); int64(a-s.avail) > 0 {
			s.avail = a
		}
	}
	n := min(uint64(len(dst)), s.avail-h)
	if n == 0 {
		return 0
	}
	b := s.b
	i := h & b.mask
	k := copy(dst[:n], b.buf[i:])
	copy(dst[k:n], b.buf)
	if b.clearSlots {
		s.clearPassed(h, h+n)
	}
	s.moved(h, h+n)
	return int(n)
}

func (b *Broadcast[T]) indices() (tail, head uint64) { return b.tail.Load(), b.gate }

// One producer, and one goroutine per Subscription: no side is shared.
func (b *Broadcast[T]) sides() (push, pop *sideGuard, ring string) {
	return &b.prodSide, nil, "Broadcast"
}

func (s *Subscription[T]) sides() (push, pop *sideGuard, ring string) {
	return nil, &s.side, "Broadcast"
}

func (b *Broadcast[T]) sharedPush() bool    { return false }
func (b *Broadcast[T]) sharedPop() bool     { return false }
func (s *Subscription[T]) sharedPush() bool { return false }
func (s *Subscription[T]) sharedPop() bool  { return false }

// One producer and one reader a subscription: nothing is ever in flight.
func (b *Broadcast[T]) pushInFlight() bool    { return false }
func (b *Broadcast[T]) popInFlight() bool     { return false }
func (s *Subscription[T]) pushInFlight() bool { return false }
func (s *Subscription[T]) popInFlight() bool  { return false }

func (s *Subscription[T]) indices() (tail, head uint64) {
	if s.b == nil {
		return 0, 0
	}
	return s.barrier(), s.cursor.Load()
}

// The producer and a subscription are each a ringOps: each side
// implements the other's calls only to satisfy the interface; Select
// never makes them.
func (b *Broadcast[T]) pop() (T, status)    { panic("knit: pop on a Broadcast's producer side") }
func (b *Broadcast[T]) popN([]T) int        { panic("knit: pop on a Broadcast's producer side") }
func (b *Broadcast[T]) pushN(vs []T) int    { return b.pushBatch(vs) }
func (b *Broadcast[T]) bellsOf() *ringBells { return &b.bells }
func (s *Subscription[T]) push(T) status    { panic("knit: push on a Broadcast subscription") }
func (s *Subscription[T]) pushN([]T) int    { panic("knit: push on a Broadcast subscription") }
func (s *Subscription[T]) pushClosed() bool { panic("knit: push on a Broadcast subscription") }
func (b *Broadcast[T]) pushClosed() bool    { return b.tail.Load()&closedBit != 0 }
func (s *Subscription[T]) popN(dst []T) int { return s.popBatch(dst) }
func (b *Broadcast[T]) popEmpty() status    { panic("knit: pop on a Broadcast's producer side") }

func (b *Broadcast[T]) pushOps() ringOps[T]   { return b }
func (s *Subscription[T]) popOps() ringOps[T] { return s }

// popEmpty: see ringOps; popMiss's stOK (items came since) is stEmpty.
func (s *Subscription[T]) popEmpty() status {
	if st := s.popMiss(s.cursor.Load()); st != stOK {
		return st
	}
	return stEmpty
}

// bellsOf is the doorbell this subscription waits on: stage for a
// follower (whatever its leaders do later), notEmpty otherwise.
func (s *Subscription[T]) bellsOf() *ringBells {
	if s.up != nil {
		return &s.b.stage
	}
	return &s.b.bells
}

// The grid (see Producer and Consumer): the Broadcast is the producer,
// each Subscription a consumer.

// TryPush adds v if every subscription has room: see Producer.TryPush.
// ErrFull means the slowest subscription is a lap behind.
func (b *Broadcast[T]) TryPush(v T) error { return statusErr[b.push(v)&7] }

// Push adds v, waiting while the slowest subscription is a lap behind:
// see Producer.Push.
func (b *Broadcast[T]) Push(ctx context.Context, v T) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if b.push(v) == stOK {
		return nil
	}
	return pushSlow[T](b, &b.bells, ctx, v)
}

// TryPushBatch adds a prefix of vs, as much as every subscription has
// room for, with one store of the tail: see Producer.TryPushBatch.
func (b *Broadcast[T]) TryPushBatch(vs []T) (int, error) { return tryPushBatch[T](b, vs) }

// PushBatch adds all of vs, waiting for room: see Producer.PushBatch.
func (b *Broadcast[T]) PushBatch(ctx context.Context, vs []T) (int, error) {
	return pushBatch[T](ctx, b, vs)
}

// Close stops intake and wakes every waiter; every subscription drains
// what it has not yet seen, then gets ErrClosed. It is idempotent, and a
// producer call: from the goroutine that pushes, or after its last call
// (SPSCProducer.Close says why).
func (b *Broadcast[T]) Close() {
	if checkEnds {
		b.prodSide.closing("Broadcast")
		defer b.prodSide.leave()
	}
	t := b.tail.Load()
	if t&closedBit != 0 {
		return
	}
	storeRel(&b.tail, t|closedBit)
	storeLoadFence() // the closed bit before the loads of the waiter counts
	b.bells.closed()
	b.stage.notEmpty.NotifyAll()
}

// Len is how many pushed items the slowest subscription has not taken (a
// snapshot): what stands between the producer and a full ring.
func (b *Broadcast[T]) Len() int {
	list := b.subs.Load()
	if list == nil {
		return 0
	}
	t := b.tail.Load() &^ closedBit
	g := t
	for _, s := range *list {
		if c := s.cursor.Load(); int64(c-g) < 0 {
			g = c
		}
	}
	return ringLen(t, g, b.capacity())
}

// Cap is the ring's capacity.
func (b *Broadcast[T]) Cap() int { return b.capacity() }

// capacity is the capacity asked for, 0 for a Broadcast no constructor
// made.
func (b *Broadcast[T]) capacity() int {
	if len(b.buf) == 0 {
		return 0
	}
	return int(b.last + 1)
}

// TryPop takes the next item this subscription has not seen, if it is
// ready: ErrEmpty, or ErrClosed once the Broadcast is closed and this
// subscription has seen everything (or has left).
func (s *Subscription[T]) TryPop() (T, error) {
	v, st := s.pop()
	return v, statusErr[st&7]
}

// Pop takes the next item, waiting until it is ready: see Consumer.Pop.
func (s *Subscription[T]) Pop(ctx context.Context) (T, error) {
	if err := ctxErr(ctx); err != nil {
		var zero T
		return zero, err
	}
	if v, st := s.pop(); st == stOK {
		return v, nil
	}
	return popSlow[T](s, s.bellsOf(), ctx)
}

// PopFunc takes the next item as Pop does, but in place: f gets a
// pointer to the item in its slot, and the subscription moves past it
// (its followers see it, the producer may reuse the slot) only when f
// returns. What f writes into the item is what the followers read: the
// disruptor's stages, each handing the next its results in the event
// itself. f may write only where no other subscription reads the item at
// the same time, that is when every other subscription follows this one
// (directly or through others); f must not keep the pointer. It returns
// nil once f ran, ErrClosed once drained, or ctx.Err().
//
// If f panics, the panic goes on to PopFunc's caller and the item counts
// as taken: the subscription moves past it as if f had returned, so the
// followers see it as f left it, and a caller that recovers gets the next
// item from its next call rather than the same one again.
func (s *Subscription[T]) PopFunc(ctx context.Context, f func(*T)) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if checkEnds {
		s.side.enter("Broadcast", "subscriber")
		defer s.side.leave()
	}
	if err := s.await(ctx); err != nil {
		return err
	}
	b := s.b
	h := s.cursor.Load()
	// Deferred, so that a panicking f does not leave the cursor on an item
	// that would then come back forever, holding up the followers and,
	// through them, the producer. Runs before the side guard's leave.
	defer s.passed(h)
	f(&b.buf[h&b.mask])
	return nil
}

// passed moves the subscription past position h, which PopFunc's
// callback has had.
func (s *Subscription[T]) passed(h uint64) {
	if s.b.clearSlots {
		s.clearPassed(h, h+1)
	}
	s.moved(h, h+1)
}

// ready reports whether the next item is ready (stOK), or why not.
func (s *Subscription[T]) ready() status {
	if h := s.cursor.Load(); h == s.avail {
		return s.popMiss(h)
	}
	return stOK
}

// await waits until the next item is ready: popSlow's wait (ringwait.go),
// with ready for the attempt (PopFunc takes the item itself once it is).
func (s *Subscription[T]) await(ctx context.Context) error {
	bs := s.bellsOf()
	_, st, err := await(ctx, &bs.notEmpty, bs.park, 0, subCall[T]{s})
	if err == nil && st == stDrained {
		err = ErrClosed
	}
	return err
}

// subCall is a Subscription's blocked wait for its next item.
type subCall[T any] struct{ s *Subscription[T] }

func (c subCall[T]) attempt() (struct{}, status) { return struct{}{}, c.s.ready() }
func (c subCall[T]) position() uint64            { return c.s.barrier() }
func (c subCall[T]) inFlight() bool              { return false } // one reader, one producer

// TryPopBatch takes up to len(dst) ready items with one store of the
// cursor: see Consumer.TryPopBatch.
func (s *Subscription[T]) TryPopBatch(dst []T) (int, error) { return tryPopBatch[T](s, dst) }

// PopBatch waits for an item, then takes what is ready: see
// Consumer.PopBatch.
func (s *Subscription[T]) PopBatch(ctx context.Context, dst []T) (int, error) {
	return popBatch[T](ctx, s, dst)
}

// Len is how many pushed items this subscription has yet to take,
// including any its leader still holds (a snapshot); 0 once it left.
func (s *Subscription[T]) Len() int {
	if s.b == nil || s.left.Load() {
		return 0
	}
	return ringLen(s.b.tail.Load(), s.cursor.Load(), s.b.capacity())
}

// Cap is the Broadcast's capacity.
func (s *Subscription[T]) Cap() int {
	if s.b == nil {
		return 0
	}
	return s.b.capacity()
}
