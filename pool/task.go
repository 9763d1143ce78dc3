package pool

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// Task is a typed function bound to a pool. Call runs it on a worker and
// returns a Future for the result; neither allocates in the steady state,
// since the per-call slots (argument, result, doorbell) are recycled
// through the task's free list when their value is taken.
type Task[In, Out any] struct {
	p  *Pool
	fn func(In) Out
	// step runs a stream's call in fn's place where it is not nil: a
	// Submit stream's (see submit.go), whose calls return an error too.
	step func(e *elem[In, Out])

	// free holds slots whose value was taken, ready for the next Call.
	// It holds as many slots as the queues hold calls; see freeList.
	free freeList[slot[In, Out]]

	// packets holds CallBatch's packets whose futures were all taken, one
	// list per capacity class (see packetClasses), each made on first
	// use.
	packets [len(packetClasses)]atomic.Pointer[freeList[packet[In, Out]]]

	// Call's streams (see callstream.go): the open one, how many are
	// open or not yet run to their end, and the full ones waiting for
	// reuse. streamCap is the calls a stream holds, 0 where Call does
	// not stream. mu serialises the opening of a stream.
	open      atomic.Pointer[callStream[In, Out]]
	streams   atomic.Int32
	retired   *knit.MPMC[*callStream[In, Out]]
	streamCap int
	mu        sync.Mutex
	// entries recycles the queue entries of shared stream runners.
	entries freeList[streamEntry[In, Out]]
}

// freeList recycles one kind of object (*E). The last one put back waits
// in hot, which takes one atomic operation each way and hands back the
// object whose lines are most likely still in this core's cache; the
// rest go to a ring, rather than a sync.Pool, since the garbage collector
// does not empty it and the steady state stays allocation-free; a burst
// of more outstanding objects than the ring holds recycles the excess
// through spare, which the collector may empty.
type freeList[E any] struct {
	hot   atomic.Pointer[E]
	ring  *knit.MPMC[*E]
	spare sync.Pool
}

func (l *freeList[E]) get() (*E, bool) {
	if l.hot.Load() != nil {
		if v := l.hot.Swap(nil); v != nil {
			return v, true
		}
	}
	if v, err := l.ring.TryPop(); err == nil {
		return v, true
	}
	v, ok := l.spare.Get().(*E)
	return v, ok
}

func (l *freeList[E]) put(v *E) {
	if l.hot.Load() == nil && l.hot.CompareAndSwap(nil, v) {
		return
	}
	if l.ring.TryPush(v) != nil {
		l.spare.Put(v)
	}
}

// NewTask binds fn to p. fn must not be nil.
func NewTask[In, Out any](p *Pool, fn func(In) Out) *Task[In, Out] {
	if fn == nil {
		panic("pool: NewTask of nil func")
	}
	if p == nil {
		panic("pool: NewTask with a nil *Pool")
	}
	return newTask(p, fn, nil)
}

// newTask is NewTask, with the step of a Submit stream when fn is nil.
func newTask[In, Out any](p *Pool, fn func(In) Out, step func(e *elem[In, Out])) *Task[In, Out] {
	n := len(p.workersNow()) * p.qs
	t := &Task[In, Out]{p: p, fn: fn, step: step, streamCap: streamCap(p.qs)}
	if step == nil { // a Submit stream's calls that do not stream take Submit's slots
		t.free.ring = knit.NewMPMC[*slot[In, Out]](min(max(n, 64), maxFreeSlots), knit.Park{})
	}
	if t.streamCap > 0 {
		t.retired = knit.NewMPMC[*callStream[In, Out]](retiredStreams, knit.Park{})
		t.entries.ring = knit.NewMPMC[*streamEntry[In, Out]](streamEntries, knit.Park{})
	}
	return t
}

// retiredStreams is how many full streams a task keeps for reuse: a
// stream is reused once every future of it was taken (see
// callstream.go), so a caller with more calls in flight than two streams
// hold finds one here the next time a stream fills.
const retiredStreams = 8

