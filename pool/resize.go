package pool

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// goneCounts holds the counters of workers that have left the pool
// (Resize), so that Stats still counts what they did. Written under mu.
type goneCounts struct {
	taken, completed, panicked, stolen, parks, wakes, spinHits, skippedGroup, skippedCtx uint64
}

// add folds the final counters of w, which is leaving, into g.
func (g *goneCounts) add(w *worker) {
	g.taken += w.taken.load()
	g.completed += w.completed.load()
	g.panicked += w.panicked.load()
	g.stolen += w.stolen.load()
	g.parks += w.parks.load()
	g.wakes += w.wakes.load()
	g.spinHits += w.spinHits.load()
	g.skippedGroup += w.skippedGroup.load()
	g.skippedCtx += w.skippedCtx.load()
}

// The workers of a pool change only under Resize (and as a removed worker
// leaves), so they are published as an immutable workerSet, swapped
// whole under Pool.mu and read with one atomic load. The hot paths read
// it once per submit and once per ring; a worker reads it only when its
// own queue is empty.
//
// Growing makes new workers, with new queues, and publishes the set that
// holds them before they start. Shrinking removes the newest active
// workers: each one's queue is closed first (a push after that fails, and
// the submitter tries another queue, as it does when one is full), then
// the worker is marked retiring, then the smaller set is published and
// the worker rung. A retiring worker finishes its task, runs what its
// closed queue still holds (with stealing on, the others take from it
// too), and leaves. Knowing the queue is closed before it looks, it
// cannot miss a task pushed after its last look: Close guarantees that
// every push either fails or is counted by Len (see knit.MPMC.Len). It
// may be deep in a wait of its own (help.go) when it is removed: it goes
// on running tasks there, and leaves once back in its loop.
//
// Ids. A worker's id names its bits in the sleeper words, its goroutine
// slot (self) and its entry in the registry that maps a claimed bit back
// to the worker. Ids live in blocks of 64 that are never freed or moved,
// so a bit set by a worker under one set is seen by a publisher holding a
// later one. A new worker takes the lowest id no live worker holds: a
// retiring worker keeps its id until it leaves, and it clears its bits
// and its registry entry first.
//
// Leaving is cheap. A worker that leaves stays in the set, its queue
// closed and empty and its counters final, until half the set has left
// or no retiring worker is left; the next set drops every such worker
// and folds its counters into Pool.gone. Publishing a set per departure
// would copy the set once per removed worker, and removing most of a
// large pool would cost the square of its size.
//
// Why a publisher loads the set after its push (in ring), not before:
// the set it rings with must be at least as new as the workers that may
// be parked. A worker made by a grow published after the push's set load
// started after it, so it sets its bit, and then looks at the queues,
// after the push: it sees the task.

// workerSet is the pool's workers at one moment. Read-only once published.
type workerSet struct {
	active []*worker // take new tasks: submitters pick one round-robin
	all    []*worker // every live worker: active, then retiring
	blocks []*idBlock
	b0     *idBlock // blocks[0], kept beside the flags the rings read
	ids    int      // 1 + the highest id held: blocks covers them
	steal  bool     // workers steal from each other's queues
	spin   time.Duration
}

// idBlock holds 64 worker ids' shared state: their idle and nested bits,
// their goroutines (for self) and the workers themselves.
type idBlock struct {
	asleep sleeperWord // a bit per worker that may be parked; see sleepers.go
	nested sleeperWord // a bit per worker parked in a wait of its own; see help.go
	gids   [64]gidSlot // gids[k] is the goroutine running worker k; see help.go
	ws     [64]atomic.Pointer[worker]
}

// workersNow returns the active workers.
func (p *Pool) workersNow() []*worker { return p.set.Load().active }

// maybeAsleep and maybeNested report whether a bit may be set: a load of
// the only block's word, or true when there are more.
func (s *workerSet) maybeAsleep() bool { return len(s.blocks) != 1 || s.b0.asleep.Load() != 0 }
func (s *workerSet) maybeNested() bool { return len(s.blocks) != 1 || s.b0.nested.Load() != 0 }

