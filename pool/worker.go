package pool

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/affinity"
	"github.com/knit-go/knit/internal/sched"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// worker is one worker goroutine and its queue.
type worker struct {
	_ [knit.CacheLineSize]byte

	// bell is this worker's own doorbell: the worker parks here, and a
	// publisher that claims its idle bit rings it (see sleepers.go).
	bell knit.Event
	_    [knit.CacheLineSize]byte

	// Counters, written by this worker's goroutine only (see counter),
	// read by Stats. They share lines with each other and nothing else.
	taken     counter // tasks popped to run, own or stolen
	completed counter
	panicked  counter
	stolen    counter
	parks     counter // parks != wakes: the worker is parked (or about to park) on its doorbell
	wakes     counter
	spinHits  counter
	// Tasks taken and not run, because their group or Map had failed, or
	// their context had ended (see Stats.Skipped).
	skippedGroup counter
	skippedCtx   counter
	pinned       atomic.Bool // the worker's thread is pinned to cpu
	// retiring says Resize removed the worker: its queue is closed, and
	// it leaves once it has run what the queue holds (see resize.go).
	retiring atomic.Bool
	// left says the retiring worker has left, though the set may still
	// hold it (see resize.go). Read and written under Pool.mu.
	left bool
	// nestEv is the event the worker parks on in a wait of its own (see
	// help.go), nil outside one; publishers that claim its nested bit
	// ring it.
	nestEv atomic.Pointer[knit.Event]
	_      [knit.CacheLineSize]byte

	// fr and carry belong to the worker's goroutine alone (see batch.go):
	// the packet run it is in, and what a goroutine that ended in
	// runtime.Goexit left for its replacement.
	fr    batchFrame
	carry []job
	// roomPops counts this goroutine's pops since it first saw a
	// submitter waiting for room, that pop included; 0 while none waits
	// (see popped).
	roomPops int
	_        [knit.CacheLineSize]byte

	// Read-only.
	p   *Pool
	q   *knit.MPMC[job] // this worker's queue: the owner and thieves pop, submitters push
	id  int
	cpu int      // CPU to pin to, or -1
	blk *idBlock // the block of id: its bits, goroutine slot and registry entry
	bit uint64   // 1 << (id % 64): its bit in blk's words
}

// main is the worker goroutine. started is nil for a replacement (after
// a task called runtime.Goexit).
func (w *worker) main(started *sync.WaitGroup) {
	release := w.pin()
	w.blk.gids[w.id%64].Store(curg())
	if started != nil {
		w.firstPark(started)
	}
	normal := false
	defer func() {
		// Before this goroutine can end and its identity be reused.
		w.blk.gids[w.id%64].Store(0)
		// Unpin before the goroutine ends, so its thread goes back to the
		// runtime with the process's mask.
		if release != nil {
			release()
			w.pinned.Store(false)
		}
		if !normal {
			// A task called runtime.Goexit, which cannot be stopped: its
			// future has failed already, and a new goroutine takes over
			// this worker, queue and counters.
			go w.main(nil)
			return
		}
		w.p.workerExited(w)
	}()
	for len(w.carry) > 0 {
		j := w.carry[0]
		w.carry = w.carry[1:]
		w.run(j)
	}
	w.carry = nil
	w.loop()
	normal = true
}

// pin pins the calling goroutine to w.cpu, if asked, and returns the
// release function, or nil when not pinned.
func (w *worker) pin() func() {
	if w.cpu < 0 {
		return nil
	}
	release, err := affinity.Pin(w.cpu)
	if err != nil {
		return nil
	}
	w.pinned.Store(true)
	return release
}

