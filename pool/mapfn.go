package pool

import (
	"context"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// Map runs fn over in on p and returns the results in input order, or the
// first error (the remaining calls are skipped once one fails). The error
// is what fn returned, unchanged; a panic in fn as a *PanicError;
// ErrClosed if the pool is closed; or ctx.Err() if ctx ends first, in
// which case Map still waits for the calls already running to return
// (fn is not interrupted).
//
// The calls run on the pool's workers, as many at once as there are
// workers: Map queues one job per worker, not one per element, and each
// job takes elements in small runs from a shared index until none is
// left, so a slow element holds up only its own worker. Stats counts the
// elements, as it counts MapSeq's (see Stats): an element a job claims
// after the Map failed or its ctx ended is skipped, not run.
//
// Called from a task of p, Map runs elements on the calling worker too,
// and then queued tasks while the others finish, so it never waits for a
// worker that is waiting for it.
func Map[In, Out any](ctx context.Context, p *Pool, in []In, fn func(In) (Out, error)) ([]Out, error) {
	if fn == nil {
		panic("pool: Map of nil func")
	}
	if ctx == nil {
		panic("pool: Map with a nil context")
	}
	if p == nil {
		panic("pool: Map with a nil *Pool")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return []Out{}, nil
	}
	w := len(p.workersNow())
	m := &mapRun[In, Out]{
		ctx:   ctx,
		in:    in,
		out:   make([]Out, len(in)),
		fn:    fn,
		n:     int64(len(in)),
		grain: int64(min(max(len(in)/(w*mapGrainsPerWorker), 1), mapMaxGrain)),
	}
	jobs := min(int64(w), (m.n+m.grain-1)/m.grain)
	m.live.Store(jobs)
	for k := range jobs {
		if err := p.submitCtx(ctx, m); err != nil {
			m.fail(err)
			m.jobsDone(jobs - k)
			break
		}
	}
	if self := p.self(); self != nil {
		m.work(self, true)
		if err := self.helpWait(ctx, &m.done, m.settled); err != nil {
			m.fail(err)
			_ = self.helpWait(context.Background(), &m.done, m.settled)
		}
	} else if err := m.done.WaitFor(ctx, m.settled, waitPark); err != nil {
		m.fail(err)
		_ = m.done.WaitFor(context.Background(), m.settled, waitPark) // now wait for the running calls
	}
	if err := m.err.get(); err != nil {
		return nil, err
	}
	return m.out, nil
}

// Each Map job takes elements in runs of grain: a run per worker would
// leave the last worker alone with a slow run; a run per element would
// cost a shared atomic add per element. n/(workers*8), at most 64, keeps
// the adds to a few hundred on 10,000 elements and still gives each
// worker eight runs or more to balance with.
const (
	mapGrainsPerWorker = 8
	mapMaxGrain        = 64
)

// mapSkipped is what settled swaps into next to claim every element left,
// far above any length, so that later claims find nothing.
const mapSkipped = 1 << 62

// mapRun is one Map call; the same pointer is queued once per job.
type mapRun[In, Out any] struct {
	// next is the first element no job has claimed; jobs add grain to it.
	next atomic.Int64
	_    [knit.CacheLineSize - 8]byte
	// finished counts elements done or skipped; whoever takes it to n
	// rings done. live counts jobs queued or running; whoever takes it to
	// zero rings done too, so a Map whose jobs were abandoned wakes.
	finished atomic.Int64
	live     atomic.Int64
	done     knit.Event
	_        [knit.CacheLineSize]byte
	err      firstErr // read by every job before every element
	_        [knit.CacheLineSize - 8]byte

	// Read-only.
	ctx   context.Context
	in    []In
	out   []Out // out[i] is written by the job that claimed i
	fn    func(In) (Out, error)
	n     int64
	grain int64
}

// run is a job. Popping it counted it as one task taken; the elements it
// claims count instead (taken when claimed, then completed or skipped),
// as a CallBatch packet's calls do, so that Stats counts a Map's elements
// as it counts MapSeq's. That is two stores to the worker's own counters
// per run of grain elements.
func (m *mapRun[In, Out]) run(w *worker) uint64 {
	if err := m.ctx.Err(); err != nil {
		m.fail(err) // the caller may not have run yet to see it
	}
	m.work(w, false)
	w.taken.add(^uint64(0)) // the job: its elements count instead
	m.jobsDone(1)
	return 0
}

// abandon fails the Map: its job will never run (Shutdown's expiry). The
// elements nobody claimed count as abandoned, once.
func (m *mapRun[In, Out]) abandon() int {
	m.fail(ErrClosed)
	k := m.claimRest()
	m.finishItems(k)
	m.jobsDone(1)
	return int(k)
}

// work claims runs of elements and calls fn on them, skipping them once
// the Map has failed. inline says the caller is the Map's own caller (a
// task), not a job.
func (m *mapRun[In, Out]) work(w *worker, inline bool) {
	var lo, i, hi int64 // the run being worked on: [lo, i) ran, i is running, [i, hi) claimed
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover()
		m.fail(w.taskPanicked(v))
		ran := i - lo
		if v != nil {
			ran++ // element i, which taskPanicked counts only for a Goexit
		}
		w.completed.add(uint64(ran))
		m.skip(w, hi-i-1)
		m.finishItems(hi - lo)
		m.skipRest(w)
		if v == nil && !inline {
			// runtime.Goexit: run does not go on, so the job ends here.
			w.taken.add(^uint64(0))
			m.jobsDone(1)
		}
	}()
	for !m.err.isSet() {
		lo = m.next.Add(m.grain) - m.grain
		if lo >= m.n {
			lo, i, hi = 0, 0, 0
			returned = true
			return
		}
		hi, i = min(lo+m.grain, m.n), lo
		w.taken.add(uint64(hi - lo))
		if err := m.ctx.Err(); err != nil {
			m.fail(err)
		}
		for i = lo; i < hi && !m.err.isSet(); i++ {
			v, err := m.fn(m.in[i])
			if err != nil {
				m.fail(err)
				i++ // it ran
				break
			}
			m.out[i] = v
		}
		w.completed.add(uint64(i - lo))
		m.skip(w, hi-i)
		m.finishItems(hi - lo)
		lo, i, hi = 0, 0, 0
	}
	m.skipRest(w)
	returned = true
}

