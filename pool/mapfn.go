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
// jobs, not the elements: a job that starts after the Map failed or its
// ctx ended runs nothing and is counted as skipped.
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

// run is a job: it runs elements until none is left, then leaves. A job
// that starts after the Map's context ended, or after the Map failed,
// runs nothing and counts as skipped.
func (m *mapRun[In, Out]) run(w *worker) uint64 {
	if err := m.ctx.Err(); err != nil {
		m.fail(err)
		w.skippedCtx.inc()
		m.jobsDone(1)
		return 0
	}
	if m.err.isSet() {
		w.skippedGroup.inc()
		m.jobsDone(1)
		return 0
	}
	m.work(w, false)
	m.jobsDone(1)
	return 1
}

// abandon fails the Map: its job will never run (Shutdown's expiry).
func (m *mapRun[In, Out]) abandon() int {
	m.fail(ErrClosed)
	m.jobsDone(1)
	return 1
}

// work claims runs of elements and calls fn on them, skipping them once
// the Map has failed. inline says the caller is the Map's own caller (a
// task), whose panic counts belong to its own task.
func (m *mapRun[In, Out]) work(w *worker, inline bool) {
	var lo, hi int64 // the run being worked on, not yet counted
	returned := false
	defer func() {
		if !returned {
			v := recover()
			if inline {
				m.fail(panicError(v))
			} else {
				m.fail(w.taskPanicked(v))
			}
			m.finishItems(hi - lo)
		}
	}()
	for {
		lo = m.next.Add(m.grain) - m.grain
		if lo >= m.n {
			lo, hi = 0, 0
			break
		}
		hi = min(lo+m.grain, m.n)
		if err := m.ctx.Err(); err != nil {
			m.fail(err) // the caller may not have run yet to see it
		}
		for i := lo; i < hi && !m.err.isSet(); i++ {
			v, err := m.fn(m.in[i])
			if err != nil {
				m.fail(err)
				break
			}
			m.out[i] = v
		}
		m.finishItems(hi - lo)
		lo, hi = 0, 0
	}
	returned = true
}

func (m *mapRun[In, Out]) fail(err error) {
	if m.err.set(err) {
		m.done.NotifyAll()
	}
}

func (m *mapRun[In, Out]) finishItems(k int64) {
	if k > 0 && m.finished.Add(k) == m.n {
		m.done.NotifyAll()
	}
}

func (m *mapRun[In, Out]) jobsDone(k int64) {
	if m.live.Add(-k) == 0 {
		m.done.NotifyAll()
	}
}

// settled reports whether the Map is over: every element done, or, once
// it failed or has no job left, every element not yet claimed skipped and
// the claimed ones finished.
func (m *mapRun[In, Out]) settled() bool {
	if m.finished.Load() == m.n {
		return true
	}
	if m.err.isSet() || m.live.Load() == 0 {
		if old := m.next.Swap(mapSkipped); old < m.n {
			m.finishItems(m.n - old)
		}
		return m.finished.Load() == m.n
	}
	return false
}