// loop runs tasks until the pool is closed and drained (or abandoned),
// or until Resize removes the worker and its queue has been run dry.
//
// The idle order is Knitting's. A task's result goes out first: run
// completes its future and rings the caller's doorbell as soon as the
// task returns, before the worker looks at any queue. Then the worker
// looks for work, its own queue first, then the others'. Then it spins,
// if its policy says so, and parks.
//
// Parking follows the knit.Event protocol: register (Prepare), re-check
// every queue this worker may take from, then Wait. A submitter publishes
// and then rings (Notify), so a task published at any moment is either
// seen by the re-check or wakes the worker.
func (w *worker) loop() {
	p := w.p
	bell := &w.bell
	for {
		if w.retiring.Load() {
			w.runDry()
			return
		}
		if j := w.next(); j != nil {
			w.run(j)
			continue
		}
		if spin := p.set.Load().spin; spin > 0 {
			if j := w.spinForWork(spin); j != nil {
				w.spinHits.inc()
				w.run(j)
				continue
			}
		} else if w.yieldsFirst() {
			// One yield before registering: a caller waiting for the
			// task just run is most often queued on this P behind this
			// worker (see Future.wait), and runs now, takes its result
			// and may queue the next call, which the look below finds
			// with no park, no wake and no ring on either side.
			sched.Yield()
			if j := w.next(); j != nil {
				w.run(j)
				continue
			}
		}
		t := bell.Prepare()
		w.blk.asleep.set(w.bit) // after Prepare, before the re-check: see sleepers.go
		storeLoadFence()
		if w.retiring.Load() { // Resize stores it, then rings
			if w.unpark(t) {
				w.passRing()
			}
			continue
		}
		if j := w.next(); j != nil {
			if w.unpark(t) {
				w.passRing()
			}
			w.run(j)
			continue
		}
		if st := p.state.Load(); st == stateAbandon || (st == stateClosing && w.drained()) {
			// No need to wake the others: Shutdown rang every worker
			// after it stored stateAbandon, and the worker that found
			// the last queue empty rang every worker (drainedUpTo).
			bell.Cancel(t)
			return
		}
		w.parks.inc()
		_ = bell.Wait(context.Background(), t, p.park) // no deadline: only a ring ends it
		w.wakes.inc()
	}
}

// yieldsFirst reports whether the worker yields once before it parks
// (see loop): where the runtime's local-queue yield is linked, and not
// for a pinned worker, whose goroutine is locked to its thread (a yield
// would hand its P to another thread and back), nor for one that sleeps
// on the futex, the backend for pinned workers (see Config.Park).
func (w *worker) yieldsFirst() bool {
	return sched.Linked && w.cpu < 0 && w.p.park.Backend != knit.BackendFutex
}

// firstPark parks a worker that has just started, after a look at its
// own queue only, and tells the starter that it is registered: the
// starter looks at the other queues for it (see Pool.start). Nothing
// else can have happened since the worker was made: its starter holds
// mu, so no Resize or Close has begun, and one that begins later rings
// the doorbell this worker is already registered on. No spin either:
// the timer policy spins after a task, for the next one, and a new
// worker has run none.
func (w *worker) firstPark(started *sync.WaitGroup) {
	bell := &w.bell
	t := bell.Prepare()
	w.blk.asleep.set(w.bit) // after Prepare, before the re-check: see sleepers.go
	storeLoadFence()
	started.Done()
	if w.q.Len() != 0 { // pushed to before the bit was set; loop takes it
		w.unpark(t)
		return
	}
	w.parks.inc()
	_ = bell.Wait(context.Background(), t, w.p.park)
	w.wakes.inc()
}

// unpark cancels a park the re-check made unnecessary, and clears the
// worker's idle bit: a bit left set on a worker about to run a task
// would draw the next submitter's ring (a ring goes to the worker whose
// bit it claims), and a task that waits for another would leave that
// one queued beside an idle worker nobody rang. It reports whether a
// publisher claimed the bit first: that ring counted this worker woken,
// but the worker made its last look at the queues before it, and the
// caller passes it on (passRing) before it runs anything.
func (w *worker) unpark(t knit.Ticket) (rung bool) {
	w.bell.Cancel(t)
	return !w.blk.asleep.claim(w.bit)
}

