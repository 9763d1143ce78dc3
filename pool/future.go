package pool

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/relstore"
	"github.com/knit-go/knit/internal/sched"
)

// Future is the pending result of one Task.Call or Submit. It is a small
// value (a pointer and a generation) that may be copied freely; its value
// can be taken once, by one Wait.
//
// The zero Future stands for no call: its Wait returns ErrZeroFuture and
// its Done returns a nil channel, which never fires. So a select loop
// disables a Future's case by setting the Future to its zero value, as it
// would set a channel to nil (see ExampleFuture_Done).
type Future[Out any] struct {
	r *result[Out]
	// gen is the generation of r this future belongs to: the slot behind
	// r is recycled once its value is taken, and a later Call reuses it
	// with gen+1. genClosed with r == nil marks a call the pool refused.
	gen uint64
}

// genClosed is Future.gen of a Future whose call was refused (pool closed).
const genClosed = 1

// The result word packs a generation, three flags and a state:
// gen<<stateBits | filled? | waiting? | doneWanted? | ready?. Every
// transition is one atomic operation on it, so a stale Future (one whose
// value was taken, its slot perhaps reused) is told apart by an atomic
// load, never by touching fields someone else now owns.
const (
	stateBits = 4

	pending = 0 // the task has not finished; the runner owns out and err
	ready   = 1 // out and err hold the result; the Wait that moves the word on owns them

	// doneWanted says a Done installed its channel in ch for this
	// generation (set while pending, cleared with the generation).
	doneWanted = 2
	// waiting says a Wait is registered on the owner's event, or about to
	// sleep there, for this generation: the runner rings that event only
	// then, so a result nobody sleeps on costs the runner one atomic Or.
	// Set while pending, cleared with the generation.
	waiting = 4
	// filled (8) marks a Call stream's call whose argument is written;
	// see callstream.go.
)

// result is the part of a call's slot that Future sees: everything but the
// argument and the task, so that Future is generic in Out alone. The
// fields a call touches (word, out, err, and the argument the slot puts
// right after) come first, so that with small types a call's whole
// handoff is one cache line each way; what only a sleeper needs (the
// event) lives in the owner.
type result[Out any] struct {
	// word is gen<<stateBits | flags | state. Transitions, each by one
	// writer:
	//
	//	pending -> ready   the worker that ran the call (or Shutdown's
	//	                   abandon), after writing out and err; an Or,
	//	                   which returns the flags as they were
	//	ready -> (gen+1)<<stateBits | pending
	//	                   the Wait that wins the CAS, which then copies
	//	                   the result out and clears it, and recycles the
	//	                   slot: nobody can queue the slot again before
	//	                   that, so nobody writes out or err meanwhile
	//
	// and, while pending, +doneWanted by the Done that installed ch and
	// +waiting by a Wait that registered on the owner's event (CASes, so
	// they fail once the state has moved on). A Call stream's call (see
	// callstream.go) has filled set from its Call's fill on; the Wait
	// that takes it keeps filled in its CAS and clears it with a store
	// once it is done with out and err, since the stream is reused
	// without a recycle.
	word atomic.Uint64

	out Out   // guarded by word: see the transitions
	err error // likewise

	// ch is Done's channel for one generation, nil until a Done asks for
	// it, so a Future that is only Waited on allocates nothing and its
	// runner and Wait touch nothing more than the word. Done installs
	// the channel, then sets doneWanted with a CAS that needs the state
	// pending. If the CAS fails the call finished first and Done closes
	// the channel itself; if it succeeds, the runner's Or sees the flag
	// and closes it, and so does the Wait that takes the value (the runner
	// may load ch only after the slot has been reused), doneChan.close
	// making that once. A channel of an older generation left in ch is
	// never closed for a later one.
	ch atomic.Pointer[doneChan]

	owner owner // read-only: the slot, batch or stream this result belongs to
}

// owner is what a result belongs to: a Call's slot, a CallBatch's packet,
// a Submit's slot. Only the taking Wait and the slow paths call it.
type owner interface {
	// recycle is called by the Wait that took the value, or by WaitAll
	// once for the k values of this owner it took in a row.
	recycle(k int64)
	// event is where a Wait on the result sleeps: the runner rings it
	// (NotifyAll) after the word turns ready if the waiting flag was set.
	event() *knit.Event
	// pool is the pool the call runs on.
	pool() *Pool
}

// doneChan is the channel Done returns, for one generation of a result.
type doneChan struct {
	gen    uint64 // read-only
	closed atomic.Bool
	c      chan struct{}
}

// close closes d's channel if d belongs to generation gen, once.
func (d *doneChan) close(gen uint64) {
	if d.gen == gen && d.closed.CompareAndSwap(false, true) {
		close(d.c)
	}
}

// closedChan is Done's channel for a Future whose Wait would not block.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// finish publishes the result and tells whoever asked. Called by the
// slot's runner while the word is pending.
func (r *result[Out]) finish(out Out, err error) {
	r.out = out
	r.finished(err)
}

