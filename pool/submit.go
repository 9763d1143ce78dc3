package pool

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// Submit runs fn on p and returns its future. It waits for room while the
// queues are full; if ctx ends first, fn never runs and Wait returns
// ctx.Err(). A call still queued when ctx ends is given up the same way
// when a worker reaches it ("Contexts" in the package doc states the
// rule). Otherwise Wait returns what fn returned (its error unchanged, so
// errors.Is and errors.As see it), a *PanicError with the stack if fn
// panicked, or ErrClosed if the pool was closed.
//
// Submit allocates nothing of its own in the steady state: the call's
// slot (result, doorbell) is recycled when Wait takes the value, as
// Task.Call's is; the closure fn is the caller's one allocation, if it
// captures anything. No goroutine, ring or channel is made per call
// (Future.Done makes its channel only when asked). With a ctx that
// cannot end (its Done is nil, as context.Background's is), consecutive
// Submits of one result type travel together in streams, as Task.Call's
// do (see there).
//
// Called from a task of p while the queues are full, Submit runs queued
// tasks until there is room instead of waiting for a worker.
func Submit[T any](ctx context.Context, p *Pool, fn func() (T, error)) Future[T] {
	if fn == nil {
		panic("pool: Submit of nil func")
	}
	if ctx == nil {
		panic("pool: Submit with a nil context")
	}
	if p == nil {
		panic("pool: Submit with a nil *Pool")
	}
	c := cacheFor[T](p)
	if c.stream != nil && ctx.Done() == nil {
		// A ctx that cannot end: nothing about the call needs its own
		// slot, and it travels in the pool's Submit stream for T.
		if f, ok := c.stream.streamCall(&fn); ok {
			return f
		}
	}
	s := c.get()
	f := s.future()
	if err := ctx.Err(); err != nil {
		var zero T
		s.finish(zero, err) // never queued: its Wait returns err at once
		return f
	}
	s.fn, s.ctx = fn, ctx
	if err := p.submitCtx(ctx, s); err != nil {
		s.fn, s.ctx = nil, nil
		var zero T
		s.finish(zero, err)
	}
	return f
}

// fnSlot is one Submit call in flight: the function, its context, and the
// result its Future reads (first, so that the Future's pointer is the
// slot's).
type fnSlot[T any] struct {
	result[T]
	fn    func() (T, error) // written by Submit before the push, cleared by the runner
	ctx   context.Context   // likewise
	cache *fnCache[T]       // read-only
	ev    knit.Event        // see owner.event
}

func (s *fnSlot[T]) future() Future[T] {
	return Future[T]{r: &s.result, gen: s.word.Load() >> stateBits}
}

func (s *fnSlot[T]) recycle(int64)      { s.cache.free.Put(s) }
func (s *fnSlot[T]) event() *knit.Event { return &s.ev }
func (s *fnSlot[T]) pool() *Pool        { return s.cache.p }

// run gives the call up if its context has ended, else calls fn and hands
// the result out at once, as a Task call's run does.
func (s *fnSlot[T]) run(w *worker) (done uint64) { // 0: skipped
	done = 1 // what a recovered panic returns too
	fn, ctx := s.fn, s.ctx
	s.fn, s.ctx = nil, nil
	if err := ctx.Err(); err != nil {
		var zero T
		s.finish(zero, err)
		w.skippedCtx.inc()
		return 0
	}
	returned := false
	defer func() {
		if !returned {
			var zero T
			s.finish(zero, w.taskPanicked(recover()))
		}
	}()
	v, err := fn()
	returned = true
	s.finish(v, err)
	return 1
}

// abandon fails a call that will never run.
func (s *fnSlot[T]) abandon() int {
	s.fn, s.ctx = nil, nil
	var zero T
	s.finish(zero, ErrClosed)
	return 1
}

// fnCache recycles one pool's Submit slots of one result type. A
// sync.Pool suits it: its per-P lists cost no shared line when the same
// goroutine submits and waits, and the collector empties it only of
// slots nobody uses (a slot survives one collection in its victim list).
type fnCache[T any] struct {
	p    *Pool
	free sync.Pool
	// stream is the Task whose streams carry Submits of T with a ctx
	// that cannot end (see Task.Call), or nil where Call does not stream.
	stream *Task[func() (T, error), T]
}

// runSubmitted is a Submit stream's step: the call's function in a
// Task's place, its error kept.
func runSubmitted[T any](e *elem[func() (T, error), T]) { e.out, e.err = e.in() }

// get returns a free slot, its generation pending.
func (c *fnCache[T]) get() *fnSlot[T] {
	if s, ok := c.free.Get().(*fnSlot[T]); ok {
		return s
	}
	s := &fnSlot[T]{cache: c}
	s.owner = s
	s.word.Store(1 << stateBits) // generation 1
	return s
}

// slotCaches maps a result type to its fnCache. Programs submit a handful
// of result types, so it is a short list, copied on write and scanned
// without a lock.
type slotCaches struct {
	list atomic.Pointer[[]slotCache]
	mu   sync.Mutex // serialises writers
}

type slotCache struct {
	key   any // a nil *fnSlot[T]: the interface's type word names T
	cache any // *fnCache[T]
}

// cacheFor returns p's cache for result type T, making it on first use.
func cacheFor[T any](p *Pool) *fnCache[T] {
	key := any((*fnSlot[T])(nil))
	if l := p.caches.list.Load(); l != nil {
		for _, e := range *l {
			if e.key == key {
				return e.cache.(*fnCache[T])
			}
		}
	}
	p.caches.mu.Lock()
	defer p.caches.mu.Unlock()
	var old []slotCache
	if l := p.caches.list.Load(); l != nil {
		old = *l
	}
	for _, e := range old {
		if e.key == key {
			return e.cache.(*fnCache[T])
		}
	}
	c := &fnCache[T]{p: p}
	if streamCap(p.qs) > 0 {
		c.stream = newTask[func() (T, error), T](p, nil, runSubmitted[T])
	}
	l := append(old[:len(old):len(old)], slotCache{key: key, cache: c})
	p.caches.list.Store(&l)
	return c
}

// taskPanicked counts a panic (or runtime.Goexit, v == nil) in a task
// whose result goes to its caller, and returns the *PanicError for it.
func (w *worker) taskPanicked(v any) *PanicError {
	w.panicked.inc()
	if v == nil {
		w.completed.inc() // run's count is skipped: the goroutine is ending
	}
	return panicError(v)
}

// panicError is the *PanicError for a recovered value v (nil: the task
// called runtime.Goexit), with the stack of the calling goroutine.
func panicError(v any) *PanicError {
	if v == nil {
		v = goexitValue
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}
