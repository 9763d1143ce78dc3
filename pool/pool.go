package pool

import (
	"context"
	"fmt"
	"log"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/relstore"
	"github.com/knit-go/knit/internal/ringmode"
)

// job is what the queues carry: a Go task (goFunc) or a Call (*slot). Both
// are pointer-shaped, so putting one in this interface does not allocate.
type job interface {
	// run executes the task on w, recovers a panic, and hands the result
	// out (completes the future and rings its doorbell) before returning.
	// It returns how many tasks to count as completed: 1, or 0 for a
	// CallBatch packet, which counts its calls itself.
	run(w *worker) uint64
	// abandon fails the task without running it (Shutdown's expiry) and
	// returns how many tasks that was.
	abandon() int
}

// goFunc is a task submitted with Go.
type goFunc func()

func (f goFunc) run(w *worker) (done uint64) {
	done = 1 // what a recovered panic returns too
	returned := false
	defer func() {
		if !returned {
			w.goPanicked(recover())
		}
	}()
	f()
	returned = true
	return 1
}

func (f goFunc) abandon() int { return 1 }

// Pool states, in the order a pool goes through them.
const (
	stateOpen    uint32 = iota
	stateClosing        // queues closed: workers run what is queued, then exit
	stateAbandon        // Shutdown's context ended: workers stop taking tasks
)

// Pool is a set of worker goroutines running tasks from bounded
// per-worker queues; Resize changes how many. Create one with New; all
// methods are safe for concurrent use.
type Pool struct {
	_ [knit.CacheLineSize]byte

	// next is the round-robin submit target. Submitters update it with a
	// load and a release store, not an atomic add: a lost update only
	// repeats a target, and with one submitter the line never leaves its
	// cache. (sync/atomic's Store would be an XCHG on amd64, a locked
	// instruction at every submit.)
	next atomic.Uint64
	_    [knit.CacheLineSize - 8]byte

	// room is where submitters wait while every queue is full. Workers
	// ring it only when the queue they popped from has drained to half
	// (see worker.popped), so a producer that outruns the workers wakes
	// once per half queue, not once per task; and only if roomWanted,
	// which a waiting submitter sets and the ringing worker claims, so a
	// submitter is rung once per wait (see sleepers.go for why).
	room       knit.Event
	roomWanted atomic.Bool
	_          [knit.CacheLineSize]byte

	// state is stateOpen, then stateClosing, then maybe stateAbandon.
	// Written three times in a pool's life, read by every worker loop.
	state atomic.Uint32
	_     [knit.CacheLineSize - 4]byte

	// set is the workers, and the policies of their number; replaced
	// whole by Resize, and as a removed worker leaves (see resize.go).
	set atomic.Pointer[workerSet]

	// Read-only after New.
	park    knit.Park // how a worker parks, after its own spin
	onPanic func(value any, stack []byte)
	cfg     Config // for the policies of a new size
	noSteal bool
	qs      int   // each queue's capacity
	cpus    []int // the CPUs to pin worker ids to, round-robin; nil: none

	// mu serialises Resize, a removed worker's leaving, Close's start
	// and Stats' snapshot of the set and gone; the fields below it are
	// written under it.
	mu        sync.Mutex
	blocks    []*idBlock // every id block made, in id order; see resize.go
	freeFrom  int        // every id below it is held (see freeID)
	leftInSet int        // workers of the set that have left (see leave)
	gone      goneCounts

	// Shutdown machinery, off the hot paths.
	closeOnce sync.Once
	live      atomic.Int32  // worker goroutines that have not exited
	done      chan struct{} // closed by the last worker to exit
	abandoned atomic.Uint64
	// drain is the workers whose queues beginClose closed: every queue
	// that can still hold a task. Written before state leaves stateOpen.
	drain []*worker
	// drainFrom is how many of drain's queues, from the first, have been
	// found empty, which a closed queue then stays (see drainedUpTo).
	drainFrom atomic.Int64

	// caches holds Submit's recycled call slots, one cache per result
	// type; see submit.go.
	caches slotCaches
}