// finished is finish with out written already (by the runner, straight
// from the task's return: a large Out passed on is one more copy).
func (r *result[Out]) finished(err error) {
	r.err = err
	if w := r.word.Or(ready); w&(waiting|doneWanted) != 0 {
		// From the Or on the slot may be taken and reused: the ring may
		// reach a later generation's waiters (a spurious wake: they
		// re-check), and closeDone checks the channel's generation.
		if w&waiting != 0 {
			r.owner.event().NotifyAll()
		}
		r.closeDone(w)
	}
}

// closeDone closes Done's channel if w, the word before ready was set,
// says one was installed.
func (r *result[Out]) closeDone(w uint64) {
	if w&doneWanted != 0 {
		if d := r.ch.Load(); d != nil {
			d.close(w >> stateBits)
		}
	}
}

// take returns the result if the future's generation is ready, claiming
// it and recycling its slot; ok is false while the call is still pending.
func (r *result[Out]) take(gen uint64) (v Out, err error, ok bool) {
	ok, _, err = r.claim(gen, true, &v)
	return v, err, ok
}

// claim is take that leaves the recycling to the caller unless recycle
// is set: mine reports that this call took the value, and so owes its
// owner a recycle. The value goes to *v, untouched unless mine: the
// caller's own variable, so that a large Out is copied once on its way
// out (each result passed back by value is one more copy).
func (r *result[Out]) claim(gen uint64, recycle bool, v *Out) (ok, mine bool, err error) {
	w := r.word.Load()
	switch {
	case w>>stateBits != gen:
		return true, false, ErrFutureUsed
	case w&ready == 0:
		return false, false, nil
	case !r.word.CompareAndSwap(w, (gen+1)<<stateBits|w&filled):
		// Flags change only while pending: another Wait took the value.
		return true, false, ErrFutureUsed
	}
	*v, err = r.out, r.err
	var zero Out
	r.out, r.err = zero, nil // the slot must not keep the result alive
	if w&doneWanted != 0 {
		if d := r.ch.Load(); d != nil {
			d.close(gen) // the runner may not have reached it yet
		}
		r.ch.Store(nil)
	}
	if w&filled != 0 {
		// A Call stream's call: its stream is reused once every word
		// reads (gen+1)<<stateBits exactly (see callstream.go), so the
		// CAS kept filled, which says this Wait still reads and clears
		// the result, and this store says it is done.
		relstore.Store(&r.word, (gen+1)<<stateBits)
	}
	if recycle {
		r.owner.recycle(1)
	}
	return true, true, err
}

// poll is take for a Wait registered on the owner's event: while the
// call is pending it sets the waiting flag, so that the runner rings.
// The flag is set after the registration and the runner's Or comes after
// its result, both on the word: either the Or sees the flag and the ring
// finds the waiter registered, or the flag's CAS sees ready and poll
// takes the value.
func (r *result[Out]) poll(gen uint64) (v Out, err error, ok bool) {
	for {
		w := r.word.Load()
		if w>>stateBits != gen || w&ready != 0 {
			return r.take(gen)
		}
		if w&waiting != 0 || r.word.CompareAndSwap(w, w|waiting) {
			return v, nil, false
		}
	}
}

// Wait returns the call's result: fn's return values (Submit) or return
// value and nil (Task), or a *PanicError if fn panicked, or ErrClosed if
// the pool refused or abandoned the call, or the context's error if a
// Submit or CallContext call was given up before it ran, or ErrZeroFuture
// for the zero Future. It blocks until the result is ready or ctx ends;
// on ctx's end it returns ctx.Err() and the Future stays usable. A ctx
// already done makes Wait return ctx.Err() at once, even with the result
// ready, as every call with a done ctx in knit does. Once a Wait has
// returned the result, the Future is spent: later Waits, and a Wait on a
// copy, return ErrFutureUsed.
//
// The worker rings the Future's doorbell only if a Wait is registered on
// it, so a Wait that finds the result ready costs no wake at all.
//
// Called from a task of the same pool, Wait does not park its worker
// while the call is pending: the worker runs queued tasks meanwhile, so
// a pool whose every worker waits on calls still runs them. A task run
// that way must not itself wait for the waiting task to finish.
func (f Future[Out]) Wait(ctx context.Context) (v Out, err error) {
	if err := ctx.Err(); err != nil {
		return v, err // a done ctx does nothing: the Future stays usable
	}
	r := f.r
	if r == nil {
		if f.gen == genClosed {
			return v, ErrClosed
		}
		return v, ErrZeroFuture
	}
	// The value goes straight to the named result: a large Out copied
	// into a local and then out is one copy more.
	if ok, _, err := r.claim(f.gen, true, &v); ok {
		return v, err
	}
	v, err, _ = f.wait(ctx)
	return v, err
}

