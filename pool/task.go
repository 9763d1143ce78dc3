package pool

import (
	"fmt"
	"sync"

	"github.com/knit-go/knit"
)

// Task is a typed function bound to a pool. Call runs it on a worker and
// returns a Future for the result; neither allocates in the steady state,
// since the per-call slots (argument, result, doorbell) are recycled
// through the task's free list when their value is taken.
type Task[In, Out any] struct {
	p  *Pool
	fn func(In) Out

	// free holds slots whose value was taken, ready for the next Call.
	// A ring rather than a sync.Pool: it is not emptied by the garbage
	// collector, so the steady state stays allocation-free. It holds as
	// many slots as the queues hold calls; a burst of more outstanding
	// calls than that recycles the excess through spare, which the
	// collector may empty.
	free  *knit.MPMC[*slot[In, Out]]
	spare sync.Pool
}

// NewTask binds fn to p. fn must not be nil.
func NewTask[In, Out any](p *Pool, fn func(In) Out) *Task[In, Out] {
	if fn == nil {
		panic("pool: NewTask of nil func")
	}
	n := len(p.workers) * p.workers[0].q.Cap()
	return &Task[In, Out]{p: p, fn: fn, free: knit.NewMPMC[*slot[In, Out]](min(max(n, 64), maxFreeSlots))}
}

// maxFreeSlots bounds a task's free list ring (64 KiB of slots on 64-bit
// targets); see Task.free.
const maxFreeSlots = 1 << 12

// slot is one call in flight: its argument, and the result its Future
// reads. The result comes first so that a Future's pointer is the slot's.
type slot[In, Out any] struct {
	result[Out]
	in In // written by the caller before the push, then owned by the runner
	t  *Task[In, Out]
}

// get returns a free slot, its generation pending.
func (t *Task[In, Out]) get() *slot[In, Out] {
	if s, ok := t.free.TryPop(); ok {
		return s
	}
	if s, ok := t.spare.Get().(*slot[In, Out]); ok {
		return s
	}
	s := &slot[In, Out]{t: t}
	s.owner = s
	s.p = t.p
	s.word.Store(1 << stateBits) // generation 1
	return s
}

func (s *slot[In, Out]) recycle() {
	if !s.t.free.TryPush(s) {
		s.t.spare.Put(s)
	}
}

func (s *slot[In, Out]) future() Future[Out] {
	return Future[Out]{r: &s.result, gen: s.word.Load() >> stateBits}
}

// refuse returns a slot the pool did not accept to the free list; its
// generation never left the caller, so it is reused as is.
func (s *slot[In, Out]) refuse() {
	var zero In
	s.in = zero
	s.recycle()
}

// run calls the task's function and hands the result out at once: the
// future turns ready and its waiter is woken before the worker looks for
// more work.
func (s *slot[In, Out]) run(w *worker) {
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
	out := s.t.fn(s.in)
	returned = true
	var zero In
	s.in = zero
	s.finish(out, nil)
}

// abandon fails a call that will never run.
func (s *slot[In, Out]) abandon() {
	var zero In
	s.in = zero
	var out Out
	s.finish(out, ErrClosed)
}

// Call runs the task on in, on a worker, and returns its Future. It
// blocks while the queues are full (from a task of the same pool it runs
// queued tasks instead, as Go does). Once the pool is closed the returned
// Future's Wait gives ErrClosed.
func (t *Task[In, Out]) Call(in In) Future[Out] {
	s := t.get()
	s.in = in
	f := s.future()
	if t.p.submit(s, true) != nil {
		s.refuse()
		return Future[Out]{gen: genClosed}
	}
	return f
}

// CallBatch calls the task on every element of ins and stores the futures
// in out[:len(ins)]; it panics if len(out) < len(ins), and never writes
// past len(out). The calls are published with one batch push per queue
// and one doorbell ring, instead of a ring per call. It blocks while the
// queues are full and returns how many calls the pool accepted:
// len(ins), or fewer if the pool closed, in which case the remaining
// futures fail with ErrClosed.
func (t *Task[In, Out]) CallBatch(ins []In, out []Future[Out]) int {
	if len(out) < len(ins) {
		panic(fmt.Sprintf("pool: CallBatch: len(out) is %d, less than len(ins) %d", len(out), len(ins)))
	}
	out = out[:len(ins)]
	var buf [batchChunk]job // on the stack: PushBatch copies the elements out
	accepted := 0
	for i := 0; i < len(ins); i += batchChunk {
		m := min(batchChunk, len(ins)-i)
		for k := range m {
			s := t.get()
			s.in = ins[i+k]
			out[i+k] = s.future()
			buf[k] = s
		}
		n := 0
		if accepted == i { // nothing refused so far
			n = t.p.submitBatch(buf[:m])
		}
		accepted += n
		for k := n; k < m; k++ {
			buf[k].(*slot[In, Out]).refuse()
			out[i+k] = Future[Out]{gen: genClosed}
		}
		clear(buf[:m])
	}
	return accepted
}
