package pool

import (
	"context"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/sched"
)

// Call streams. A caller that makes many calls before its first
// Wait,
//
//	for i, x := range xs { fs[i] = task.Call(x) }
//	for i := range fs { out[i], err = fs[i].Wait(ctx) }
//
// paid, per call, what CallBatch pays per group: a queue push and pop
// (two locked instructions and a slot on the producer's side, one on the
// consumer's), a free-list ring pop and push for the call's slot, and the
// worker's interface call and deferred recover. Those calls travel as
// CallBatch's do, with no change to the caller's code: a task keeps an
// open stream, a packet of calls side by side that Call appends to, and
// the stream is queued as a job only when it needs a runner. A runner
// runs the stream's calls as they are appended and completes each future
// as its call returns; when it catches up with the callers it yields
// once, as an idle worker does before it parks (worker.loop), so that a
// caller queued on its P can append the next call, and only then leaves.
// The next Call finds no runner and queues the stream again. So a burst
// of calls costs a queue entry and a doorbell per runner.
//
// A stream runs in one of two ways, chosen when a caller finds it with
// no runner, by the pool's size at that moment, and kept until its last
// runner leaves:
//
//   - single (a pool of one worker): one runner, which takes the calls in
//     order with no atomic operation of its own. Per call that leaves the
//     append's CAS and its fenced store of the fill, the runner's Or that
//     publishes the result, and the Wait's CAS that takes it.
//   - shared (several workers): up to one runner per worker (and per
//     call the stream holds), each claiming the next call with a CAS of
//     st, so that a call never waits behind a long one while a worker
//     idles, and calls that wait for each other can run side by side
//     (TestParallelWake). A Call that finds every runner inside a call
//     (runners == busy), or a runner that claims a call with more behind
//     it and finds the same, queues one more runner; a runner leaves only
//     when no call is left to claim. A shared runner's queue entry is a
//     streamEntry, recycled as it starts, that names the use (epoch) it
//     was queued for: one that starts after its stream was reused does
//     nothing, so runners still queued when a stream's last call was
//     claimed do not hold up its reuse.
//
// The stream's word, st, holds the epoch (stEpoch and up: bumped when the
// stream is reused, so that a caller that read the word in an earlier use
// cannot CAS it), the number of calls reserved (tail), the next call to
// claim (head: kept by shared runners; a single runner keeps its place
// itself and stores it there when it leaves), and:
//
//	stActive   the stream has a runner: its job is queued or running, or
//	           the caller that set it is about to queue it
//	stPending  a caller is queueing a runner it counted: no other caller
//	           appends until it has
//	stShared   the runners are shared ones; then runners counts them
//	           (queued or started), started those out of their queue, and
//	           busy those inside a call
//
// Call reserves the next call with a CAS on st (tail+1, and the runner it
// must queue, if any), writes the argument, marks the call filled with a
// sync/atomic store on its result word (the filled bit), and rings
// s.filling, which costs a load unless a runner waits there (see
// awaitFill). Then, if it counted a runner, it queues it (p.submit,
// which rings a worker); stPending stands until then, and a Call that
// finds it set queues its call on its own: so a call appended to a
// stream was accepted exactly when its stream's runner was, and a pool
// that refuses the job (closed) refuses only the caller's own call, which
// is rolled back (a shared helper's call stays: a runner is there to run
// it). Call appends nothing once the pool is closing (a runner would run
// it, and Close wait for it).
//
// Why no call is left behind. A runner leaves only by a CAS of st whose
// old value has no call left to take (tail equal to the next call it
// would run); a reservation is a CAS of the same word. In their order
// either the reservation comes first, the leave's CAS fails and the
// runner sees the new tail, or the leave comes first and the reserving
// caller finds the runners it counts on gone and queues one. A shared
// runner counts itself busy in the CAS that claims a call and idle again
// by a CAS before it leaves, so a caller that counts on an idle runner
// has one that must still claim its call. A runner that claims a
// reserved call not yet filled waits for it on s.filling, by the Event's
// protocol: it registers and re-checks the word, the caller stores the
// flag and then rings; so either the re-check sees the fill or the ring
// finds the runner registered.
//
// Nested waits. A call that waits on its own pool (Future.Wait, Group.Wait,
// Map, a full queue) while its stream's later calls wait for its runner
// would wait for ever if it waited on one of them and nobody else ran
// them. So, as for a CallBatch packet, before a worker waits or runs
// anything nested inside a stream's call it settles: it runs the stream's
// calls appended so far itself, nested, and leaves the stream, so that
// later calls queue a runner again; the call below then ends without
// going back to the stream.
//
// Reuse. A stream holds streamCap calls. When it is full the next Call
// opens another (under the task's mutex, once per streamCap calls), and
// the full one goes to the task's retired ring. A retired stream is
// reused once it has no runner (or only shared runners still queued,
// which find it reused when they start) and the future of every one of
// its calls has been taken: each taken result word has moved to the next
// generation, its filled flag cleared by the taking Wait once it is done
// with the result (see filled), which a scan of the words sees, so
// neither Wait nor WaitAll touches a counter of the stream. A stream a
// Future was never waited on stays out of reuse and goes to the collector
// with its last Future. At most maxStreams streams of a task are open or
// not yet run (shared: claimed) to their end; past that Call queues its
// call on its own, which blocks while the queue is full: a stream's calls
// are not counted against Config.QueueSize, but there are at most
// maxStreams*streamCap of them.

