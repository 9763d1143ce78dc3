package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// Group is a set of tasks run on a pool's workers and waited for
// together, with errgroup.WithContext's contract: the group's context is
// cancelled when the first task fails or when Wait returns, whichever
// comes first, and Wait returns the first error. Make one with NewGroup,
// or with NewGroupCollect for a group that runs every task and returns
// every error; the zero Group is not usable.
//
// Unlike an errgroup, whose tasks are goroutines, a Group's tasks are
// queued on the pool: they run on its workers, as many at once as it has,
// and Go waits for room like Submit, so a group never holds more than the
// queues do. SetLimit bounds it further, as errgroup's does. A task still
// queued when the group's context is done does not run: Stats counts it
// in SkippedGroup when the group failed, in SkippedCtx when the parent
// context ended.
//
// What carries over from errgroup: Go, TryGo, SetLimit and Wait, the first
// error, and the context cancelled at the first failure or at Wait. What
// does not: at most as many tasks run at once as the pool has workers,
// whatever the limit (SetLimit(8) on a two-worker pool runs two), and a
// task that blocks (sleeps, waits for I/O or a lock) holds its worker the
// whole time. A Group is for work that computes; for work that mostly
// waits, use errgroup, whose tasks are goroutines, or a pool sized for
// the waiting (Config.Workers).
//
// A Group is for one round of work: every Go must happen before Wait (as
// a sync.WaitGroup's Add must), or from a task of the group. Once Wait
// has returned, the context is done and a later Go is refused, which
// makes the context's error the group's.
type Group struct {
	p       *Pool                   // read-only
	ctx     context.Context         // read-only: the group's context
	cancel  context.CancelCauseFunc // read-only
	collect bool                    // read-only: NewGroupCollect's group

	// pending counts tasks accepted (or being refused) and not finished:
	// the group's active tasks. Wait returns when it is zero; whoever
	// takes it to zero rings done.
	pending atomic.Int64
	done    knit.Event

	// limit is SetLimit's bound on pending, or -1 for none. While it is
	// set, every task that finishes rings room, where Go waits for the
	// count to fall below it.
	limit atomic.Int64
	room  knit.Event

	err firstErr
	// failed says the group's context was cancelled by a failure of its
	// own (fail), not by its parent: what a skipped task counts as.
	failed atomic.Bool

	// errs is a collecting group's errors, in the order they came.
	mu   sync.Mutex
	errs []error
}

// NewGroup returns a group running on p, and a context cancelled when the
// first task fails or when Wait returns (errgroup.WithContext's
// contract).
func NewGroup(ctx context.Context, p *Pool) (*Group, context.Context) {
	return newGroup(ctx, p, false, "NewGroup")
}

// NewGroupCollect returns a group running on p that runs every task and
// collects every error, and its context. A task's error or panic does
// not cancel the context and skips no other task; Wait returns
// errors.Join of the errors, in the order they happened (nil if there
// were none), so errors.Is and errors.As see each of them. The context
// ends when ctx does (tasks still queued then are skipped) or when Wait
// returns. A refusal, by a closed pool or the ended context, is joined
// once, however many tasks it turned away. Everything else is Group's:
// Go, TryGo, SetLimit, and Wait from a task of the pool.
func NewGroupCollect(ctx context.Context, p *Pool) (*Group, context.Context) {
	return newGroup(ctx, p, true, "NewGroupCollect")
}

func newGroup(ctx context.Context, p *Pool, collect bool, name string) (*Group, context.Context) {
	if ctx == nil {
		panic("pool: " + name + " with a nil context")
	}
	if p == nil {
		panic("pool: " + name + " with a nil *Pool")
	}
	gctx, cancel := context.WithCancelCause(ctx)
	g := &Group{p: p, ctx: gctx, cancel: cancel, collect: collect}
	g.limit.Store(-1)
	return g, gctx
}

// Go queues fn on the group's pool. It waits while the group is at its
// limit (see SetLimit), then for room while the queues are full, like
// Submit (from a task of the same pool it runs queued tasks instead of
// waiting). A refusal, because the pool is closed or the group's context
// is done, becomes the group's error (unless it has one already) and fn
// does not run. An error fn returns, or its panic as a *PanicError, fails
// the group: the first is what Wait returns, and the group's context is
// cancelled with it as the cause (a collecting group keeps them all and
// cancels nothing).
func (g *Group) Go(fn func() error) {
	g.check(fn, "Go")
	if g.limit.Load() < 0 {
		g.pending.Add(1)
	} else if err := g.acquire(); err != nil {
		g.pending.Add(1) // refused like a submit: finishOne balances it
		g.refused(err)
		g.finishOne()
		return
	}
	if err := g.p.submitCtx(g.ctx, &groupTask{g: g, fn: fn}); err != nil {
		g.refused(err)
		g.finishOne()
	}
}

