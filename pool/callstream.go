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
// worker's interface call and deferred recover. On a one-worker pool
// those calls can travel as CallBatch's do, with no change to the
// caller's code: a task keeps an open stream, a packet of calls side by
// side that Call appends to, and the stream is queued as one job only
// when no runner holds it. A runner runs the stream's calls in order as
// they are appended and completes each future as its call returns; when
// it catches up with the callers it yields once, as an idle worker does
// before it parks (worker.loop), so that a caller queued on its P can
// append the next call, and only then leaves the stream. The next Call
// finds it left and queues it again. So a burst of calls costs one queue
// entry and one doorbell, and a caller alternating Call and Wait with the
// worker on its P costs none: per call, the append's CAS and its fenced
// store of the fill, the runner's Or that publishes the result, and the
// Wait's CAS that takes it.
//
// Only for a pool of one worker: a stream has one runner at a time, so
// its calls run in order on one worker, which with several workers would
// keep a call queued behind a long one while another worker idles (a
// queued call can be stolen), and would deadlock calls that wait for each
// other to run side by side (TestParallelWake). With several workers Call
// queues each call as before.
//
// The stream's word, st, holds the epoch (stEpoch and up: bumped when the
// stream is reused, so that a caller that read the word in an earlier use
// cannot CAS it), the number of calls reserved (tail), and two flags:
//
//	stActive   a runner holds the stream: its job is queued or running,
//	           or the caller that set it is about to queue it
//	stPending  that caller has not queued it yet
//
// Call reserves the next call with a CAS on st (tail+1, and stActive),
// writes the argument, marks the call filled with a sync/atomic store on
// its result word (the filled bit), and rings s.filling, which costs a
// load unless the runner waits there (see awaitFill). If stActive was
// clear, this caller queues the stream (p.submit, which rings the
// worker); stPending stands until then, and a Call that finds it set
// queues its call on its own, as before: so a call appended to a stream
// was accepted exactly when its stream's job was, and a pool that refuses
// the job (closed) refuses the only call appended meanwhile, the
// scheduler's own, which is rolled back. Call appends nothing once the
// pool is closing (a runner would run it, and Close wait for it).
//
// Why no call is left behind. The runner leaves only by a CAS of st that
// clears stActive with tail equal to the next call it would run; a
// reservation is a CAS of the same word. In their order either the
// reservation comes first, the leave's CAS fails and the runner sees the
// new tail (and waits for the fill, a few instructions away), or the
// leave comes first and the reserving caller finds stActive clear and
// queues the stream. A runner that finds a reserved call not yet filled
// waits for it on s.filling, by the Event's protocol: it registers and
// re-checks the word, the caller stores the flag and then rings; so
// either the re-check sees the fill or the ring finds the runner
// registered.
//
// Nested waits. A call that waits on its own pool (Future.Wait, Group.Wait,
// Map, a full queue) while its stream's later calls are held by its
// runner would wait for ever if it waited on one of them. So, as for a
// CallBatch packet, before a worker waits or runs anything nested inside a
// stream's call it settles: it runs the stream's calls appended so far
// itself, nested, and leaves the stream, so that later calls queue it
// again; the call below then ends without going back to the stream.
//
// Reuse. A stream holds streamCap calls. When it is full the next Call
// opens another (under the task's mutex, once per streamCap calls), and
// the full one goes to the task's retired ring. A retired stream is
// reused once the future of every one of its calls has been taken: each
// taken result word has moved to the next generation, its filled flag
// cleared by the taking Wait once it is done with the result (see
// filled), which a scan of the words sees, so neither Wait nor WaitAll
// touches a counter of the stream. A stream a Future was never waited on stays out of reuse and
// goes to the collector with its last Future. At most maxStreams streams
// of a task are open or not yet run to their end; past that Call queues
// its call on its own, which blocks while the queue is full: a stream's
// calls are not counted against Config.QueueSize, but there are at most
// maxStreams*streamCap of them.

// Bits of stream.st.
const (
	stTail    = 1<<16 - 1 // calls reserved
	stActive  = 1 << 16
	stPending = 1 << 17
	stEpoch   = 1 << 32
)

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

	// next is the first call not yet run: the runner's, written by the
	// one that leaves before its CAS of st and read by the next after
	// the stream's queueing.
	next int64
	// gen is the generation of every call's result word in this use;
	// written under the task's mutex when the stream is reused.
	gen uint64

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
	streamBusy // another caller is queueing the stream, or the pool does not stream now
)

// append reserves the next call of s for *in (by pointer: a large In is
// copied once, into the call). It returns appended and the call's
// future, streamFull, or streamBusy; a future of a refused call (pool
// closed) is the refused Future, as Call's.
func (s *callStream[In, Out]) append(in *In) (Future[Out], int) {
	if p := s.p; !p.set.Load().streams || p.state.Load() != stateOpen {
		// Resized, or closing: a runner may hold the stream, and would
		// run a call appended now (Close would wait for it).
		return Future[Out]{}, streamBusy
	}
	var st uint64
	for {
		st = s.st.Load()
		switch {
		case int64(st&stTail) >= s.n:
			return Future[Out]{}, streamFull
		case st&stPending != 0:
			return Future[Out]{}, streamBusy
		}
		next := st + 1 | stActive
		if st&stActive == 0 {
			next |= stPending
		}
		if s.st.CompareAndSwap(st, next) {
			break
		}
	}
	e := &s.elems[st&stTail]
	e.in = *in
	w := e.word.Load() // gen<<stateBits, this caller's until the store below
	e.word.Store(w | filled)
	s.filling.Notify(1) // a runner that caught this call mid-append
	if st&stActive == 0 && !s.queue(e, w, st) {
		return Future[Out]{gen: genClosed}, appended
	}
	return Future[Out]{r: &e.result, gen: w >> stateBits}, appended
}

