// Package inboxpool is a small worker pool built twice, on knit's rings
// (Pool) and on channels (ChanPool), the same design in each, so that
// the two can be measured side by side (knitbench's handoff suite runs
// both) and read side by side.
//
// The design is the one knit's own pool uses for pool.Go, cut to its
// core: each worker owns an inbox, Go puts the task in the next worker's
// inbox (round robin) and the worker drains its inbox, parking only when
// it is empty. A submitter waits only while the inbox it picked is full.
// The per-task handoff to a parked worker, which ants and most pools
// make, costs two goroutine switches per task; here a busy worker takes
// task after task without one, and a submitter wakes a worker only when
// that worker has run out of work.
//
// What knit brings, line by line:
//
//   - the inbox is a knit.MPSC: a push that finds its worker running
//     costs no wake (the doorbell is one load), and the worker takes up
//     to 64 tasks with one claim of the ring (PopBatch);
//   - Close is the ring's: it stops intake at once, every task pushed
//     before it still runs, and a Go that was waiting for room gets
//     knit.ErrClosed. The channel version needs a lock around every send
//     for the same guarantee (a send on a closed channel panics).
//
// A task that panics crashes the program, as `go f()` would.
package inboxpool

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// batch is how many tasks a worker takes from its inbox at once: the
// largest batch knitbench's rings suite measures, where a batch's cost per
// item is lowest (BENCHMARKS.md, "Rings").
const batch = 64

// Pool runs tasks on a fixed set of workers, each with a knit.MPSC
// inbox. The zero Pool is not usable; create one with New.
type Pool struct {
	inboxes []*knit.MPSC[func()]
	next    atomic.Uint64 // round robin over inboxes
	done    sync.WaitGroup
}

// New starts workers goroutines, each with an inbox of queue tasks. It
// panics if workers < 1, or if queue is out of knit's ring range.
func New(workers, queue int) *Pool {
	if workers < 1 {
		panic("inboxpool: New needs at least one worker")
	}
	p := &Pool{}
	for range workers {
		in := knit.NewMPSC[func()](queue, knit.Park{})
		p.inboxes = append(p.inboxes, in)
		p.done.Go(func() { work(in) })
	}
	return p
}

// work runs its inbox's tasks until the inbox is closed and drained.
func work(in *knit.MPSC[func()]) {
	buf := make([]func(), batch)
	for {
		n, err := in.PopBatch(context.Background(), buf)
		for i := range n {
			buf[i]()
			buf[i] = nil // the task's closure is garbage once run
		}
		if err != nil { // knit.ErrClosed: closed and drained
			return
		}
	}
}

// Go runs f on one of the workers, waiting while that worker's inbox is
// full. After Close it returns knit.ErrClosed and f does not run.
func (p *Pool) Go(f func()) error {
	in := p.inboxes[p.next.Add(1)%uint64(len(p.inboxes))]
	return in.Push(context.Background(), f)
}

// Close stops intake, lets the workers run every task already queued,
// and returns once they have.
func (p *Pool) Close() {
	for _, in := range p.inboxes {
		in.Close()
	}
	p.done.Wait()
}
