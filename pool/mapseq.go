package pool

import (
	"context"
	"iter"
)

// mapStreamPerWorker is how many elements of a MapStream are in flight
// per worker (queued, running, or done and not yet yielded). One would
// leave a worker idle behind every slow element at the head; four keep
// the workers busy through a head that takes a few times the average,
// and hold that few results.
const mapStreamPerWorker = 4

// MapStream runs fn over the elements of seq on p and yields their
// results in input order while later ones are still being computed, as
// rill's OrderedMap does: each result as soon as it and every one before
// it are done. At most four elements per worker are in flight (read from
// seq and not yet yielded); seq is read, on the ranging goroutine, only
// as the window has room, and nothing else runs seq or the loop body.
//
// It ends at the first error, yielding it once with the zero Out: what fn
// returned, unchanged; a panic in fn as a *PanicError; ErrClosed if the
// pool is closed; or ctx.Err() once ctx ends (no result is yielded after
// that, ready or not). The results before it have been yielded; none
// after it is. A loop body that breaks ends it too.
// However it ends, the loop ends only once the elements it read have
// settled: those still queued are skipped (Stats counts them in
// SkippedCtx) and those running are waited for, so nothing of the stream
// runs after the loop and no goroutine is left (none is made). A ctx
// already done when the loop starts yields ctx.Err() and reads nothing.
//
// Each element is one Submit on p (the closure is its one allocation).
// Ranged over from a task of p, the stream's waits run queued tasks, as
// Future.Wait does there.
func MapStream[In, Out any](ctx context.Context, p *Pool, seq iter.Seq[In], fn func(In) (Out, error)) iter.Seq2[Out, error] {
	checkMap(ctx, p, seq, fn, "MapStream")
	return func(yield func(Out, error) bool) {
		var zero Out
		if err := ctx.Err(); err != nil {
			yield(zero, err)
			return
		}
		s := newStream[Out](ctx, p)
		defer s.settle()
		for v := range seq {
			if err := ctx.Err(); err != nil {
				yield(zero, err)
				return
			}
			s.push(Submit(s.sub, p, func() (Out, error) { return fn(v) }))
			// Yield what is ready, and wait for the head while the window
			// is full: v was in it as soon as seq produced it, so seq is
			// read again only once there is room.
			for s.n > 0 {
				out, err, ok := s.take(s.n == len(s.fs))
				if !ok {
					break
				}
				if err != nil {
					s.cancel() // skip the queued elements while the body sees err
					yield(zero, err)
					return
				}
				if !yield(out, nil) {
					return
				}
			}
		}
		for s.n > 0 {
			out, err, _ := s.take(true)
			if err != nil {
				s.cancel()
				yield(zero, err)
				return
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// MapSeq is Map over the elements of seq: it returns fn's results in
// input order, or the first error (the elements after it are not read,
// those in flight are skipped or waited for, as in MapStream, whose
// window it reads seq through). A ctx already done returns ctx.Err() and
// reads nothing.
func MapSeq[In, Out any](ctx context.Context, p *Pool, seq iter.Seq[In], fn func(In) (Out, error)) ([]Out, error) {
	checkMap(ctx, p, seq, fn, "MapSeq")
	out := []Out{}
	for v, err := range MapStream(ctx, p, seq, fn) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func checkMap[In, Out any](ctx context.Context, p *Pool, seq iter.Seq[In], fn func(In) (Out, error), name string) {
	switch {
	case fn == nil:
		panic("pool: " + name + " of nil func")
	case ctx == nil:
		panic("pool: " + name + " with a nil context")
	case p == nil:
		panic("pool: " + name + " with a nil *Pool")
	case seq == nil:
		panic("pool: " + name + " of a nil iter.Seq")
	}
}

// stream is one MapStream loop: the futures in flight, oldest at head, in
// a ring of the window's size.
type stream[Out any] struct {
	ctx    context.Context // the caller's
	sub    context.Context // the elements': ended with the stream
	cancel context.CancelFunc
	fs     []Future[Out]
	head   int
	n      int
}

func newStream[Out any](ctx context.Context, p *Pool) *stream[Out] {
	sub, cancel := context.WithCancel(ctx)
	return &stream[Out]{
		ctx: ctx, sub: sub, cancel: cancel,
		fs: make([]Future[Out], mapStreamPerWorker*len(p.workersNow())),
	}
}

func (s *stream[Out]) push(f Future[Out]) {
	s.fs[(s.head+s.n)%len(s.fs)] = f
	s.n++
}

// take takes the head's result: waiting for it if wait is set, else only
// if it is ready (ok false: it is not). A Wait cut short by the caller's
// ctx leaves the head in place for settle, and returns ctx.Err().
func (s *stream[Out]) take(wait bool) (out Out, err error, ok bool) {
	if err := s.ctx.Err(); err != nil {
		return out, err, true // ready results too: the stream is over
	}
	f := s.fs[s.head]
	if wait {
		out, err = f.Wait(s.ctx)
		if err != nil && s.ctx.Err() != nil {
			return out, s.ctx.Err(), true
		}
	} else if out, err, ok = f.r.take(f.gen); !ok {
		return out, nil, false
	}
	s.fs[s.head] = Future[Out]{}
	s.head = (s.head + 1) % len(s.fs)
	s.n--
	return out, err, true
}

// settle ends the elements' context, so those still queued are skipped,
// and waits for every element in flight, dropping the results.
func (s *stream[Out]) settle() {
	s.cancel()
	for ; s.n > 0; s.n-- {
		_, _ = s.fs[s.head].Wait(context.Background())
		s.fs[s.head] = Future[Out]{}
		s.head = (s.head + 1) % len(s.fs)
	}
}
