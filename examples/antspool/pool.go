// Package antspool is a worker pool with the contract of ants
// (github.com/panjf2000/ants/v2), built on knit.Slot (New) and on
// channels (NewChan): the same design in each, the handoff swapped, so
// the two can be measured side by side (knitbench's handoff suite runs
// both) and read side by side.
//
// The contract, ants' own:
//
//   - the capacity counts goroutines: at most capacity tasks run at once,
//     each on a worker goroutine of its own, started when first needed
//     and kept (idle, parked) for the next task;
//   - Submit hands the task to an idle worker, or starts one while fewer
//     than capacity run, or else waits for a worker to come free; with
//     Nonblocking it returns ErrOverload instead of waiting, and with
//     MaxBlockingTasks it returns ErrOverload once that many submitters
//     wait already;
//   - Running, Free, Waiting and Cap report the pool's state;
//   - Close stops intake (Submit returns knit.ErrClosed, and so does every
//     Submit waiting at that moment), lets the running tasks finish, and
//     returns once every worker goroutine has exited.
//
// A task may block as long as it likes (sleep, wait on I/O): it holds its
// worker, and the pool's capacity, until it returns, as in ants. That is
// why each task is handed to an idle worker rather than queued in a
// worker's inbox (examples/inboxpool): a queued task would wait behind a
// blocked one while other workers sat idle, and Submit would not block
// when every goroutine is busy. The handoff, one per task, is a knit.Slot
// of the worker's own: the submitter puts the task, the worker takes it,
// and a Put that wakes the worker from a park yields the submitter's P
// to it, so the task runs at once (knit.Slot; docs/pool-authors.md,
// "Handoff or Notify").
//
// Left out of ants' contract: idle-worker expiry (an idle worker here is
// a parked goroutine, and costs memory but no CPU), Tune, Reboot, the
// panic handler (a task that panics crashes the program, as `go f()`
// would), and PreAlloc.
package antspool

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// ErrOverload is Submit's answer when it would wait for a worker and
// must not: the pool is Nonblocking, or MaxBlockingTasks submitters wait
// already (ants' ErrPoolOverload).
var ErrOverload = errors.New("antspool: too many goroutines blocked in Submit, or Nonblocking is set")

// Options are ants' options that shape Submit.
type Options struct {
	// Nonblocking makes Submit return ErrOverload instead of waiting
	// when every worker is busy and the pool is at capacity.
	Nonblocking bool
	// MaxBlockingTasks, if positive, is how many goroutines may wait in
	// Submit at once; the next returns ErrOverload.
	MaxBlockingTasks int
}

// Pool runs tasks on at most Cap worker goroutines. The zero Pool is not
// usable; create one with New or NewChan.
type Pool struct {
	capacity int
	opts     Options
	newBox   func() box

	mu      sync.Mutex
	avail   sync.Cond // a worker went idle, or the pool closed
	idle    []*worker // the idle workers, a stack (most recently used on top, as ants')
	running int       // worker goroutines started and not exited
	waiting int       // submitters in avail.Wait (or just woken from it)
	closed  bool

	nRunning atomic.Int32 // running, for Running without mu
	exited   sync.WaitGroup
}

// box is a worker's one-slot handoff: put is called only while the
// worker is idle (its box is empty), by the submitter that took it off
// the idle stack; take is the worker's, and returns nil once close was
// called and nothing is left.
type box interface {
	put(task func())
	take() func()
	close()
}

type worker struct {
	p   *Pool
	box box
}

// New returns a pool of capacity worker goroutines whose handoff is a
// knit.Slot per worker. It panics if capacity < 1.
func New(capacity int, opts Options) *Pool {
	return newPool(capacity, opts, func() box { return new(slotBox) })
}

func newPool(capacity int, opts Options, newBox func() box) *Pool {
	if capacity < 1 {
		panic("antspool: capacity must be at least 1")
	}
	p := &Pool{capacity: capacity, opts: opts, newBox: newBox}
	p.avail.L = &p.mu
	return p
}