// passRing passes on a ring that claimed one of w's bits (idle or
// nested) and counted w woken after w's last look at the queues, when w
// goes on without another look: it runs the task it found, returns to
// the task it waited in, or retires. With stealing the ring was for a
// task any worker may take: if one is still queued, another worker is
// rung for it (TestRingToRecheckingWorker). Most such rings were for the
// very task w found, and then nothing is queued and nobody is woken.
// Without stealing the ring was for w's own queue, which only w runs.
// The claim the caller saw is ordered after the publisher's push, so the
// look here sees the task unless a worker took it.
func (w *worker) passRing() {
	storeLoadFence() // the claim seen, then the queues
	p := w.p
	s := p.set.Load()
	if !s.steal {
		return
	}
	for _, v := range s.all {
		if v.q.Len() != 0 {
			p.ring(v, 1)
			return
		}
	}
}

// next takes a task: from the worker's own queue, else, when stealing,
// from the other queues (retiring workers' included), starting from the
// worker's id so that thieves fan out. It returns nil when there is none
// or the pool is abandoning.
func (w *worker) next() job {
	p := w.p
	if st := p.state.Load(); st != stateOpen {
		return w.nextClosing(st)
	}
	if j, err := w.q.TryPop(); err == nil {
		w.popped(w.q)
		return j
	}
	s := p.set.Load()
	if !s.steal {
		return nil
	}
	n := len(s.all)
	for k := 1; k <= n; k++ {
		v := s.all[(w.id+k)%n]
		if v == w {
			continue
		}
		if j, err := v.q.TryPop(); err == nil {
			w.stolen.inc()
			w.popped(v.q)
			return j
		}
	}
	return nil
}

// nextClosing is next once the queues are closed. A thief looks only at
// the queues after those found empty (drainedUpTo), all workers sharing
// that one pass over them: as the pool closes every worker looks for a
// task, and each scanning every queue would make Close cost the square
// of the worker count.
func (w *worker) nextClosing(st uint32) job {
	if st == stateAbandon {
		return nil
	}
	if j, err := w.q.TryPop(); err == nil {
		w.popped(w.q)
		return j
	}
	p := w.p
	if !p.set.Load().steal {
		return nil
	}
	d := p.drain
	for i := p.drainedUpTo(); i < len(d); i++ {
		if v := d[i]; v != w {
			if j, err := v.q.TryPop(); err == nil {
				w.stolen.inc()
				w.popped(v.q)
				return j
			}
		}
	}
	return nil
}

// drainedUpTo moves drainFrom past the queues of drain found empty from
// where it stands, and returns it. The call that reaches the end rings
// every worker: a worker may have parked while closing because a queue
// was not yet empty (a submitter still writing a position it claimed
// before Close), and that submitter's ring woke only one.
func (p *Pool) drainedUpTo() int {
	d := p.drain
	from := int(p.drainFrom.Load())
	to := from
	for to < len(d) && d[to].q.Len() == 0 {
		to++
	}
	for from < to {
		if p.drainFrom.CompareAndSwap(int64(from), int64(to)) {
			if to == len(d) {
				storeLoadFence() // the end, then the doorbells
				for _, o := range p.set.Load().all {
					o.bell.NotifyAll()
				}
			}
			return to
		}
		from = int(p.drainFrom.Load())
	}
	return from
}

// popped counts a task taken from q and, once submitters have waited for
// room through half a queue of this worker's pops, rings them. Waking them
// at every pop would cost a wake per task once a producer outruns the
// workers. The count is the worker's own: asking q how full it is (q.Len,
// as before) read the producers' tail line at every pop while a submitter
// waited, and the next push's CAS on tail then waited for that line.
//
// No waiter is left behind: a submitter sets roomWanted, then finds every
// queue still full in its re-check, so a queue's worth of pops per queue
// is still to come, and each of them reads the flag set (a pop that read
// it clear freed a slot the re-check saw). Among W workers and W full
// queues one worker makes at least a queue of those pops, and counts
// every one: at least the half.
func (w *worker) popped(q *knit.MPMC[job]) {
	w.taken.inc()
	storeLoadFence() // the pop that freed a slot, then the load of the flag
	p := w.p
	if !p.roomWanted.Load() {
		w.roomPops = 0
		return
	}
	w.roomPops++
	if w.roomPops >= max(q.Cap()/2, 1) && p.roomWanted.CompareAndSwap(true, false) {
		w.roomPops = 0
		p.room.NotifyAll()
	}
}