// New starts a pool configured by cfg and returns once every worker is
// running (and pinned, if asked). It panics, naming the Config field, if
// a field is outside the range its documentation gives.
func New(cfg Config) *Pool {
	n := cfg.workers()
	p := &Pool{
		// The worker spins on its own (spinForWork, which polls the
		// queues, not the doorbell) before it parks, so the park itself
		// never spins.
		park:    knit.Park{Spin: knit.NoSpin, Backend: cfg.Park.Backend},
		onPanic: cfg.PanicHandler,
		cfg:     cfg,
		noSteal: cfg.NoSteal,
		qs:      cfg.queueSize(),
		cpus:    cfg.Pinning.cpus(),
		done:    make(chan struct{}),
		blocks:  make([]*idBlock, (n+63)/64),
	}
	if p.onPanic == nil {
		p.onPanic = logPanic
	}
	for i := range p.blocks {
		p.blocks[i] = new(idBlock)
	}
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = p.newWorker(i)
	}
	p.freeFrom = n
	p.publish(ws, nil)
	p.start(ws)
	return p
}

// newQueue makes a worker's queue. The ring checks the capacity too, but
// its panic would name the ring's constructor; a caller of New needs to
// hear about the Config field.
func newQueue(qs int) (q *knit.MPMC[job]) {
	defer func() {
		if v := recover(); v != nil {
			panic(fmt.Sprintf("pool: New: Config.QueueSize %d: %v", qs, v))
		}
	}()
	q = knit.NewMPMC[job](qs, knit.Park{})
	// The workers wait on doorbells of their own: see sleepers.go.
	if !ringmode.KeepFenced(q) {
		panic("pool: a worker queue's doorbells could not be kept fenced")
	}
	return q
}

// waitPark is how every wait on a result, a group or room in the queues
// parks: at once, in the Go scheduler. A caller that spins holds its P,
// and the worker its Call readied sits on that P's run-next slot behind it
// until another P steals it, so a spin in Wait only delays the result it
// waits for (BENCHMARKS.md, "Pool", Waits park at once).
var waitPark = knit.Park{Spin: knit.NoSpin}

func logPanic(value any, stack []byte) {
	log.Printf("pool: task panicked: %v\n%s", value, stack)
}

// Go runs f on a worker. It blocks while the queues are full and returns
// ErrClosed once the pool is closed (f then does not run). A panic in f
// goes to Config.PanicHandler; the worker survives.
//
// Called from a task of this pool while the queues are full, Go does not
// wait for a worker (it may be the only one): the calling worker runs
// queued tasks until there is room.
func (p *Pool) Go(f func()) error {
	if f == nil {
		panic("pool: Go of nil func")
	}
	return p.submit(goFunc(f), true)
}

// GoContext is Go that gives up when ctx ends while the queues are full:
// it returns ctx.Err(), and f does not run. A ctx already done when
// GoContext is called refuses f the same way, and f still queued when ctx
// ends is skipped by the pool's one rule for a ctx (see "Contexts" in the
// package doc; Stats counts it in SkippedCtx). A ctx that can end costs
// one small allocation per call, to carry it with f.
func (p *Pool) GoContext(ctx context.Context, f func()) error {
	if f == nil {
		panic("pool: GoContext of nil func")
	}
	if ctx == nil {
		panic("pool: GoContext with a nil context")
	}
	if ctx.Done() == nil { // it cannot end: a plain Go
		return p.submitCtx(ctx, goFunc(f))
	}
	return p.submitCtx(ctx, &goCtxFunc{f, ctx})
}

// goCtxFunc is a task submitted with GoContext under a ctx that can end.
type goCtxFunc struct {
	f   func()
	ctx context.Context
}

func (g *goCtxFunc) run(w *worker) uint64 {
	if g.ctx.Err() != nil { // queued past its ctx: skipped
		w.skippedCtx.inc()
		return 0
	}
	return goFunc(g.f).run(w)
}

func (g *goCtxFunc) abandon() int { return 1 }

// TryGo is Go without blocking: it reports false, and f does not run,
// when the queues are full or the pool is closed.
func (p *Pool) TryGo(f func()) bool {
	if f == nil {
		panic("pool: TryGo of nil func")
	}
	return p.submit(goFunc(f), false) == nil
}