// queue queues s, which has no runner, for its call e just appended at
// st (its result word w before the fill), and reports whether the pool
// took it. Nobody else appended since the reservation (stPending) and no
// runner exists, so a refusal rolls the reservation back whole; so does
// the end of this goroutine inside submit (a task it runs while the
// queues are full may call runtime.Goexit), which would otherwise leave
// the stream pending for good.
func (s *callStream[In, Out]) queue(e *elem[In, Out], w, st uint64) (ok bool) {
	defer func() {
		if !ok {
			var zero In
			e.in = zero
			e.word.Store(w)
			s.st.Store(st)
		}
	}()
	if s.p.submit(s, true) != nil {
		return false
	}
	s.st.And(^uint64(stPending))
	return true
}

// openStream returns t's open stream, opening one in place of a full one
// if the policy allows, or nil: then Call queues its call on its own.
func (t *Task[In, Out]) openStream() *callStream[In, Out] {
	if t.streamCap == 0 || t.streams.Load() >= maxStreams || !t.p.set.Load().streams {
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
	if r, err := t.retired.TryPop(); err == nil {
		if r.reusable() {
			r.reuse()
			s = r
		} else if t.retired.TryPush(r) != nil {
			// Dropped: a future of it was never taken.
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

// reusable reports whether the value of every call of s, a full stream,
// has been taken. Under the task's mutex.
func (s *callStream[In, Out]) reusable() bool {
	want := (s.gen + 1) << stateBits
	for i := range s.elems {
		if s.elems[i].word.Load() != want {
			return false
		}
	}
	return true
}

// reuse readies a reusable stream for its next use. Under the task's
// mutex, before the stream is published as open; a caller holding it
// from its last use may append as soon as st is stored, which is as
// good as appending after the publication.
func (s *callStream[In, Out]) reuse() {
	s.gen++
	s.next = 0
	s.st.Store((s.st.Load()&^(stEpoch-1) + stEpoch)) // tail 0, no flags, next epoch
}

// run is the stream's queue entry: it runs the stream from where its last
// runner left it. Its calls count as tasks (taken as each starts,
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
	s.runFrom(w, s.next)
	normal = true
	w.taken.add(^uint64(0)) // the entry, counted when popped
	return 0
}

// runFrom runs s's calls from call i on w, as s's runner, until it
// leaves s, runs its last call, or settles (see above).
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

// runSome runs s's calls until runFrom is over (true) or a call panics
// (false; the panic is that call's result).
func (s *callStream[In, Out]) runSome(w *worker) (done bool) {
	i := int64(-1)
	defer func() {
		if i >= 0 {
			s.failed(w, i, recover())
		}
	}()
	fn, n, t := s.t.fn, s.n, s.t
	yielded := false
	for {
		j := w.fr.next
		if j == n {
			// Every call ran: s may be reused from the last publish on,
			// and only its read-only fields are read after it.
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
			s.next = j
			if s.st.CompareAndSwap(st, st&^stActive) {
				return true
			}
			continue
		}
		if t.p.state.Load() == stateAbandon && w.fr.hi != 0 {
			// Shutdown gave up: calls queued behind a running one never
			// run, as queued tasks do not (see ShutdownError).
			s.next = j
			t.p.abandoned.Add(uint64(s.abandon()))
			return true
		}
		yielded = false
		w.taken.inc()
		i = j
		w.fr.next = j + 1
		e.out = fn(e.in)
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

// publish turns e's result ready and rings whoever asked for it, as a
// packet's publish does. From the Or on, e (and s, if e was the last call
// whose value was not taken) may be taken and reused.
func (s *callStream[In, Out]) publish(e *elem[In, Out]) { e.publish(&s.ev) }

// failed records the panic v of call i (nil: the call ran runtime.Goexit)
// as its result.
func (s *callStream[In, Out]) failed(w *worker, i int64, v any) {
	e := &s.elems[i]
	var zero In
	e.in = zero
	e.err = w.taskPanicked(v)
	runner := w.fr.hi != 0
	next := w.fr.next
	s.publish(e)
	if v != nil {
		w.completed.inc()
		return
	}
	// runtime.Goexit: this goroutine ends (taskPanicked counted the call
	// completed). A runner hands the rest of the stream to the
	// goroutine that replaces it.
	if !runner {
		return
	}
	if next == s.n {
		s.t.streams.Add(-1)
		return
	}
	s.next = next
	w.carry = append(w.carry, streamRest[In, Out]{s})
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
// innermost, s's runner (or settled already), and its call is running
// below the caller on the stack.
func (s *callStream[In, Out]) settle(w *worker) {
	if w.fr.hi == 0 {
		return
	}
	w.fr.hi = 0
	s.runFrom(w, w.fr.next)
}

// abandon fails the calls of a queued stream (Shutdown's expiry) up to
// those appended so far, leaves the stream, and returns how many.
func (s *callStream[In, Out]) abandon() int {
	k := 0
	j := s.next
	for {
		if j == s.n {
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
			s.next = j
			if s.st.CompareAndSwap(st, st&^stActive) {
				return k
			}
			continue
		}
		var zero In
		e.in = zero
		e.err = ErrClosed
		j++
		k++
		s.publish(e)
	}
}

// streamRest is the rest of a stream whose runner's goroutine ended in
// runtime.Goexit, run by the replacement: no queue entry was counted.
type streamRest[In, Out any] struct{ s *callStream[In, Out] }

func (r streamRest[In, Out]) run(w *worker) uint64 {
	r.s.runFrom(w, r.s.next)
	return 0
}

// abandon is never called: a rest is carried, not queued.
func (r streamRest[In, Out]) abandon() int { return 0 }