// Submit runs task on a worker: an idle one, or a new one while fewer
// than Cap run, or else the first to come free, waiting for it unless
// the options say not to (ErrOverload). After Close it returns
// knit.ErrClosed and task does not run.
func (p *Pool) Submit(task func()) error {
	if task == nil {
		panic("antspool: nil task")
	}
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return knit.ErrClosed
		}
		if n := len(p.idle); n > 0 {
			w := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			w.box.put(task)
			return nil
		}
		if p.running < p.capacity {
			p.running++
			p.nRunning.Store(int32(p.running))
			p.exited.Add(1)
			p.mu.Unlock()
			w := &worker{p: p, box: p.newBox()}
			go w.run(task)
			return nil
		}
		if p.opts.Nonblocking || p.opts.MaxBlockingTasks > 0 && p.waiting >= p.opts.MaxBlockingTasks {
			p.mu.Unlock()
			return ErrOverload
		}
		p.waiting++
		p.avail.Wait()
		p.waiting--
	}
}

// run is a worker goroutine: it runs task, goes back on the idle stack
// (waking a waiting submitter), and takes its next task from its box,
// until the pool closes.
func (w *worker) run(task func()) {
	p := w.p
	defer p.exited.Done()
	for {
		task()
		p.mu.Lock()
		if p.closed {
			p.running--
			p.nRunning.Store(int32(p.running))
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, w)
		wake := p.waiting > 0
		p.mu.Unlock()
		if wake {
			// After the unlock: the submitter woken finds the lock free.
			p.avail.Signal()
		}
		if task = w.box.take(); task == nil {
			return // Close took this worker off the idle stack and counted it out
		}
	}
}

// Close stops intake, wakes every waiting Submit (knit.ErrClosed), lets
// running tasks finish and returns once every worker has exited. It is
// idempotent.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	if !p.closed {
		p.closed = true
		p.idle = nil
		p.running -= len(idle)
		p.nRunning.Store(int32(p.running))
		p.avail.Broadcast()
	} else {
		idle = nil
	}
	p.mu.Unlock()
	for _, w := range idle {
		w.box.close()
	}
	p.exited.Wait()
}

// Running is how many worker goroutines are alive (busy or idle).
func (p *Pool) Running() int { return int(p.nRunning.Load()) }

// Waiting is how many goroutines wait in Submit for a worker.
func (p *Pool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// Cap is the pool's capacity in goroutines.
func (p *Pool) Cap() int { return p.capacity }

// Free is how many more worker goroutines the pool may start.
func (p *Pool) Free() int { return p.capacity - p.Running() }

// slotBox is the knit handoff: a Slot. The submitter's put finds it
// empty (the worker is idle), stores the task and wakes the worker; the
// Slot picks Handoff or Notify.
type slotBox struct{ s knit.Slot[func()] }

func (b *slotBox) put(task func()) {
	if err := b.s.TryPut(task); err != nil {
		panic("antspool: an idle worker's slot is not empty: " + err.Error())
	}
}

func (b *slotBox) take() func() {
	task, err := b.s.Take(context.Background())
	if err != nil { // knit.ErrClosed: Close
		return nil
	}
	return task
}

func (b *slotBox) close() { b.s.Close() }

// NewChan returns the same pool with a chan func() per worker, as ants
// has: unbuffered where GOMAXPROCS is 1 and of capacity 1 elsewhere
// (ants' workerChanCap). ants reads GOMAXPROCS once, at init, so a test
// run with -test.cpu keeps the capacity of the GOMAXPROCS the binary
// started with; NewChan reads it at each call.
func NewChan(capacity int, opts Options) *Pool {
	c := 1
	if runtime.GOMAXPROCS(0) == 1 {
		c = 0
	}
	return newPool(capacity, opts, func() box { return make(chanBox, c) })
}

type chanBox chan func()

func (b chanBox) put(task func()) { b <- task }
func (b chanBox) take() func()    { return <-b } // nil once closed
func (b chanBox) close()          { close(b) }