// target picks the worker whose queue a submission goes to first.
func (p *Pool) target() *worker {
	ws := p.set.Load().active
	if len(ws) == 1 {
		return ws[0]
	}
	i := p.next.Load()
	relstore.Store(&p.next, i+1)
	return ws[i%uint64(len(ws))]
}

// submit queues j and rings whoever should wake (see ring). It returns
// ErrClosed, or errFull when !block and every queue is full.
func (p *Pool) submit(j job, block bool) error {
	if w := p.target(); w.q.TryPush(j) == nil {
		p.ring(w, 1)
		return nil
	}
	return p.submitSlow(context.Background(), j, block)
}

// submitCtx is a blocking submit that gives up, with ctx.Err(), when ctx
// ends first (or has ended already).
func (p *Pool) submitCtx(ctx context.Context, j job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w := p.target(); w.q.TryPush(j) == nil {
		p.ring(w, 1)
		return nil
	}
	return p.submitSlow(ctx, j, true)
}

// submitSlow is submit when the target queue is full (or closed, its
// worker removed by Resize): any queue with room will do (with stealing
// off its owner is as good a target as any), else wait for room until
// ctx ends, or fail with errFull if !block.
//
// A worker of this pool never waits for room: it may be the only worker,
// or every worker may be in the same spot. It runs a queued task instead,
// which frees a slot (or finds none to run, and then a queue it can take
// from is empty, so the next try has room).
func (p *Pool) submitSlow(ctx context.Context, j job, block bool) error {
	var self *worker
	selfKnown := false
	for {
		if w := p.tryPushAny(j); w != nil {
			p.ring(w, 1)
			return nil
		}
		if p.state.Load() != stateOpen {
			return ErrClosed
		}
		if !block {
			return errFull
		}
		if !selfKnown {
			self, selfKnown = p.self(), true
		}
		if self != nil {
			// A done ctx runs no more of the queue: the caller gets
			// ctx.Err() as promptly as a parked submitter would.
			if err := ctx.Err(); err != nil {
				return err
			}
			if self.fr.pk != nil {
				// Settle before the pop, as helpWait does: a call the
				// settling runs may end its goroutine (runtime.Goexit),
				// which must not take a popped job with it.
				self.fr.pk.settle(self)
			}
			if t := self.next(); t != nil {
				self.run(t)
			} else {
				runtime.Gosched() // a pop found a slot still being written
			}
			continue
		}
		t := p.room.Prepare()
		p.roomWanted.Store(true)
		storeLoadFence() // the flag, then the re-check
		if w := p.tryPushAny(j); w != nil {
			p.room.Cancel(t)
			p.ring(w, 1)
			return nil
		}
		if p.state.Load() != stateOpen {
			p.room.Cancel(t)
			return ErrClosed
		}
		if err := p.room.Wait(ctx, t, waitPark); err != nil {
			return err
		}
	}
}

// tryPushAny offers j to every active worker's queue, starting at the
// round-robin target, and returns the worker whose queue took it, or nil.
func (p *Pool) tryPushAny(j job) *worker {
	ws := p.set.Load().active
	i := int(p.next.Load())
	for k := range len(ws) {
		if w := ws[(i+k)%len(ws)]; w.q.TryPush(j) == nil {
			return w
		}
	}
	return nil
}

// ring tells the workers that n tasks were published on w's queue: it
// wakes up to n parked workers when stealing (any of them can take the
// tasks; w first, whose queue holds them), w otherwise, and likewise up
// to n workers parked in a wait of their own (see help.go), which run
// queued tasks too. Each wake is of the worker whose bit it claimed, on
// that worker's own doorbell (see sleepers.go for why). With no worker
// parked it is three atomic loads. The set is loaded after the publish:
// see resize.go for why.
func (p *Pool) ring(w *worker, n int) {
	storeLoadFence() // the publish, then the load of the bits
	if s := p.set.Load(); s.steal {
		if s.maybeAsleep() {
			s.ringAsleep(n)
		}
		if s.maybeNested() {
			s.ringNested(n)
		}
	} else {
		if w.blk.asleep.claim(w.bit) {
			w.bell.Notify(1)
		}
		if w.blk.nested.claim(w.bit) {
			w.ringNest()
		}
	}
}