// TryGo is Go that never waits: it queues fn only if the group is below
// its limit and a queue has room, and reports whether it did, as
// errgroup's TryGo reports whether it started a goroutine. At the limit
// or with every queue full it returns false and fn does not run; the
// group's error is untouched. A refusal, because the pool is closed or
// the group's context is done, returns false too, and becomes the group's
// error as it does in Go.
func (g *Group) TryGo(fn func() error) bool {
	g.check(fn, "TryGo")
	if !g.tryAcquire() {
		return false
	}
	if err := g.ctx.Err(); err != nil {
		g.refused(err)
		g.finishOne()
		return false
	}
	switch err := g.p.submit(&groupTask{g: g, fn: fn}, false); err {
	case nil:
		return true
	case errFull:
		g.finishOne()
		return false
	default:
		g.refused(err)
		g.finishOne()
		return false
	}
}

// SetLimit limits the group to n active tasks (queued or running), as
// errgroup's SetLimit limits its goroutines: Go then waits while n are
// active, and TryGo reports false. A negative n removes the limit (and
// frees any Go waiting on it); zero lets no task in, so Go waits until the
// group's context ends, which refuses its task. As errgroup's rule says,
// the limit must not be modified while tasks of the group are active:
// SetLimit(n) with n >= 0 panics then, as errgroup's does.
//
// A Go at the limit called from a task of the group's pool runs queued
// tasks while it waits, as a Wait there does. A task of the group that
// calls Go at the limit waits for a slot that it holds itself, with
// errgroup as with Group: at a limit of one it waits forever.
func (g *Group) SetLimit(n int) {
	if g.p == nil {
		panic("pool: Group.SetLimit on a Group not made by NewGroup")
	}
	if n < 0 {
		g.limit.Store(-1)
		g.room.NotifyAll()
		return
	}
	if active := g.pending.Load(); active != 0 {
		panic(fmt.Sprintf("pool: Group.SetLimit(%d) while %d tasks of the group are active", n, active))
	}
	g.limit.Store(int64(n))
}

func (g *Group) check(fn func() error, method string) {
	if fn == nil {
		panic("pool: Group." + method + " of nil func")
	}
	if g.p == nil {
		panic("pool: Group." + method + " on a Group not made by NewGroup")
	}
}

// tryAcquire counts one more active task if the limit allows it.
func (g *Group) tryAcquire() bool {
	for {
		l, n := g.limit.Load(), g.pending.Load()
		if l >= 0 && n >= l {
			return false
		}
		if g.pending.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// acquire is tryAcquire that waits, on room, until the limit allows it
// or the group's context ends (then it returns the context's error). A
// worker of the pool waits by running queued tasks, which may be the
// group's own.
func (g *Group) acquire() error {
	below := func() bool {
		l := g.limit.Load()
		return l < 0 || g.pending.Load() < l
	}
	self, selfKnown := (*worker)(nil), false
	for !g.tryAcquire() {
		if !selfKnown {
			self, selfKnown = g.p.self(), true
		}
		var err error
		if self != nil {
			err = self.helpWait(g.ctx, &g.room, below)
		} else {
			err = g.room.WaitFor(g.ctx, below, waitPark)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Wait waits until every task given to Go has finished (run, or given up
// because the group's context was done), cancels the group's context,
// and returns the first error: a task's own error, a panic as a
// *PanicError, or a refusal (ErrClosed, or the context's cause). A
// collecting group's Wait returns them all, joined.
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
	var err error
	if g.collect {
		g.mu.Lock()
		err = errors.Join(g.errs...)
		g.mu.Unlock()
	} else {
		err = g.err.get()
	}
	g.cancel(err)
	return err
}

// fail records err, a task's error or panic or a refusal by the pool: as
// the group's error (if it has none), cancelling the group's context; or
// in a collecting group, as one more error.
func (g *Group) fail(err error) {
	if g.collect {
		g.mu.Lock()
		g.errs = append(g.errs, err)
		g.mu.Unlock()
		return
	}
	if g.err.set(err) {
		g.failed.Store(true) // before the cancel that skipped tasks see
		g.cancel(err)
	}
}

// ended records the group's context's cause as its error when a task
// was refused or skipped because the context was done: nothing new
// failed, and a collecting group records it once.
func (g *Group) ended() {
	cause := context.Cause(g.ctx)
	if !g.collect {
		g.err.set(cause)
		return
	}
	g.joinOnce(cause)
}

// joinOnce adds err to a collecting group's errors unless it is there.
func (g *Group) joinOnce(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.errs {
		if e == err {
			return
		}
	}
	g.errs = append(g.errs, err)
}

// refused records why a task was not accepted: the group's context had
// ended (see ended), or the pool refused it (ErrClosed), which fails a
// group and is joined once into a collecting group's errors.
func (g *Group) refused(err error) {
	switch {
	case g.ctx.Err() != nil:
		g.ended()
	case g.collect:
		g.joinOnce(err)
	default:
		g.fail(err)
	}
}

func (g *Group) finishOne() {
	if g.pending.Add(-1) == 0 {
		g.done.NotifyAll()
	}
	if g.limit.Load() >= 0 {
		g.room.Notify(1)
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
		g.ended()
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
	t.g.refused(ErrClosed)
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
