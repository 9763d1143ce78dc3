package pool

import (
	"context"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
)

// job is what the queues carry: a Go task (goFunc) or a Call (*slot). Both
// are pointer-shaped, so putting one in this interface does not allocate.
type job interface {
	// run executes the task on w, recovers a panic, and hands the result
	// out (completes the future and rings its doorbell) before returning.
	run(w *worker)
	// abandon fails the task without running it (Shutdown's expiry).
	abandon()
}

// goFunc is a task submitted with Go.
type goFunc func()

func (f goFunc) run(w *worker) {
	returned := false
	defer func() {
		if !returned {
			w.goPanicked(recover())
		}
	}()
	f()
	returned = true
}

func (f goFunc) abandon() {}

// Pool states, in the order a pool goes through them.
const (
	stateOpen    uint32 = iota
	stateClosing        // queues closed: workers run what is queued, then exit
	stateAbandon        // Shutdown's context ended: workers stop taking tasks
)

// Pool is a fixed set of worker goroutines running tasks from bounded
// per-worker queues. Create one with New; all methods are safe for
// concurrent use.
type Pool struct {
	_ [knit.CacheLineSize]byte

	// bell is the shared doorbell of a stealing pool: idle workers park
	// on it, and every publish rings it once (Notify(1)), so any parked
	// worker wakes and takes or steals the task. Workers write it when
	// they register; it sits on lines of its own.
	bell knit.Event
	_    [knit.CacheLineSize]byte

	// next is the round-robin submit target. Submitters update it with a
	// load and a store, not an atomic add: a lost update only repeats a
	// target, and with one submitter the line never leaves its cache.
	next atomic.Uint32
	_    [knit.CacheLineSize - 4]byte

	// room is where submitters wait while every queue is full. Workers
	// ring it only when the queue they popped from has drained to half
	// (see worker.popped), so a producer that outruns the workers wakes
	// once per half queue, not once per task; and only if roomWanted,
	// which a waiting submitter sets and the ringing worker claims, so a
	// submitter is rung once per wait (see bell.go for why).
	room       knit.Event
	roomWanted atomic.Bool
	_          [knit.CacheLineSize]byte

	// state is stateOpen, then stateClosing, then maybe stateAbandon.
	// Written three times in a pool's life, read by every worker loop.
	state atomic.Uint32
	_     [knit.CacheLineSize - 4]byte

	// Read-only after New.
	asleep  sleepers // a bit per worker that may be parked; see bell.go
	workers []*worker
	steal   bool          // workers steal, and park on bell instead of their own
	park    knit.Park     // how a worker parks, after its own spin
	spin    time.Duration // the worker's spin before it parks; 0: none
	onPanic func(value any, stack []byte)

	// Shutdown machinery, off the hot paths.
	closeOnce sync.Once
	live      atomic.Int32  // worker goroutines that have not exited
	done      chan struct{} // closed by the last worker to exit
	abandoned atomic.Uint64
}

// New starts a pool configured by cfg and returns once every worker is
// running (and pinned, if asked).
func New(cfg Config) *Pool {
	n := max(cfg.Workers, 1)
	qs := cfg.QueueSize
	if qs <= 0 {
		qs = DefaultQueueSize
	}
	p := &Pool{
		workers: make([]*worker, n),
		steal:   !cfg.NoSteal && n > 1,
		park:    knit.Park{Backend: cfg.Backend},
		spin:    cfg.spinFor(n),
		onPanic: cfg.PanicHandler,
		done:    make(chan struct{}),
		asleep:  newSleepers(n),
	}
	if p.onPanic == nil {
		p.onPanic = logPanic
	}
	cpus := cfg.Pinning.cpus(n)
	for i := range p.workers {
		w := &worker{p: p, id: i, cpu: -1, q: knit.NewMPMC[job](qs)}
		if cpus != nil {
			w.cpu = cpus[i]
		}
		p.workers[i] = w
	}
	p.live.Store(int32(n))
	var started sync.WaitGroup
	started.Add(n)
	for _, w := range p.workers {
		go w.main(&started)
	}
	started.Wait()
	return p
}

// waitPark is how Future.Wait parks: at once, in the Go scheduler. A
// caller that spins holds its P, and the worker its Call readied sits on
// that P's run-next slot behind it until another P steals it: with a 50
// µs spin in Wait, one-at-a-time Call+Wait on the 2-vCPU VM took 84-225
// µs/call, against 0.7-0.9 µs parking at once (both measured before
// Wait's yield, which took the latter to 0.5-0.7 µs).
var waitPark = knit.Park{}

func logPanic(value any, stack []byte) {
	log.Printf("pool: task panicked: %v\n%s", value, stack)
}

// Go runs f on a worker. It blocks while the queues are full and returns
// ErrClosed once the pool is closed (f then does not run). A panic in f
// goes to Config.PanicHandler; the worker survives.
func (p *Pool) Go(f func()) error {
	if f == nil {
		panic("pool: Go of nil func")
	}
	return p.submit(goFunc(f), true)
}

// TryGo is Go without blocking: it reports false, and f does not run,
// when the queues are full or the pool is closed.
func (p *Pool) TryGo(f func()) bool {
	if f == nil {
		panic("pool: TryGo of nil func")
	}
	return p.submit(goFunc(f), false) == nil
}

// target picks the queue a submission goes to first.
func (p *Pool) target() int {
	if len(p.workers) == 1 {
		return 0
	}
	i := p.next.Load()
	p.next.Store(i + 1)
	return int(i % uint32(len(p.workers)))
}