// Fields of stream.st.
const (
	stTail      = 1<<8 - 1 // calls reserved
	stHeadOne   = 1 << 8
	stHead      = stTail * stHeadOne // next call to claim (see above)
	stActive    = 1 << 16
	stPending   = 1 << 17
	stShared    = 1 << 18
	stRunnerOne = 1 << 19
	stRunners   = stTail * stRunnerOne // shared runners
	stBusyOne   = 1 << 27
	stBusy      = stTail * stBusyOne // shared runners inside a call
	stStartOne  = 1 << 35
	stStarted   = stTail * stStartOne // shared runners out of their queue
	stEpoch     = 1 << 43
)

// maxRunners is how many shared runners s may have: one per worker, and
// no more than it holds calls.
func (s *callStream[In, Out]) maxRunners() uint64 {
	return uint64(min(int64(len(s.p.set.Load().active)), s.n))
}

// head returns the head field of st.
func head(st uint64) int64 { return int64(st & stHead / stHeadOne) }

// filled is the result word's flag for a stream call whose argument is
// written: set by the calling goroutine with a sync/atomic store after
// the reservation, kept by the result's transitions (an Or, and CASes that
// add flags). The Wait that takes the value moves the word to the next
// generation with filled still set, and clears it with a release store
// once it has read and cleared the result (result.claim): only then may
// the stream be reused. The other bits are future.go's.
const filled = 8

// maxStreams is how many streams of a task may be open or not yet run to
// their end: the open one, and one full stream still running.
const maxStreams = 2

// minStreamCap is the smallest queue for which Call streams: a stream of
// fewer calls would be opened, under the task's mutex, every few calls.
const minStreamCap = 8

// streamHome is the owner of a stream's results: its event and pool.
// Taking a value recycles nothing (see "Reuse" above).
type streamHome struct {
	ev knit.Event // where Waits on the stream's calls sleep
	p  *Pool      // read-only
}

func (h *streamHome) recycle(int64)      {}
func (h *streamHome) event() *knit.Event { return &h.ev }
func (h *streamHome) pool() *Pool        { return h.p }