// streamEntries is how many free shared-runner entries a task keeps in
// its ring (the rest go to the free list's sync.Pool): a stream queues
// one per worker at most, and a queued one is freed when it starts.
const streamEntries = 64

// maxFreeSlots bounds a task's free list ring (64 KiB of slots on 64-bit
// targets); see Task.free.
const maxFreeSlots = 1 << 12

// slot is one call in flight: its argument, and the result its Future
// reads. The result comes first so that a Future's pointer is the slot's,
// and the argument right after it, so that with small types the runner
// and the Wait touch one line of the slot; the event, which only a
// sleeping Wait and the runner that wakes it touch, comes last.
type slot[In, Out any] struct {
	result[Out]
	in  In              // written by the caller before the push, then owned by the runner
	t   *Task[In, Out]  // read-only
	ctx context.Context // CallContext's, when it can end (see "Contexts" in the package doc); like in
	ev  knit.Event      // see owner.event
}

// get returns a free slot, its generation pending.
func (t *Task[In, Out]) get() *slot[In, Out] {
	if s, ok := t.free.get(); ok {
		return s
	}
	s := &slot[In, Out]{t: t}
	s.owner = s
	s.word.Store(1 << stateBits) // generation 1
	return s
}

func (s *slot[In, Out]) recycle(int64)      { s.t.free.put(s) }
func (s *slot[In, Out]) event() *knit.Event { return &s.ev }
func (s *slot[In, Out]) pool() *Pool        { return s.t.p }

func (s *slot[In, Out]) future() Future[Out] {
	return Future[Out]{r: &s.result, gen: s.word.Load() >> stateBits}
}

// refuse returns a slot the pool did not accept to the free list; its
// generation never left the caller, so it is reused as is.
func (s *slot[In, Out]) refuse() {
	var zero In
	s.in, s.ctx = zero, nil
	s.recycle(1)
}

// run calls the task's function and hands the result out at once: the
// future turns ready and its waiter is woken before the worker looks for
// more work.
func (s *slot[In, Out]) run(w *worker) (done uint64) {
	if ctx := s.ctx; ctx != nil {
		s.ctx = nil
		if err := ctx.Err(); err != nil { // queued past its ctx: skipped
			var zero In
			s.in = zero
			var out Out
			s.finish(out, err)
			w.skippedCtx.inc()
			return 0
		}
	}
	done = 1 // what a recovered panic returns too
	returned := false
	defer func() {
		if !returned {
			pe := w.taskPanicked(recover())
			var zero In
			s.in = zero
			var out Out
			s.finish(out, pe)
		}
	}()
	s.out = s.t.fn(s.in)
	returned = true
	var zero In
	s.in = zero
	s.finished(nil)
	return 1
}

// abandon fails a call that will never run.
func (s *slot[In, Out]) abandon() int {
	var zero In
	s.in, s.ctx = zero, nil
	var out Out
	s.finish(out, ErrClosed)
	return 1
}

// Call runs the task on in, on a worker, and returns its Future. It
// blocks while the queues are full (from a task of the same pool it runs
// queued tasks instead, as Go does). Once the pool is closed the returned
// Future's Wait gives ErrClosed.
//
// With queues of at least 8, calls made one after another travel as
// CallBatch's do: appended to the task's open stream of up to 128 calls,
// which is queued, with one doorbell ring, only when it needs a runner,
// and whose calls the workers run back to back. Each result is ready as
// soon as its call returns. On a pool of one worker the stream has one
// runner, which takes its calls in order; on several, one runner per
// worker at most claims them as they come, and a Call that finds every
// runner inside a call queues one more, so a call does not wait behind a
// long one while a worker idles and calls that wait for each other run
// side by side, as calls queued one by one do. The way a stream runs is
// chosen when it has no runner, by the pool's size then: after Resize
// has added workers, a stream whose one runner is still at work keeps
// it, and a call that waits for a later call of that stream waits for
// ever, as on a one-worker pool. Two such streams per task, at most, are
// not counted against the queue size (see Config.QueueSize); Stats counts
// each of their calls once it is taken.
func (t *Task[In, Out]) Call(in In) Future[Out] {
	if f, ok := t.streamCall(&in); ok {
		return f
	}
	return t.callOne(&in)
}