// spinForWork polls for a task for up to budget, with the CPU's spin hint
// between polls, and returns nil if none came or the pool is closing.
// Under knit.HintNone it returns nil at once: the budget was resolved
// when the pool was made, and the hint choice may have changed since.
//
// It yields the P when it starts and every spinYield after. A spinning
// goroutine holds its P, and whatever became runnable on that P waits
// behind it until another P steals it, which takes a thread wake when the
// other Ps are idle: the caller this worker's ring just readied, or one
// that yielded in Future.Wait. Without the yields that caller waited out
// the whole spin every time (BENCHMARKS.md, "Pool: a spinning worker's
// polls and yields").
func (w *worker) spinForWork(budget time.Duration) job {
	if spinpolicy.Off() {
		return nil
	}
	start := time.Now()
	yielded := time.Duration(0)
	runtime.Gosched()
	for {
		// A clock read costs about as much as a poll; read it every 16.
		for range 16 {
			if j := w.next(); j != nil {
				return j
			}
			knit.Pause(spinPause)
		}
		if w.p.state.Load() != stateOpen || w.retiring.Load() {
			return nil
		}
		el := time.Since(start)
		if el >= budget {
			return nil
		}
		if el-yielded >= spinYield {
			yielded = el
			runtime.Gosched()
		}
	}
}

// spinPause is the number of spin hints between two polls of the queues:
// a fraction of a cache-line round trip between cores, so a publish is
// seen promptly while the poller leaves the line to the submitter most of
// the time (BENCHMARKS.md, "Pool: a spinning worker's polls and yields").
const spinPause = 4

// spinYield is how long a spinning worker holds its P between yields:
// a goroutine readied onto that P waits at most this long for it, and a
// yield with nothing else runnable costs a small fraction of it
// (BENCHMARKS.md, "Pool: a spinning worker's polls and yields").
const spinYield = 10 * time.Microsecond

// drained reports whether every queue this worker takes from is empty.
// Called after the queues were closed, when "empty" can no longer change.
// Len counts positions a producer claimed before Close and is still
// writing, so such a task is waited for, not left behind.
func (w *worker) drained() bool {
	p := w.p
	if !p.set.Load().steal {
		return w.q.Len() == 0
	}
	return p.drainedUpTo() == len(p.drain)
}

// runDry runs what a retiring worker's queue holds, then returns: the
// queue was closed before the worker was marked retiring, so once Len is
// zero nothing more can arrive. It stops early if Shutdown abandons the
// queue.
func (w *worker) runDry() {
	for w.q.Len() > 0 && w.p.state.Load() != stateAbandon {
		if j, err := w.q.TryPop(); err == nil {
			w.popped(w.q)
			w.run(j)
		} else {
			// A submitter claimed a position before Close and is still
			// writing it, or a thief is mid-pop.
			runtime.Gosched()
		}
	}
}

// run executes one task and counts it. Panics are recovered inside
// j.run, so the worker survives them.
func (w *worker) run(j job) {
	if w.fr.pk != nil {
		w.fr.pk.settle(w) // nested inside a call of a packet
	}
	w.completed.add(j.run(w))
}

// goPanicked reports a panic in a Go task. v is nil when the task called
// runtime.Goexit.
func (w *worker) goPanicked(v any) {
	w.panicked.inc()
	if v == nil {
		v = goexitValue
		w.completed.inc() // run's count is skipped: the goroutine is ending
	}
	w.p.onPanic(v, debug.Stack())
}

// abandonQueued fails every task left in w's queue and returns how many.
// The queue is closed, so Len reaching zero means every position was
// taken, by this loop or by a worker that was mid-pop.
func (w *worker) abandonQueued() int {
	n := 0
	for w.q.Len() > 0 {
		j, err := w.q.TryPop()
		ok := err == nil
		if !ok {
			// A submitter claimed a position before Close and is still
			// writing it; it finishes in a few instructions.
			runtime.Gosched()
			continue
		}
		k := j.abandon()
		w.p.abandoned.Add(uint64(k))
		n += k
	}
	return n
}