// callStream is a task's packet of calls appended by Call; see above.
type callStream[In, Out any] struct {
	_  [knit.CacheLineSize]byte
	st atomic.Uint64
	// filling is where a runner waits for a reserved call's caller to
	// write it (awaitFill); the caller rings it after the fill. Its
	// waiter count, which that ring loads, shares st's line, which the
	// caller has just written.
	filling knit.Event
	_       [knit.CacheLineSize]byte

	streamHome

	// gen is the generation of every call's result word in this use;
	// written under the task's mutex when the stream is reused.
	gen uint64
	// uses counts the stream's reuses, bumped after st's epoch: st's
	// epoch field is narrow and wraps, and a shared runner's entry
	// may wait in a queue for any number of them (see streamEntry).
	uses atomic.Uint64

	t     *Task[In, Out]  // read-only
	n     int64           // read-only: len(elems)
	elems []elem[In, Out] // the calls; see elem
}

// streamCap is how many calls a stream of a pool with queues of qs holds,
// or 0 if Call does not stream on that pool.
func streamCap(qs int) int {
	if c := min(batchChunk, qs); c >= minStreamCap {
		return c
	}
	return 0
}

// newStream makes a stream of t, its results at generation 1.
func (t *Task[In, Out]) newStream() *callStream[In, Out] {
	s := &callStream[In, Out]{t: t, n: int64(t.streamCap), gen: 1, elems: make([]elem[In, Out], t.streamCap)}
	s.p = t.p
	for i := range s.elems {
		e := &s.elems[i]
		e.owner = &s.streamHome
		e.word.Store(1 << stateBits)
	}
	return s
}

// Append results.
const (
	appended = iota
	streamFull
	streamBusy // another caller is queueing a runner, or the pool is closing
)

// append reserves the next call of s for *in (by pointer: a large In is
// copied once, into the call). It returns appended and the call's
// future, streamFull, or streamBusy; a future of a refused call (pool
// closed) is the refused Future, as Call's.
func (s *callStream[In, Out]) append(in *In) (Future[Out], int) {
	p := s.p
	if p.state.Load() != stateOpen {
		// Closing: a runner may hold the stream, and would run a call
		// appended now (Close would wait for it).
		return Future[Out]{}, streamBusy
	}
	var st, next uint64
	for {
		st = s.st.Load()
		switch {
		case int64(st&stTail) >= s.n:
			return Future[Out]{}, streamFull
		case st&stPending != 0:
			return Future[Out]{}, streamBusy
		}
		next = st + 1
		switch {
		case st&stActive == 0:
			next |= stActive | stPending
			if len(p.set.Load().active) > 1 {
				next |= stShared + stRunnerOne
			}
		case st&stShared != 0:
			// Every runner is inside a call (or queued, its count not
			// yet busy, and then not): one more, up to one per worker.
			r := st & stRunners / stRunnerOne
			if r == st&stBusy/stBusyOne && r < s.maxRunners() {
				next += stRunnerOne | stPending
			}
		}
		if s.st.CompareAndSwap(st, next) {
			break
		}
	}
	e := &s.elems[st&stTail]
	e.in = *in
	w := e.word.Load() // gen<<stateBits, this caller's until the store below
	s.fill(e, w)
	if next&stPending != 0 && !s.queue(e, w, st, next) {
		return Future[Out]{gen: genClosed}, appended
	}
	return Future[Out]{r: &e.result, gen: w >> stateBits}, appended
}

// fill marks e, whose argument is written, filled (w is its result
// word before) and rings every runner parked on s.filling: shared
// runners may wait there for different calls, and Notify(1) could wake
// one whose call is still empty and leave the runner of e asleep.
func (s *callStream[In, Out]) fill(e *elem[In, Out], w uint64) {
	e.word.Store(w | filled)
	s.filling.NotifyAll()
}