// streamCall appends a call of *in to t's open stream, opening one if
// it is full, and reports false if it did not (a caller is queueing the
// stream's runner, the pool is closing, or the task's streams are all in
// flight): then the call goes on its own.
func (t *Task[In, Out]) streamCall(in *In) (Future[Out], bool) {
	if s := t.open.Load(); s != nil {
		if f, st := s.append(in); st == appended {
			return f, true
		} else if st == streamBusy {
			return Future[Out]{}, false
		}
	}
	if s := t.openStream(); s != nil {
		if f, st := s.append(in); st == appended {
			return f, true
		}
	}
	return Future[Out]{}, false
}

// callOne is Call queueing the call on its own, in a slot.
func (t *Task[In, Out]) callOne(in *In) Future[Out] {
	s := t.get()
	s.in = *in
	f := s.future()
	if t.p.submit(s, true) != nil {
		s.refuse()
		return Future[Out]{gen: genClosed}
	}
	return f
}

// CallContext is Call bounded by ctx, as net.Dialer's DialContext is
// Dial: while the queues are full it waits for room only until ctx ends,
// and then gives the call up: fn does not run on in, and the Future's
// Wait returns ctx.Err(). A call still queued when ctx ends is skipped
// the same way, by the pool's one rule for a ctx (see "Contexts" in the
// package doc). Once the pool is closed the Future's Wait gives
// ErrClosed. Like Call, it allocates nothing in the steady state.
func (t *Task[In, Out]) CallContext(ctx context.Context, in In) Future[Out] {
	if ctx == nil {
		panic("pool: CallContext with a nil context")
	}
	s := t.get()
	s.in = in
	if ctx.Done() != nil { // a ctx that can end: checked again when a worker takes the call
		s.ctx = ctx
	}
	f := s.future()
	if err := t.p.submitCtx(ctx, s); err != nil {
		if err == ErrClosed {
			s.refuse()
			return Future[Out]{gen: genClosed}
		}
		// Given up: the slot carries ctx's error to the Future, whose
		// Wait recycles it as it would a result.
		var zero In
		s.in, s.ctx = zero, nil
		var out Out
		s.finish(out, err)
	}
	return f
}

// CallBatch calls the task on every element of ins and stores the futures
// in out[:len(ins)]; it panics if len(out) < len(ins), and never writes
// past len(out). It blocks while the queues are full and returns how many
// calls the pool accepted: len(ins), or fewer if the pool closed, in
// which case the remaining futures fail with ErrClosed.
//
// The calls travel together, in groups of up to 128: a group is one
// queue entry (one per worker that can help run it) and one doorbell
// ring, its slots sit side by side, and a worker runs its calls back to
// back, so a caller that waits for every future (see WaitAll) pays about
// one wake per batch. Each result is ready as soon as its call returns.
// Stats counts each call once it is taken; while a group is queued,
// QueueDepth counts its entries.
func (t *Task[In, Out]) CallBatch(ins []In, out []Future[Out]) int {
	if len(out) < len(ins) {
		panic(fmt.Sprintf("pool: CallBatch: len(out) is %d, less than len(ins) %d", len(out), len(ins)))
	}
	out = out[:len(ins)]
	accepted := 0
	for i := 0; i < len(ins); i += batchChunk {
		m := min(batchChunk, len(ins)-i)
		if accepted < i { // refused already: the pool is closed
			for k := range m {
				out[i+k] = Future[Out]{gen: genClosed}
			}
			continue
		}
		pk := t.getPacket(m)
		for k := range m {
			e := &pk.elems[k]
			e.in = ins[i+k]
			out[i+k] = Future[Out]{r: &e.result, gen: e.word.Load() >> stateBits}
		}
		if !pk.submit(int64(m)) {
			var zero In
			for k := range m {
				pk.elems[k].in = zero
				out[i+k] = Future[Out]{gen: genClosed}
			}
			t.putPacket(pk) // its generations never left the caller
			continue
		}
		accepted += m
	}
	return accepted
}