// submit queues j and rings the doorbell of whoever should wake: the
// shared bell when stealing, the target worker's otherwise. It returns
// ErrClosed, or errFull when !block and every queue is full.
func (p *Pool) submit(j job, block bool) error {
	i := p.target()
	if w := p.workers[i]; w.q.TryPush(j) {
		p.ring(w, 1)
		return nil
	}
	return p.submitSlow(j, i, block)
}

// submitSlow is submit when the target queue is full (or closed): any
// queue with room will do (with stealing off its owner is as good a
// target as any), else wait for room.
func (p *Pool) submitSlow(j job, i int, block bool) error {
	for {
		if w := p.tryPushAny(j, i); w != nil {
			p.ring(w, 1)
			return nil
		}
		if p.state.Load() != stateOpen {
			return ErrClosed
		}
		if !block {
			return errFull
		}
		t := p.room.Prepare()
		p.roomWanted.Store(true)
		storeLoadFence() // the flag, then the re-check
		if w := p.tryPushAny(j, i); w != nil {
			p.room.Cancel(t)
			p.ring(w, 1)
			return nil
		}
		if p.state.Load() != stateOpen {
			p.room.Cancel(t)
			return ErrClosed
		}
		_ = p.room.Wait(context.Background(), t, knit.Park{})
	}
}

// tryPushAny offers j to every queue, starting at i, and returns the
// worker whose queue took it, or nil.
func (p *Pool) tryPushAny(j job, i int) *worker {
	for k := range len(p.workers) {
		if w := p.workers[(i+k)%len(p.workers)]; w.q.TryPush(j) {
			return w
		}
	}
	return nil
}

// ring tells the workers that n tasks were published on w's queue: it
// wakes up to n parked workers when stealing (any of them can take the
// tasks), w otherwise. With no worker parked it is one atomic load.
func (p *Pool) ring(w *worker, n int) {
	storeLoadFence() // the publish, then the load of the bits
	if p.steal {
		if k := p.asleep.claimAny(n); k > 0 {
			p.bell.Notify(k)
		}
	} else if p.asleep.claim(w.id) {
		w.bell.Notify(1)
	}
}

// batchChunk is how many calls CallBatch hands to one PushBatch: the jobs
// are staged in an array on the caller's stack, so the batch does not
// allocate. 128 covers Knitting's largest benchmark shape (100 calls) in
// one push and one doorbell ring.
const batchChunk = 128

// submitBatch queues every job of js, in order, blocking while the queues
// are full, and rings each doorbell once for all it published. It returns
// how many were accepted: all of them, or a prefix when the pool closed.
func (p *Pool) submitBatch(js []job) int {
	n := len(p.workers)
	share := len(js) // with stealing, one queue takes the batch and thieves spread it
	if !p.steal {
		share = (len(js) + n - 1) / n // spread it, one ring per worker touched
	}
	done := 0
	i := p.target()
	for done < len(js) {
		w := p.workers[i%n]
		end := min(done+share, len(js))
		pushed := 0
		// Every queue gets a chance before the batch waits for room.
		for k := 0; k < n && done+pushed < end; k++ {
			w = p.workers[(i+k)%n]
			m := w.q.PushBatch(js[done+pushed : end])
			if m > 0 {
				pushed += m
				p.ring(w, m)
			}
		}
		done += pushed
		if done < end {
			// Every queue is full, or the pool closed. What was pushed
			// has been rung for, so the workers drain while this waits.
			if p.submitSlow(js[done], i, true) != nil {
				return done
			}
			done++
		}
		i++
	}
	return done
}

// Close stops intake, lets the workers run every task already accepted,
// and returns when they have exited. It is idempotent; concurrent calls
// all wait. Close must not be called from a task: it would wait for
// itself.
func (p *Pool) Close() {
	p.beginClose()
	<-p.done
}

// Shutdown is Close bounded by ctx. It returns nil once every worker has
// exited. If ctx ends first, the tasks still queued are abandoned: they
// never run, their futures fail with ErrClosed, and Shutdown returns a
// *ShutdownError wrapping ctx.Err() with their count. Tasks already
// running are not interrupted; a later Close waits for them.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.beginClose()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-p.done: // both ready: the workers won
		return nil
	default:
	}
	p.state.CompareAndSwap(stateClosing, stateAbandon)
	p.wakeAll() // parked workers must see stateAbandon and exit
	n := 0
	for _, w := range p.workers {
		n += w.abandonQueued()
	}
	return &ShutdownError{Abandoned: n, Err: ctx.Err()}
}

// beginClose closes the queues, then marks the pool closing, then wakes
// every parked worker. The order is the exit protocol: a worker that
// sees stateClosing knows no task can be queued any more, so queues it
// finds empty stay empty and it may exit.
func (p *Pool) beginClose() {
	p.closeOnce.Do(func() {
		for _, w := range p.workers {
			w.q.Close()
		}
		p.state.Store(stateClosing)
		p.wakeAll()
	})
}

// wakeAll rings every doorbell a worker or a submitter may be parked on.
func (p *Pool) wakeAll() {
	p.bell.NotifyAll()
	for _, w := range p.workers {
		w.bell.NotifyAll()
	}
	p.room.NotifyAll()
}

// workerExited is called by each worker goroutine as it ends for good.
func (p *Pool) workerExited() {
	if p.live.Add(-1) == 0 {
		close(p.done)
	}
}