// queue queues a runner of s that the append of its call e at st (its
// result word w before the fill) counted, and reports whether e was
// accepted. stPending keeps other callers from appending meanwhile. If
// the pool refuses the job (closed), a first runner's reservation is
// rolled back whole: nobody else appended, and no runner exists; a
// shared helper is uncounted, and e stays, for the runners there are.
// The end of this goroutine inside submit (a task it runs while the
// queues are full may call runtime.Goexit) is a refusal too, which would
// otherwise leave the stream pending for good.
func (s *callStream[In, Out]) queue(e *elem[In, Out], w, st, next uint64) (ok bool) {
	queued := false
	defer func() {
		if queued {
			return
		}
		if st&stActive == 0 {
			var zero In
			e.in = zero
			e.word.Store(w)
			s.st.Store(st)
			ok = false
			return
		}
		s.unqueue(stPending)
		ok = true
	}()
	var j job = s
	if next&stShared != 0 {
		j = s.entry(next)
	}
	if s.p.submit(j, true) != nil {
		if j != job(s) {
			s.t.entries.put(j.(*streamEntry[In, Out]))
		}
		return false
	}
	queued = true
	s.st.And(^uint64(stPending))
	return true
}

// leave is st less one started shared runner, one not inside a call:
// with no runner left, the stream has none (no call is left to claim, or
// the leaving runner could not have left).
func leave(st uint64) uint64 {
	return dropRunner(st - stStartOne)
}

// dropRunner is st less one shared runner.
func dropRunner(st uint64) uint64 {
	st -= stRunnerOne
	if st&stRunners == 0 {
		st &^= stActive | stShared
	}
	return st
}

// unqueue uncounts a shared runner whose entry the pool refused, and
// clears flags: no call was appended since it was counted, or one that
// was has a started runner to run it (see queue).
func (s *callStream[In, Out]) unqueue(flags uint64) {
	for {
		st := s.st.Load()
		if s.st.CompareAndSwap(st, dropRunner(st)&^flags) {
			return
		}
	}
}

// claimed is called by whoever claimed a shared call with the CAS that
// stored st: the claim of a stream's last call ends it for t.streams,
// which bounds the calls queued in streams (the runners still there keep
// it out of reuse until they leave; see reusable).
func (s *callStream[In, Out]) claimed(st uint64) {
	if head(st) == s.n {
		s.t.streams.Add(-1)
	}
}

