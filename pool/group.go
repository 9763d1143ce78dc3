package pool

import (
	"context"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// Group is a set of tasks run on a pool's workers and waited for
// together, with errgroup.WithContext's contract: the group's context is
// cancelled when the first task fails or when Wait returns, whichever
// comes first, and Wait returns the first error. Make one with NewGroup;
// the zero Group is not usable.
//
// Unlike an errgroup, whose tasks are goroutines, a Group's tasks are
// queued on the pool: they run on its workers, as many at once as it has,
// and Go waits for room like Submit, so a group never holds more than the
// queues do. A task still queued when the group's context is done does
// not run: Stats counts it in SkippedGroup when the group failed, in
// SkippedCtx when the parent context ended.
//
// A Group is for one round of work: every Go must happen before Wait (as
// a sync.WaitGroup's Add must), or from a task of the group. Once Wait
// has returned, the context is done and a later Go is refused, which
// makes the context's error the group's.
type Group struct {
	p      *Pool                   // read-only
	ctx    context.Context         // read-only: the group's context
	cancel context.CancelCauseFunc // read-only

	// pending counts tasks accepted (or being refused) and not finished.
	// Wait returns when it is zero; whoever takes it to zero rings done.
	pending atomic.Int64
	done    knit.Event

	err firstErr
	// failed says the group's context was cancelled by a failure of its
	// own (fail), not by its parent: what a skipped task counts as.
	failed atomic.Bool
}

// NewGroup returns a group running on p, and a context cancelled when the
// first task fails or when Wait returns (errgroup.WithContext's
// contract).
func NewGroup(ctx context.Context, p *Pool) (*Group, context.Context) {
	if ctx == nil {
		panic("pool: NewGroup with a nil context")
	}
	if p == nil {
		panic("pool: NewGroup with a nil *Pool")
	}
	gctx, cancel := context.WithCancelCause(ctx)
	return &Group{p: p, ctx: gctx, cancel: cancel}, gctx
}

// Go queues fn on the group's pool. It waits for room while the queues
// are full, like Submit (from a task of the same pool it runs queued
// tasks instead). A refusal, because the pool is closed or the group's
// context is done, becomes the group's error (unless it has one already)
// and fn does not run. An error fn returns, or its panic as a
// *PanicError, fails the group: the first is what Wait returns, and the
// group's context is cancelled with it as the cause.
func (g *Group) Go(fn func() error) {
	if fn == nil {
		panic("pool: Group.Go of nil func")
	}
	if g.p == nil {
		panic("pool: Group.Go on a Group not made by NewGroup")
	}
	g.pending.Add(1)
	if err := g.p.submitCtx(g.ctx, &groupTask{g: g, fn: fn}); err != nil {
		g.refused(err)
		g.finishOne()
	}
}

// Wait waits until every task given to Go has finished (run, or given up
// because the group's context was done), cancels the group's context,
// and returns the first error: a task's own error, a panic as a
// *PanicError, or a refusal (ErrClosed, or the context's cause).
//
// Called from a task of the group's pool, Wait runs queued tasks while
// the group's are pending, so a group waited for by the pool's own
// workers still runs; a task run that way must not itself wait for the
// waiting task to finish.
func (g *Group) Wait() error {
	if g.p == nil {
		panic("pool: Group.Wait on a Group not made by NewGroup")
	}
	if g.pending.Load() != 0 {
		ready := func() bool { return g.pending.Load() == 0 }
		if w := g.p.self(); w != nil {
			_ = w.helpWait(context.Background(), &g.done, ready)
		} else {
			_ = g.done.WaitFor(context.Background(), ready, waitPark)
		}
	}
	err := g.err.get()
	g.cancel(err)
	return err
}

// fail records err, a task's error or panic or a refusal by the pool, as
// the group's error (if it has none) and cancels the group's context.
func (g *Group) fail(err error) {
	if g.err.set(err) {
		g.failed.Store(true) // before the cancel that skipped tasks see
		g.cancel(err)
	}
}

// refused records why a task was not accepted: the group's context had
// ended (its cause is the error, and nothing new has failed), or the pool
// refused it (ErrClosed), which fails the group.
func (g *Group) refused(err error) {
	if g.ctx.Err() != nil {
		g.err.set(context.Cause(g.ctx))
		return
	}
	g.fail(err)
}

func (g *Group) finishOne() {
	if g.pending.Add(-1) == 0 {
		g.done.NotifyAll()
	}
}

// groupTask is one Group.Go call in the queues.
type groupTask struct {
	g  *Group
	fn func() error
}

func (t *groupTask) run(w *worker) (done uint64) {
	done = 1 // what a recovered panic returns too
	g := t.g
	if g.ctx.Err() != nil {
		// Skipped: the group failed, or its parent context ended.
		if g.failed.Load() {
			w.skippedGroup.inc()
		} else {
			w.skippedCtx.inc()
		}
		g.err.set(context.Cause(g.ctx))
		g.finishOne()
		return 0
	}
	returned := false
	defer func() {
		if !returned {
			g.fail(w.taskPanicked(recover()))
			g.finishOne()
		}
	}()
	err := t.fn()
	returned = true
	if err != nil {
		g.fail(err)
	}
	g.finishOne()
	return 1
}

func (t *groupTask) abandon() int {
	t.g.fail(ErrClosed)
	t.g.finishOne()
	return 1
}

// firstErr keeps the first error given to set. It is one pointer, so that
// readers that see it set (a Map's workers, per item) also see the error.
type firstErr struct{ p atomic.Pointer[error] }

// set records err if no error was recorded, and reports whether it did.
func (f *firstErr) set(err error) bool { return f.p.CompareAndSwap(nil, &err) }

func (f *firstErr) get() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *firstErr) isSet() bool { return f.p.Load() != nil }