// wait is Wait once the value was found pending. stopped reports that
// ctx ended first: err is ctx.Err(), and the future is still usable.
func (f Future[Out]) wait(ctx context.Context) (v Out, err error, stopped bool) {
	r := f.r
	o := r.owner
	// Yield once first. A Call readies a parked worker onto the caller's
	// P, where it runs once the caller gives the P up, and a worker that
	// finds its queue empty after a task yields once before it registers
	// (see worker.loop): so the result is most often ready when this
	// goroutine resumes, and neither side registered, parked or rang a
	// doorbell. A result that comes from a worker on another P costs the
	// yield, one pass through the scheduler, before the park. Without it
	// a CallBatch's packets come back late enough to be allocated anew
	// (TestZeroAllocs).
	sched.Yield()
	if v, err, ok := r.take(f.gen); ok {
		return v, err, false
	}
	if w := o.pool().self(); w != nil {
		return f.help(ctx, w)
	}
	ev := o.event()
	for {
		t := ev.Prepare()
		if v, err, ok := r.poll(f.gen); ok {
			ev.Cancel(t)
			return v, err, false
		}
		if err := ev.Wait(ctx, t, waitPark); err != nil {
			return v, err, true
		}
		if v, err, ok := r.take(f.gen); ok {
			return v, err, false
		}
	}
}

// help is wait on a worker of the call's own pool.
func (f Future[Out]) help(ctx context.Context, w *worker) (v Out, err error, stopped bool) {
	r := f.r
	taken := false
	werr := w.helpWait(ctx, r.owner.event(), func() bool {
		v, err, taken = r.poll(f.gen)
		return taken
	})
	if werr != nil {
		var zero Out
		return zero, werr, true
	}
	return v, err, false
}

// Done returns a channel that is closed when the result is ready, so
// that a Wait would not block; for select. The channel is made by the
// first Done of a call (a Future that is only Waited on allocates
// nothing) and shared by copies of the Future. After the value was taken
// it is closed, as it is for a refused call. The zero Future's is nil: a
// select case on it never fires.
func (f Future[Out]) Done() <-chan struct{} {
	r := f.r
	if r == nil {
		if f.gen == genClosed {
			return closedChan
		}
		return nil // the zero Future
	}
	var d *doneChan
	for {
		w := r.word.Load()
		if w>>stateBits != f.gen || w&ready != 0 {
			if d != nil {
				d.close(f.gen) // installed, but the runner finished first
			}
			return closedChan
		}
		if w&doneWanted != 0 { // another Done installed it
			if c := r.ch.Load(); c != nil && c.gen == f.gen {
				return c.c
			}
			continue // the word moves on in a moment: taken, or a new generation
		}
		if d == nil {
			d = &doneChan{gen: f.gen, c: make(chan struct{})}
			old := r.ch.Load()
			if old != nil && old.gen == f.gen {
				d = nil // a concurrent Done is about to set the flag
				runtime.Gosched()
				continue
			}
			if !r.ch.CompareAndSwap(old, d) {
				d = nil
				continue
			}
		}
		if r.word.CompareAndSwap(w, w|doneWanted) {
			return d.c
		}
	}
}

// WaitAll waits for the futures of fs in order and stores their values in
// out[:len(fs)]; it panics if len(out) < len(fs). It returns len(fs) and
// nil when every call succeeded. Otherwise it stops at the first future
// that failed and returns how many it took, that one included (its value
// in out is what Wait returned with the error), and that future's error;
// or, if ctx ends while it waits, how many it took before and ctx.Err().
// The futures it did not take stay usable.
//
// It is Knitting's await of every call of a batch: with CallBatch, the
// slots of the batch go back to the task in bulk, once per group of
// calls rather than once per call, as a loop of Wait would.
func WaitAll[Out any](ctx context.Context, fs []Future[Out], out []Out) (int, error) {
	if len(out) < len(fs) {
		panic(fmt.Sprintf("pool: WaitAll: len(out) is %d, less than len(fs) %d", len(out), len(fs)))
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var held *batchHome // the packet of the last values taken, owed k recycles
	var k int64
	defer func() {
		if held != nil {
			held.recycle(k)
		}
	}()
	for i, f := range fs {
		r := f.r
		if r == nil { // refused, or the zero Future
			v, err := f.Wait(ctx)
			out[i] = v
			return i + 1, err
		}
		var v Out
		ok, mine, err := r.claim(f.gen, false, &v)
		if mine {
			if h, batch := r.owner.(*batchHome); !batch {
				r.owner.recycle(1)
			} else if h != held {
				if held != nil {
					held.recycle(k)
				}
				held, k = h, 1
			} else {
				k++
			}
		} else if !ok {
			var stopped bool
			if v, err, stopped = f.wait(ctx); stopped {
				return i, err
			}
		}
		out[i] = v
		if err != nil {
			return i + 1, err
		}
	}
	return len(fs), nil
}