// skip counts k elements that w claimed and did not run, by why.
func (m *mapRun[In, Out]) skip(w *worker, k int64) {
	if k <= 0 {
		return
	}
	if m.ctx.Err() != nil {
		w.skippedCtx.add(uint64(k))
	} else {
		w.skippedGroup.add(uint64(k))
	}
}

// skipRest claims, on w, every element no one has claimed, and skips
// them: the Map has failed.
func (m *mapRun[In, Out]) skipRest(w *worker) {
	if k := m.claimRest(); k > 0 {
		w.taken.add(uint64(k))
		m.skip(w, k)
		m.finishItems(k)
	}
}

// claimRest claims every element no one has claimed and returns how many
// that was.
func (m *mapRun[In, Out]) claimRest() int64 {
	if old := m.next.Swap(mapSkipped); old < m.n {
		return m.n - old
	}
	return 0
}

func (m *mapRun[In, Out]) fail(err error) {
	if m.err.set(err) {
		m.done.NotifyAll()
	}
}

// finishItems counts k claimed elements as done or skipped, and rings
// done when that settles the Map: every element, or, once it failed,
// every element claimed so far (the rest are skipped, and counted, by the
// job that claims them; the caller need not wait for it).
func (m *mapRun[In, Out]) finishItems(k int64) {
	if k <= 0 {
		return
	}
	if f := m.finished.Add(k); f == m.n || (m.err.isSet() && f >= min(m.next.Load(), m.n)) {
		m.done.NotifyAll()
	}
}

func (m *mapRun[In, Out]) jobsDone(k int64) {
	if m.live.Add(-k) == 0 {
		m.done.NotifyAll()
	}
}

// settled reports whether the Map is over: every element done; or, once
// it failed, every claimed element finished (no fn still runs, and none
// will: a later claim sees the failure); or, once no job is left, which
// happens early only when the pool refused them, every element finished
// or claimed here, uncounted, since the pool never took them.
//
// The loads keep that order: finished, which lags the claims, before
// next, so finished >= next means no claimed element was running.
func (m *mapRun[In, Out]) settled() bool {
	if m.finished.Load() == m.n {
		return true
	}
	if m.live.Load() == 0 {
		if k := m.claimRest(); k > 0 {
			m.finishItems(k)
		}
		return m.finished.Load() == m.n
	}
	if m.err.isSet() {
		f := m.finished.Load()
		return f >= min(m.next.Load(), m.n)
	}
	return false
}