// Resize makes the pool n workers, growing or shrinking it while tasks
// run, and returns once new workers are running (and pinned, if the
// Config asks). Nothing accepted is lost: a removed worker's queue is
// closed to new tasks, and the worker finishes its task and runs what
// its queue holds before it leaves (with stealing on, the others help).
// Until then Stats counts it in Retiring, not Workers. The timer policy
// and stealing follow the new size as they would at New: one worker
// spins (see Config.Park), and does not steal once the removed workers
// have left; until then it takes from their queues too, so that a task
// of theirs that waits for one queued behind it finishes. n must be 1
// to MaxWorkers, or Resize panics; after Close it does nothing.
//
// Resize may be called from a task, even one running on a worker it
// removes: that worker leaves once the task returns.
func (p *Pool) Resize(n int) {
	if n < 1 || n > MaxWorkers {
		panic(fmt.Sprintf("pool: Resize(%d): want 1 to %d (MaxWorkers)", n, MaxWorkers))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state.Load() != stateOpen {
		return
	}
	s := p.set.Load()
	switch cur := len(s.active); {
	case n > cur:
		p.grow(s, n-cur)
	case n < cur:
		p.shrink(s, cur-n)
	}
}

// grow adds k workers to s and starts them. Called with mu held.
func (p *Pool) grow(s *workerSet, k int) {
	active := append(s.active[:len(s.active):len(s.active)], make([]*worker, 0, k)...)
	fresh := make([]*worker, 0, k)
	for range k {
		w := p.newWorker(p.freeID())
		active = append(active, w)
		fresh = append(fresh, w)
	}
	p.publish(active, s.all[len(s.active):])
	p.start(fresh)
	p.room.NotifyAll() // submitters waiting for room: there are new queues
}

// shrink retires the k newest active workers of s. Called with mu held.
func (p *Pool) shrink(s *workerSet, k int) {
	keep := len(s.active) - k
	gone := s.active[keep:]
	for _, w := range gone {
		w.q.Close() // first: see the comment at the top of this file
	}
	for _, w := range gone {
		w.retiring.Store(true)
	}
	retiring := append(append([]*worker(nil), gone...), s.all[len(s.active):]...)
	p.publish(s.active[:keep:keep], retiring)
	for _, w := range gone {
		w.bell.NotifyAll() // a parked one must see it is retiring
		w.ringNest()
	}
	// A publisher may have claimed a removed worker's bit, and counted
	// it woken, before the worker was marked retiring; a retiring worker
	// runs only its own queue, so that wake is lost for a task in
	// another queue (TestResizeRingToRetiring). Ring again for what the
	// queues hold. The publisher pushed before it loaded the set, and
	// loaded the set before it read retiring; this stored retiring and
	// the set before it reads the queues: so either it rang with the new
	// set, which names no removed worker as woken, or the look below
	// sees its task.
	storeLoadFence()
	ns := p.set.Load()
	for _, w := range ns.all {
		if n := w.q.Len(); n > 0 {
			p.ring(w, n)
		}
	}
}

// freeID returns the lowest id no live worker holds, making its block if
// needed; the caller takes it. The ids below freeFrom are all held, so a
// grow looks at each id once. Called with mu held.
func (p *Pool) freeID() int {
	for id := p.freeFrom; id < len(p.blocks)*64; id++ {
		if p.blocks[id/64].ws[id%64].Load() == nil {
			p.freeFrom = id + 1
			return id
		}
	}
	p.blocks = append(p.blocks, new(idBlock))
	id := (len(p.blocks) - 1) * 64
	p.freeFrom = id + 1
	return id
}

// newWorker makes the worker of id and registers it. Called with mu held
// (or by New, before the pool is shared).
func (p *Pool) newWorker(id int) *worker {
	b := p.blocks[id/64]
	w := &worker{p: p, id: id, cpu: -1, q: newQueue(p.qs), blk: b, bit: 1 << (id % 64)}
	if len(p.cpus) > 0 {
		w.cpu = p.cpus[id%len(p.cpus)]
	}
	b.ws[id%64].Store(w)
	return w
}

// publish makes active and retiring the pool's set, with the policies of
// its size, dropping the retiring workers that have left and folding
// their counters into gone. Called with mu held (or by New, before the
// pool is shared).
func (p *Pool) publish(active, retiring []*worker) {
	all := make([]*worker, 0, len(active)+len(retiring))
	all = append(all, active...)
	for _, w := range retiring {
		if w.left {
			p.gone.add(w)
		} else {
			all = append(all, w)
		}
	}
	p.leftInSet = 0
	ids := 0
	for _, w := range all {
		ids = max(ids, w.id+1)
	}
	nb := (ids + 63) / 64
	p.set.Store(&workerSet{
		active: active,
		all:    all,
		blocks: p.blocks[:nb:nb],
		b0:     p.blocks[0],
		ids:    ids,
		steal:  !p.noSteal && len(all) > 1, // retiring workers' queues too (TestResizeStealsFromRetiring)
		spin:   p.cfg.spinFor(len(active)),
	})
}

// start starts the goroutines of ws and returns once each is running.
//
// Each parks at once, having looked at its own queue only (see
// worker.firstPark): a new worker looking at every queue before it
// parks, as an idle one does, made growing by k workers cost k times
// the pool's size. With stealing, start looks at the other queues for
// all of them, once, after the last has set its idle bit: a task pushed
// before a worker's bit was set is seen here, and one pushed after rings
// it, as in a worker's own re-check. Whoever the ring wakes looks at
// every queue.
func (p *Pool) start(ws []*worker) {
	p.live.Add(int32(len(ws)))
	var started sync.WaitGroup
	started.Add(len(ws))
	for _, w := range ws {
		go w.main(&started)
	}
	started.Wait()
	s := p.set.Load()
	if !s.steal {
		return
	}
	queued := 0
	for _, w := range s.all {
		queued += w.q.Len()
	}
	if queued > 0 {
		s.ringAsleep(queued)
	}
}

// leave removes a retiring worker that has run its queue dry: its bits
// and its registry entry are cleared, so a bit claimed later never names
// it, and it is marked as left, under mu, so that Stats counts it once
// (see the comment at the top of this file for when the set drops it).
func (p *Pool) leave(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.blk.asleep.unmark(w.bit)
	w.blk.nested.unmark(w.bit)
	w.blk.ws[w.id%64].Store(nil)
	p.freeFrom = min(p.freeFrom, w.id)
	w.left = true
	p.leftInSet++
	s := p.set.Load()
	if retiring := len(s.all) - len(s.active); p.leftInSet == retiring || 2*p.leftInSet >= len(s.all) {
		p.publish(s.active, s.all[len(s.active):])
	}
}
