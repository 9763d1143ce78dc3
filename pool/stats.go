package pool

import (
	"sync/atomic"

	"github.com/knit-go/knit/internal/relstore"
)

// Stats is a snapshot of a pool's counters. Each worker counts on its own
// cache lines and Stats sums them, so no counter is shared by the hot
// paths; the sums are read one after another, not at one instant, and are
// exact whenever the pool is quiet.
//
// A task is one function the pool runs for its caller: a Go, a Submit, a
// Call, each call of a CallBatch, each element of a Map, MapSeq or
// MapStream. So one input gives the same counts through Map as through
// MapSeq. Map and CallBatch queue fewer entries than that, each holding
// many tasks: while queued, an entry counts once (in QueueDepth, and so
// in Submitted); once a worker takes it, the tasks it claims count
// instead. A Map's elements that no worker claimed because the Map ended
// first (a refused submit, say) are not counted. Workers that Resize
// removed still count in every total once they have left.
type Stats struct {
	Workers  int // workers taking new tasks: New's count, then Resize's; 0 once Close or Shutdown began
	Retiring int // workers Resize removed that are still running their last tasks
	Pinned   int // workers pinned to a CPU (see Pinning)
	Parked   int // workers parked right now

	// Submitted counts tasks accepted: those a worker took (Completed,
	// Skipped, and those running) plus Abandoned plus QueueDepth. It is
	// derived, so that submitting touches no counter; it is never below
	// Completed + Skipped.
	Submitted uint64
	// Completed counts tasks whose function ran to its end, returning or
	// panicking: Panicked is included, Skipped is not.
	Completed uint64
	Panicked  uint64 // tasks that panicked (or called runtime.Goexit)

	// Skipped counts tasks a worker took and did not run because what
	// they belonged to was over: SkippedGroup + SkippedCtx. Their Wait
	// (a Future's, a Group's, Map's) reports why.
	Skipped uint64
	// SkippedGroup counts tasks of a Group that had failed (a task's
	// error or panic, or a refused Go), and elements of a Map that had.
	SkippedGroup uint64
	// SkippedCtx counts tasks whose context had ended while they were
	// queued: a GoContext's, a CallContext's, a Submit's, a Group's
	// parent's, a Map's ("Contexts" in the package doc).
	SkippedCtx uint64

	Abandoned uint64 // tasks Shutdown's expiry kept from running (see ShutdownError)
	Stolen    uint64 // tasks a worker took from another worker's queue

	Parks    uint64 // times a worker parked
	Wakes    uint64 // times a parked worker woke
	SpinHits uint64 // spins that caught work before the worker would have parked

	// QueueDepth counts the queues' entries not yet taken: a task each,
	// or a CallBatch packet's or a Call stream's entry (see Task.Call),
	// whose calls count once they are taken.
	QueueDepth int
}

// counter is a statistic written by one goroutine (its worker) and read
// by Stats: the writer adds with a load and a release store. That needs
// no locked instruction, since nobody else writes it, and it keeps a
// worker's counters visible in the order it moved them (taken before
// completed, parks before wakes), which Stats' snapshot relies on and
// relstore.Hint does not promise. sync/atomic's Store would be a locked
// instruction on amd64 (XCHG), which waits for the store buffer to drain
// behind the pop's publish, and two are counted per task (BENCHMARKS.md,
// "Pool", pool.Go against pond).
type counter struct{ v atomic.Uint64 }

func (c *counter) inc()         { relstore.Store(&c.v, c.v.Load()+1) }
func (c *counter) add(d uint64) { relstore.Store(&c.v, c.v.Load()+d) }
func (c *counter) load() uint64 { return c.v.Load() }

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() Stats {
	// The set and the totals of the workers it no longer holds, taken
	// together: a worker that left moves from one to the other under mu
	// (Pool.publish), so it is counted once. Until then its counters,
	// final, are summed from the set.
	p.mu.Lock()
	set, g, left := p.set.Load(), p.gone, p.leftInSet
	p.mu.Unlock()
	ws := set.all
	workers := len(set.active)
	if p.state.Load() != stateOpen {
		workers = 0 // the queues are closed: none takes a new task
	}
	s := Stats{
		Workers:      workers,
		Retiring:     len(ws) - len(set.active) - left,
		Abandoned:    p.abandoned.Load(),
		Completed:    g.completed,
		Panicked:     g.panicked,
		SkippedGroup: g.skippedGroup,
		SkippedCtx:   g.skippedCtx,
		Stolen:       g.stolen,
		Parks:        g.parks,
		Wakes:        g.wakes,
		SpinHits:     g.spinHits,
	}
	// Downstream first: a task moves queue -> taken -> completed or
	// skipped, so reading those before taken and taken before the queue
	// keeps Submitted >= Taken >= Completed + Skipped in every snapshot.
	taken := g.taken
	for _, w := range ws {
		s.Completed += w.completed.load()
		s.Panicked += w.panicked.load()
		s.SkippedGroup += w.skippedGroup.load()
		s.SkippedCtx += w.skippedCtx.load()
	}
	s.Skipped = s.SkippedGroup + s.SkippedCtx
	for _, w := range ws {
		taken += w.taken.load()
		s.Stolen += w.stolen.load()
		wakes := w.wakes.load() // before parks: a snapshot never shows wakes > parks
		parks := w.parks.load()
		s.Parks += parks
		s.Wakes += wakes
		s.SpinHits += w.spinHits.load()
		if w.pinned.Load() {
			s.Pinned++
		}
		if parks != wakes {
			s.Parked++
		}
	}
	for _, w := range ws {
		s.QueueDepth += w.q.Len()
	}
	s.Submitted = taken + s.Abandoned + uint64(s.QueueDepth)
	return s
}
