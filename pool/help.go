package pool

import (
	"context"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// A task that waits on its own pool. Future.Wait, Group.Wait, Map and a
// blocking submit called from a task would, done the plain way, park the
// worker that runs the task; with every worker parked like that (one
// worker is enough) nothing runs the tasks they wait for, and the pool
// deadlocks without a word. So a worker that waits on its own pool helps
// instead (as work-stealing pools do): it runs queued tasks, the ones it
// could take in its loop, until what it waits for is done.
//
// Who is a worker. The pool records, per worker, the goroutine running it
// (its slot in its id block's gids, written by the worker at start and
// cleared before it exits), and a wait compares the calling goroutine
// with them (self). curg is one instruction where the g register or slot
// can be read; elsewhere it starts a goroutine that reads its creator's
// id from its own one-frame stack trace (curgSpawn, the same cost at any
// depth: the waiter's own trace grows with every level of nesting), and
// self asks only when a worker is in a task.
//
// Parking while helping. A helping worker that finds no task to run parks
// on the event of what it waits for (a result's, a group's, a map's), so
// that event's ring wakes it as it wakes any waiter. But a task published
// while it sleeps must wake it too: the other workers may all be parked
// the same way. So it also sets its bit in Pool.nested, after Prepare and
// before re-checking the queues, and publishes its event in nestEv; ring
// claims set bits there after the publish and rings those events. The
// argument is the one for the idle bits in sleepers.go: the publisher pushes
// then loads the bits, the worker sets its bit (always a store: it clears
// the bit itself when it wakes) then re-checks the queues, so one of them
// sees the other. A claim that reaches a worker after it left the wait
// rings an event it may no longer be registered on: a spurious wake of
// whoever is, who re-checks.

// gidSlot is one worker's goroutine, 0 while none runs it. Slots sit side
// by side so that self scans a few lines, not one per worker.
type gidSlot struct{ atomic.Uintptr }

// self returns the worker of p that the calling goroutine runs, or nil
// when the caller is not one of p's workers (then it is inside no task of
// p, since tasks run only on workers). A worker is in every set published
// while it runs, so the set's ids cover it.
func (p *Pool) self() *worker {
	if !curgCheap && !p.inTask() {
		return nil // the costly curg is needed only when a task may be calling
	}
	g := curg()
	if g == 0 {
		return nil
	}
	s := p.set.Load()
	for bi, b := range s.blocks {
		for k := range min(64, s.ids-bi*64) {
			if b.gids[k].Load() == g {
				return b.ws[k].Load()
			}
		}
	}
	return nil
}

// inTask reports whether some worker of p is running a task: it has taken
// more tasks than it has completed or skipped. The counters are the
// worker's own, so this costs the hot paths nothing. taken is read last:
// while the caller runs a task of w, the sum read before it is below it.
func (p *Pool) inTask() bool {
	for _, w := range p.set.Load().all {
		if w.completed.load()+w.skippedGroup.load()+w.skippedCtx.load() != w.taken.load() {
			return true
		}
	}
	return false
}

// helpWait runs queued tasks on w until ready reports true, parking on ev
// (which whoever makes ready true rings) when there is nothing to run. It
// returns nil once ready, or ctx.Err() if ctx ends first.
//
// A task w runs here sits on top of the waiting task's stack, and the
// wait returns only after it: a helped task that itself waits for the
// waiting task to finish would wait forever, which the doc of every
// waiting method tells callers.
func (w *worker) helpWait(ctx context.Context, ev *knit.Event, ready func() bool) error {
	if w.fr.pk != nil {
		w.fr.pk.settle(w) // waiting inside a call of a packet: see batch.go
	}
	// rung: a ring claimed w's nested bit, counting w woken, since w's
	// last look at the queues. Leaving without another look passes it
	// on (see passRing).
	rung := false
	for {
		if ready() {
			if rung {
				w.passRing()
			}
			return nil
		}
		// A done ctx runs no more of the queue: the caller gets ctx.Err()
		// as promptly as a parked Wait would.
		if err := ctx.Err(); err != nil {
			if rung {
				w.passRing()
			}
			return err
		}
		rung = false // the look answers it
		if j := w.next(); j != nil {
			w.run(j)
			continue
		}
		t := ev.Prepare()
		w.nestEnter(ev)
		if ready() {
			ev.Cancel(t)
			if w.nestLeave() {
				w.passRing()
			}
			return nil
		}
		if j := w.next(); j != nil {
			ev.Cancel(t)
			if w.nestLeave() {
				w.passRing()
			}
			w.run(j)
			continue
		}
		err := ev.Wait(ctx, t, waitPark)
		rung = w.nestLeave()
		if err != nil {
			if rung {
				w.passRing()
			}
			return err
		}
	}
}

// nestEnter publishes ev as the event w parks on and sets w's nested bit,
// then fences: the caller re-checks the queues next.
func (w *worker) nestEnter(ev *knit.Event) {
	w.nestEv.Store(ev)
	w.blk.nested.mark(w.bit)
	storeLoadFence()
}

// nestLeave clears w's nested bit, unless a publisher claimed it
// already, and reports whether one did (and may have counted w woken).
func (w *worker) nestLeave() (rung bool) {
	rung = !w.blk.nested.claim(w.bit)
	w.nestEv.Store(nil)
	return rung
}

// ringNested wakes up to n workers of a stealing pool that are parked in
// a wait of their own (any of them can take any task). A bit of a worker
// that has left names nobody and is not counted. A retiring worker is
// rung but not counted, as in ringAsleep: it steals while it waits, but
// if its wait ends first it runs only its own queue and leaves, and the
// wake would be lost (Resize rings for the active queues after it marks
// workers retiring; see shrink).
func (s *workerSet) ringNested(n int) {
	s.ringClaimed(n, func(b *idBlock) *sleeperWord { return &b.nested }, func(v *worker) bool {
		return v.ringNest() && !v.retiring.Load()
	})
}

// ringNest rings the event w is parked on in its own wait, if any still,
// and reports whether there was one: a worker that has left its wait
// takes no wake, and ringNested then rings the next bit.
func (w *worker) ringNest() bool {
	ev := w.nestEv.Load()
	if ev != nil {
		ev.NotifyAll()
	}
	return ev != nil
}

// wakeNested rings every worker parked in a wait of its own (Shutdown's
// expiry: they must see that they may no longer take tasks).
func (p *Pool) wakeNested() {
	for _, w := range p.set.Load().all {
		w.ringNest()
	}
}