// openStream returns t's open stream, opening one in place of a full one
// if the policy allows, or nil: then Call queues its call on its own.
func (t *Task[In, Out]) openStream() *callStream[In, Out] {
	if t.streamCap == 0 || t.streams.Load() >= maxStreams {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.open.Load()
	if old != nil && int64(old.st.Load()&stTail) < old.n {
		return old // opened by another caller meanwhile
	}
	if t.streams.Load() >= maxStreams {
		return nil
	}
	var s *callStream[In, Out]
	// The first reusable one; the others go back, behind it: a future
	// not yet taken, or a runner not yet gone (it leaves after its last
	// publish), may keep the oldest out of reuse a little longer.
	for range retiredStreams {
		r, err := t.retired.TryPop()
		if err != nil {
			break
		}
		if r.reusable() && r.reuse() {
			s = r
			break
		}
		if t.retired.TryPush(r) != nil {
			break // cannot happen: one was just popped, and only mu's holder pushes
		}
	}
	if s == nil {
		s = t.newStream()
	}
	t.streams.Add(1)
	if old != nil {
		t.retired.TryPush(old) // if full, dropped: the collector takes it
	}
	t.open.Store(s)
	return s
}

// reusable reports whether s, a full stream, has no runner and the value
// of every call of s has been taken. Under the task's mutex.
func (s *callStream[In, Out]) reusable() bool {
	want := (s.gen + 1) << stateBits
	for i := range s.elems {
		if s.elems[i].word.Load() != want {
			return false
		}
	}
	// After the words: the runner that published the last call may not
	// have left yet. Shared runners still queued may stay: their entries
	// are for this use's epoch, and find the stream reused when they run.
	return s.idle(s.st.Load())
}

// idle reports whether st, the word of a full stream, lets it be reused:
// no runner, or shared runners none of which has started.
func (s *callStream[In, Out]) idle(st uint64) bool {
	return st&stActive == 0 || st&stShared != 0 && head(st) == s.n && st&stStarted == 0
}

// reuse readies a reusable stream for its next use, and reports whether
// it did. Under the task's mutex, before the stream is published as
// open; a caller holding it from its last use may append as soon as the
// new use is open, which is as good as appending after the publication.
// The word is replaced by a CAS of the idle word it replaces: a queued
// runner may start (its CAS of st) after reusable's look, and then the
// stream stays in its use (false) rather than lose a started runner.
// The new word holds stPending until gen and uses name the new use: an
// append in between would count a runner whose entry records the old
// use, which would then never start, and the stream would stay active
// for good. Until the And, an append finds the stream busy and the call
// goes on its own; an old use's entry finds the epoch changed.
func (s *callStream[In, Out]) reuse() bool {
	for {
		st := s.st.Load()
		if !s.idle(st) {
			return false
		}
		// tail and head 0, no flags but pending, next epoch
		if s.st.CompareAndSwap(st, st&^(stEpoch-1)+stEpoch|stPending) {
			s.gen++
			s.uses.Add(1)
			s.st.And(^uint64(stPending))
			return true
		}
	}
}

// run is the queue entry of a single runner: it runs the stream from
// where its last runner left it (shared runners are queued as
// streamEntry). Its calls count as tasks (taken as each starts,
// completed as each ends) instead of the entry.
func (s *callStream[In, Out]) run(w *worker) uint64 {
	normal := false
	defer func() {
		if !normal {
			// runtime.Goexit in a call: the entry's count goes now;
			// the replacement goroutine goes on with the stream (see
			// failed).
			w.taken.add(^uint64(0))
		}
	}()
	s.runFrom(w, head(s.st.Load()))
	normal = true
	w.taken.add(^uint64(0)) // the entry, counted when popped
	return 0
}

// streamEntry is the queue entry of a shared runner: counted in its
// stream's runners for the use it was queued for (epoch, st's epoch
// field then), it starts as a runner only if that use is still going
// on; otherwise the stream was reused meanwhile (which a runner counted
// but not started does not hold up, see reusable) and it does nothing.
// Entries are recycled through the task's free list as soon as they
// start, so a queued entry never outlives its fields.
type streamEntry[In, Out any] struct {
	s     *callStream[In, Out]
	epoch uint64 // st's epoch field when queued
	use   uint64 // s.uses then: the epoch field alone wraps
}

// entry returns a free entry for a shared runner counted in st.
func (s *callStream[In, Out]) entry(st uint64) *streamEntry[In, Out] {
	en, ok := s.t.entries.get()
	if !ok {
		en = new(streamEntry[In, Out])
	}
	// No reuse can come between the CAS that stored st and this load:
	// the stream is open (a Call's reservation), or the runner queueing
	// en has started and not left.
	en.s, en.epoch, en.use = s, st/stEpoch, s.uses.Load()
	return en
}

// start takes en out of play and, if its stream is still in the use it
// was queued for, counts it started and returns the stream; else nil.
func (en *streamEntry[In, Out]) start() *callStream[In, Out] {
	s, epoch, use := en.s, en.epoch, en.use
	en.s = nil
	s.t.entries.put(en)
	for {
		// uses first: a reuse after this load changes st's epoch, so
		// the CAS below fails or the epoch check does.
		if s.uses.Load() != use {
			return nil
		}
		st := s.st.Load()
		if st/stEpoch != epoch {
			return nil
		}
		if s.st.CompareAndSwap(st, st+stStartOne) {
			return s
		}
	}
}

func (en *streamEntry[In, Out]) run(w *worker) uint64 {
	if s := en.start(); s != nil {
		normal := false
		defer func() {
			if !normal {
				w.taken.add(^uint64(0)) // runtime.Goexit: as in callStream.run
			}
		}()
		s.runShared(w, false)
		normal = true
	}
	w.taken.add(^uint64(0)) // the entry, counted when popped
	return 0
}

// abandon: Shutdown's expiry on a queued shared runner; see
// callStream.abandon.
func (en *streamEntry[In, Out]) abandon() int {
	if s := en.start(); s != nil {
		return s.abandonShared()
	}
	return 0
}

// runFrom runs s's calls from call i on w, as s's single runner, until
// it leaves s, runs its last call, or settles (see above).
func (s *callStream[In, Out]) runFrom(w *worker, i int64) {
	outer := w.fr
	// hi is 1 while this frame is s's runner; settle clears it.
	w.fr = batchFrame{pk: s, lo: i, next: i, hi: 1}
	normal := false
	defer func() {
		if !normal {
			w.fr = outer // runtime.Goexit: the outer frames' handlers run next
		}
	}()
	for !s.runSome(w) && w.fr.hi != 0 {
	}
	w.fr = outer
	normal = true
}

// runSome runs s's calls as its single runner until runFrom is over
// (true) or a call panics (false; the panic is that call's result).
func (s *callStream[In, Out]) runSome(w *worker) (done bool) {
	i := int64(-1)
	defer func() {
		if i >= 0 {
			s.failed(w, i, recover())
		}
	}()
	fn, step, n, t := s.t.fn, s.t.step, s.n, s.t
	yielded := false
	for {
		j := w.fr.next
		if j == n {
			// Every call ran: s may be reused from the And on, and only
			// its read-only fields are read after it.
			s.st.And(^uint64(stActive))
			t.streams.Add(-1)
			return true
		}
		e := &s.elems[j]
		if e.word.Load()&filled == 0 {
			st := s.st.Load()
			if int64(st&stTail) != j {
				s.awaitFill(e) // reserved: its caller is writing it
				continue
			}
			if !yielded && w.yieldsFirst() && w.p.set.Load().spin <= 0 {
				// Caught up: yield once, as worker.loop does before it
				// parks, so that a caller queued on this P appends its
				// next call while this runner still holds the stream.
				yielded = true
				sched.Yield()
				continue
			}
			if s.st.CompareAndSwap(st, st&^(stActive|stHead)|uint64(j)*stHeadOne) {
				return true
			}
			continue
		}
		if t.p.state.Load() == stateAbandon && w.fr.hi != 0 {
			// Shutdown gave up: calls queued behind a running one never
			// run, as queued tasks do not (see ShutdownError).
			t.p.abandoned.Add(uint64(s.abandonFrom(j)))
			return true
		}
		yielded = false
		w.taken.inc()
		i = j
		w.fr.next = j + 1
		if step != nil {
			step(e)
		} else {
			e.out = fn(e.in)
		}
		i = -1
		var zero In
		e.in = zero
		settled := w.fr.hi == 0
		s.publish(e)
		w.completed.inc()
		if settled {
			return true // the stream has another runner, or none
		}
	}
}

// runShared runs s's calls on w as one of its shared runners until it
// leaves s or settles. busy says the runner is counted inside a call
// already: it takes over from one (settle, or a goroutine that ended).
func (s *callStream[In, Out]) runShared(w *worker, busy bool) {
	outer := w.fr
	// hi is 1 while this frame is one of s's runners; settle clears it.
	// lo is -1: a shared frame.
	w.fr = batchFrame{pk: s, lo: -1, hi: 1}
	normal := false
	defer func() {
		if !normal {
			w.fr = outer // runtime.Goexit: the outer frames' handlers run next
		}
	}()
	for !s.runSharedSome(w, &busy) && w.fr.hi != 0 {
	}
	w.fr = outer
	normal = true
}

// runSharedSome claims and runs s's calls until runShared is over (true)
// or a call panics (false; the panic is that call's result). *busy is
// whether this runner is counted inside a call.
func (s *callStream[In, Out]) runSharedSome(w *worker, busy *bool) (done bool) {
	i := int64(-1)
	defer func() {
		if i >= 0 {
			s.failed(w, i, recover())
		}
	}()
	fn, step, p := s.t.fn, s.t.step, s.p
	yielded := false
	for {
		st := s.st.Load()
		j := head(st)
		if j < int64(st&stTail) {
			next := st + stHeadOne
			if !*busy {
				next += stBusyOne
			}
			// More calls than runners to claim them, every runner inside
			// a call once this one is: one more, as CallBatch queues an
			// entry per worker that can help (a burst appended before the
			// first runner started, which callers did not count on).
			r := next & stRunners / stRunnerOne
			spawn := r == next&stBusy/stBusyOne && j+1 < int64(st&stTail) &&
				r < s.maxRunners()
			if spawn {
				next += stRunnerOne
			}
			if !s.st.CompareAndSwap(st, next) {
				continue
			}
			s.claimed(next)
			*busy, yielded = true, false
			if spawn {
				if en := s.entry(next); p.submit(en, false) != nil {
					// Full or closed: the runners there run the rest.
					s.t.entries.put(en)
					s.unqueue(0)
				}
			}
			e := &s.elems[j]
			if e.word.Load()&filled == 0 {
				s.awaitFill(e) // reserved: its caller is writing it
			}
			if p.state.Load() == stateAbandon {
				// Shutdown gave up: as in runSome.
				s.fail(e)
				p.abandoned.Add(1)
				continue
			}
			w.taken.inc()
			i = j
			if step != nil {
				step(e)
			} else {
				e.out = fn(e.in)
			}
			i = -1
			var zero In
			e.in = zero
			settled := w.fr.hi == 0
			s.publish(e)
			w.completed.inc()
			if settled {
				return true // this runner's count went to the settling
			}
			continue
		}
		if *busy {
			// Idle again before anything else: a caller that counts on
			// this runner now finds it claiming.
			if s.st.CompareAndSwap(st, st-stBusyOne) {
				*busy = false
			}
			continue
		}
		if !yielded && w.yieldsFirst() && p.set.Load().spin <= 0 {
			yielded = true // as in runSome
			sched.Yield()
			continue
		}
		if s.st.CompareAndSwap(st, leave(st)) {
			return true
		}
	}
}

// publish turns e's result ready and rings whoever asked for it, as a
// packet's publish does. From the Or on, e (and s, if e was the last call
// whose value was not taken) may be taken and reused.
func (s *callStream[In, Out]) publish(e *elem[In, Out]) { e.publish(&s.ev) }

// fail fails a call that will never run, with ErrClosed.
func (s *callStream[In, Out]) fail(e *elem[In, Out]) {
	var zero In
	e.in = zero
	e.err = ErrClosed
	s.publish(e)
}

// failed records the panic v of call i (nil: the call ran runtime.Goexit)
// as its result.
func (s *callStream[In, Out]) failed(w *worker, i int64, v any) {
	e := &s.elems[i]
	var zero In
	e.in = zero
	e.err = w.taskPanicked(v)
	runner := w.fr.hi != 0
	shared := w.fr.lo < 0
	next := w.fr.next
	s.publish(e)
	if v != nil {
		w.completed.inc()
		return
	}
	// runtime.Goexit: this goroutine ends (taskPanicked counted the call
	// completed). A runner hands its place in the stream to the
	// goroutine that replaces it.
	switch {
	case !runner:
	case shared:
		w.carry = append(w.carry, streamRest[In, Out]{s, -1})
	case next == s.n:
		s.st.And(^uint64(stActive))
		s.t.streams.Add(-1)
	default:
		w.carry = append(w.carry, streamRest[In, Out]{s, next})
	}
}

// awaitFill waits for the caller that reserved e to write it. That is a
// few instructions from its reservation, so a short spin almost always
// sees it; a caller descheduled between the two (preempted, or its thread
// by the OS on a loaded machine) is waited for parked, on s.filling,
// which the caller rings after its fill: a sync/atomic store, then the
// doorbell's load of its waiters (knit.Event's register-then-recheck), so
// the runner holds no P meanwhile: a wait that outlasts the spin is one
// whose caller lost its thread, which takes microseconds, and yielding
// with Gosched meanwhile would wake the other P for nothing.
func (s *callStream[In, Out]) awaitFill(e *elem[In, Out]) {
	for range fillSpins {
		if e.word.Load()&filled != 0 {
			return
		}
		knit.Pause(1)
	}
	ev := &s.filling
	for e.word.Load()&filled == 0 {
		t := ev.Prepare()
		if e.word.Load()&filled != 0 {
			ev.Cancel(t)
			return
		}
		_ = ev.Wait(context.Background(), t, waitPark) // no deadline: the fill rings it
	}
}

// fillSpins is how many spin hints awaitFill polls for before it parks:
// several times a caller's path from its reservation to its fill
// (BENCHMARKS.md, "Calls in flight: Call streams").
const fillSpins = 8

// settle: see settler and "Nested waits" above. The frame is w's
// innermost, one of s's runners (or settled already), and its call is
// running below the caller on the stack. A shared runner hands its count,
// busy, to the nested run, which leaves s when it is done.
func (s *callStream[In, Out]) settle(w *worker) {
	if w.fr.hi == 0 {
		return
	}
	w.fr.hi = 0
	if w.fr.lo < 0 {
		s.runShared(w, true)
	} else {
		s.runFrom(w, w.fr.next)
	}
}

// abandon is Shutdown's expiry on a queued runner of s that never ran:
// it fails the calls appended so far that no runner has taken, leaves,
// and returns how many it failed.
func (s *callStream[In, Out]) abandon() int {
	return s.abandonFrom(head(s.st.Load()))
}

// abandonShared is abandon for a started shared runner.
func (s *callStream[In, Out]) abandonShared() int {
	k := 0
	for {
		st := s.st.Load()
		if j := head(st); j < int64(st&stTail) {
			if s.st.CompareAndSwap(st, st+stHeadOne) {
				s.claimed(st + stHeadOne)
				e := &s.elems[j]
				if e.word.Load()&filled == 0 {
					s.awaitFill(e)
				}
				s.fail(e)
				k++
			}
			continue
		}
		if s.st.CompareAndSwap(st, leave(st)) {
			return k
		}
	}
}

// abandonFrom fails the calls of s from call j up to those appended so
// far, as its single runner, leaves s, and returns how many.
func (s *callStream[In, Out]) abandonFrom(j int64) int {
	k := 0
	for {
		if j == s.n {
			s.st.And(^uint64(stActive))
			s.t.streams.Add(-1)
			return k
		}
		e := &s.elems[j]
		if e.word.Load()&filled == 0 {
			st := s.st.Load()
			if int64(st&stTail) != j {
				s.awaitFill(e)
				continue
			}
			if s.st.CompareAndSwap(st, st&^(stActive|stHead)|uint64(j)*stHeadOne) {
				return k
			}
			continue
		}
		j++
		k++
		s.fail(e)
	}
}

// streamRest is a runner's place in a stream whose goroutine ended in
// runtime.Goexit, run by the replacement: no queue entry was counted.
// next is the single runner's next call, or -1 for a shared runner,
// which goes on counted busy.
type streamRest[In, Out any] struct {
	s    *callStream[In, Out]
	next int64
}

func (r streamRest[In, Out]) run(w *worker) uint64 {
	if r.next < 0 {
		r.s.runShared(w, true)
	} else {
		r.s.runFrom(w, r.next)
	}
	return 0
}

// abandon is never called: a rest is carried, not queued.
func (r streamRest[In, Out]) abandon() int { return 0 }