// Close stops intake, lets the workers run every task already accepted,
// and returns when they have exited. It is idempotent; concurrent calls
// all wait. Called from a task of this pool, where it would wait for
// itself forever, Close panics instead.
func (p *Pool) Close() {
	p.notFromTask("Close")
	p.beginClose()
	<-p.done
}

// notFromTask panics if the caller is a task of p: method would wait for
// the caller's own worker to exit.
func (p *Pool) notFromTask(method string) {
	if p.self() != nil {
		panic("pool: " + method + " called from a task running on this pool: it waits for every worker to exit, the caller's own included, and would never return")
	}
}

// Shutdown is Close bounded by ctx. It returns nil once every worker has
// exited. If ctx ends first, the tasks still queued are abandoned: they
// never run, their futures fail with ErrClosed, and Shutdown returns a
// *ShutdownError wrapping ctx.Err() with their count. Tasks already
// running are not interrupted; a later Close waits for them. Like Close,
// it panics when called from a task of this pool.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.notFromTask("Shutdown")
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
	// drain, not the set: a retiring worker that stops at stateAbandon
	// may leave the set with tasks still in its queue.
	for _, w := range p.drain {
		n += w.abandonQueued()
	}
	return &ShutdownError{Abandoned: n, Err: ctx.Err()}
}

// beginClose closes the queues, then marks the pool closing, then wakes
// every parked worker. The order is the exit protocol: a worker that
// sees stateClosing knows no task can be queued any more, so queues it
// finds empty stay empty and it may exit. Under mu, so that no Resize
// adds a worker whose queue it did not close.
func (p *Pool) beginClose() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.drain = p.set.Load().all
		for _, w := range p.drain {
			w.q.Close()
		}
		p.state.Store(stateClosing)
		p.mu.Unlock()
		p.wakeAll()
	})
}

// ringAsleep wakes up to n parked workers of a stealing pool: each one
// whose idle bit it claims, on its own doorbell, highest ids first (see
// claimBits). A claimed bit may name a worker that Resize removed, or
// that has left (then it names nobody): it is rung but not counted, since
// it takes no new task.
//
// It does not prefer the worker whose queue holds the task, which measured
// slower (BENCHMARKS.md, "Pool: which parked worker a publish wakes").
func (s *workerSet) ringAsleep(n int) {
	s.ringClaimed(n, func(b *idBlock) *sleeperWord { return &b.asleep }, func(v *worker) bool {
		// A worker whose bit was set but that is no longer registered
		// has left its park (to run a task) and takes no wake: this ring
		// is not a delivery, and the next bit gets it.
		registered := v.bell.Waiters() != 0
		v.bell.Notify(1)
		return registered && !v.retiring.Load()
	})
}

// ringClaimed claims set bits of each block's word and rings their
// workers until n rings were deliveries (ring reports whether its was)
// or no bit is left.
func (s *workerSet) ringClaimed(n int, word func(*idBlock) *sleeperWord, ring func(*worker) bool) {
	for _, b := range s.blocks {
		for n > 0 {
			got := word(b).claimBits(n)
			if got == 0 {
				break
			}
			for got != 0 {
				k := bits.TrailingZeros64(got)
				got &= got - 1
				if v := b.ws[k].Load(); v != nil && ring(v) {
					n--
				}
			}
		}
	}
}

// wakeAll rings every doorbell a worker or a submitter may be parked on.
func (p *Pool) wakeAll() {
	for _, w := range p.set.Load().all {
		w.bell.NotifyAll()
	}
	p.room.NotifyAll()
	p.wakeNested()
}

// workerExited is called by each worker goroutine as it ends for good.
func (p *Pool) workerExited(w *worker) {
	if w.retiring.Load() {
		p.leave(w)
	}
	if p.live.Add(-1) == 0 {
		close(p.done)
	}
}
