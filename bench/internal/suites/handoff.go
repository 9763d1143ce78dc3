package suites

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/examples/antspool"
	"github.com/knit-go/knit/examples/inboxpool"
	"github.com/knit-go/knit/pool"
)

// The handoff suite is the handoff every pool makes per task, taken out
// of any pool: W worker goroutines, each parked on a one-slot handoff of
// its own, and a stack of idle workers. A submitter pops an idle worker
// (waiting while there is none) and hands it the task; the worker runs
// it and pushes itself back on the stack. Every row uses the same idle
// stack, so rows differ only in the handoff; pool.Go on a W-worker pool
// is beside them for reference, and two pools fed by the same
// submitters: examples/antspool (the same design with ants' contract) on
// knit.Slot and on channels, and examples/inboxpool.
//
// Each worker's task is one func() built once (no row pays a closure per
// task); the submitter writes the task's number into the worker before
// the handoff, and the worker adds it to a count and a sum of its own.
// At the end of every Run all workers are back on the stack, and Run
// checks that the tasks' numbers add up to 0+1+...+n-1 and that n ran:
// every task ran exactly once.
var handoffSuite = harness.Suite{
	Name: "handoff",
	Description: "The per-task handoff of a pool: submitters pop an idle worker from a mutex-protected stack " +
		"(waiting while there is none) and hand it a func() through a one-slot handoff of its own; the worker runs it " +
		"and pushes itself back. Handoffs: chan func() of capacity 0 (ref) and 1, knit MPSC and SPSC of capacity 1 " +
		"(blocking Push/Pop), and a knit.Slot (Put wakes the worker and, if it was asleep, yields its P to it); " +
		"and knit pool.Go on a W-worker pool. " +
		"Limits: the runtime's own ways to hand a parked goroutine something, with nothing else (no lock, no " +
		"registration): a one-word slot whose worker gopark parks and goready readies, and the runtime semaphore " +
		"released with handoff (the submitter gives its P to the worker). " +
		"Beside them, two pools fed by the same submitters: examples/antspool (ants' contract: capacity in goroutines, " +
		"Submit hands each task to an idle worker or waits for one), on a knit.Slot per worker and on a channel per worker " +
		"as ants has; and a pool that queues instead of handing off (examples/inboxpool: an inbox per worker, round robin, " +
		"the worker drains its inbox), built on knit MPSC rings and on buffered channels.",
	Unit: "task handed off and run",
	Ref:  refHandoffChan0,
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		for _, g := range handoffGroups(cfg.Scale) {
			rows = append(rows, handoffRows(g)...)
		}
		return rows
	},
}

const (
	refHandoffChan0  = "chan func(), capacity 0"
	limitHandoffPark = "limit: one word, bare park and ready"
	limitHandoffSema = "limit: runtime semaphore, release with handoff"
)

type handoffGroup struct{ workers, submitters int }

func (g handoffGroup) String() string {
	s := "s"
	if g.submitters == 1 {
		s = ""
	}
	return fmt.Sprintf("%s, %d submitter%s", knitWorkers(g.workers), g.submitters, s)
}

// handoffGroups: W = GOMAXPROCS, 2 and 1 (each once), each fed by 1, 2
// and 8 submitters. The 2-worker groups run at GOMAXPROCS 1 too: a pool
// sized for two CPUs is still run on one (a CPU quota, a -cpu 1 run).
func handoffGroups(s harness.Scale) []handoffGroup {
	if s == harness.Tiny {
		return []handoffGroup{{1, 2}, {2, 8}}
	}
	ws := []int{runtime.GOMAXPROCS(0)}
	for _, w := range []int{2, 1} {
		if w != ws[0] {
			ws = append(ws, w)
		}
	}
	var gs []handoffGroup
	for _, w := range ws {
		for _, sub := range []int{1, 2, 8} {
			gs = append(gs, handoffGroup{w, sub})
		}
	}
	return gs
}

func handoffRows(g handoffGroup) []harness.Row {
	row := func(name string, mk func() slot) harness.Row {
		return harness.Row{Group: g.String(), Name: name, Start: func(harness.Config) (harness.Bench, error) {
			return startHandoff(g, mk), nil
		}}
	}
	return []harness.Row{
		row(refHandoffChan0, func() slot { return chanSlot(make(chan func())) }),
		row("chan func(), capacity 1", func() slot { return chanSlot(make(chan func(), 1)) }),
		row("knit MPSC, capacity 1", func() slot { return mpscSlot{knit.NewMPSC[func()](1, knit.Park{})} }),
		row("knit SPSC, capacity 1", func() slot { return &spscSlot{q: knit.NewSPSC[func()](1, knit.Park{})} }),
		row("knit Slot", func() slot { return &knitSlot{} }),
		row(limitHandoffPark, func() slot { return &parkSlot{} }),
		row(limitHandoffSema, func() slot { return &semaSlot{} }),
		{Group: g.String(), Name: "knit pool.Go", Start: func(harness.Config) (harness.Bench, error) {
			return startGoPool(g, pool.New(pool.Config{Workers: g.workers})), nil
		}},
		{Group: g.String(), Name: "examples/antspool on knit Slot", Start: func(harness.Config) (harness.Bench, error) {
			return startGoPool(g, antsPool{antspool.New(g.workers, antspool.Options{})}), nil
		}},
		// A pool of this repository on Go channels, not the ants library:
		// Go's, though its name says "ants".
		{Group: g.String(), Name: "examples/antspool on channels", Kind: harness.KindGo, Start: func(harness.Config) (harness.Bench, error) {
			return startGoPool(g, antsPool{antspool.NewChan(g.workers, antspool.Options{})}), nil
		}},
		{Group: g.String(), Name: "examples/inboxpool on knit MPSC inboxes", Start: func(harness.Config) (harness.Bench, error) {
			return startGoPool(g, inboxpool.New(g.workers, inboxQueue)), nil
		}},
		{Group: g.String(), Name: "examples/inboxpool on channel inboxes", Start: func(harness.Config) (harness.Bench, error) {
			return startGoPool(g, inboxpool.NewChan(g.workers, inboxQueue)), nil
		}},
	}
}

// slot is one worker's one-slot handoff. put is called by the submitter
// that popped the worker from the idle stack, take by the worker alone;
// a nil func tells the worker to exit. put returns whether the worker
// may go back on the stack now; otherwise the worker's done does that.
type slot interface {
	put(f func()) bool
	take() func()
	// done is the worker's, after the task ran: whether it goes back on
	// the stack now.
	done() bool
}

type chanSlot chan func()

func (c chanSlot) put(f func()) bool { c <- f; return false }
func (c chanSlot) take() func()      { return <-c }
func (c chanSlot) done() bool        { return true }

type mpscSlot struct{ q *knit.MPSC[func()] }

func (s mpscSlot) put(f func()) bool {
	if err := s.q.Push(context.Background(), f); err != nil {
		panic(err) // never closed
	}
	return false
}

func (s mpscSlot) take() func() {
	f, err := s.q.Pop(context.Background())
	if err != nil {
		panic(err)
	}
	return f
}

func (s mpscSlot) done() bool { return true }

// spscSlot is an SPSC ring shared by every submitter. Its single-producer
// rule holds because no two submitters are ever inside a Push on it at
// once: the worker goes back on the idle stack only when both the task
// has run and the submitter's Push has returned, whichever is last (the
// two-party count left). Pushing back after the task alone would let the
// next submitter's Push start while the last one is still inside its
// wake of the worker.
type spscSlot struct {
	q    *knit.SPSC[func()]
	left atomic.Int32
}

func (s *spscSlot) put(f func()) bool {
	s.left.Store(2) // the worker is this submitter's alone until both are done
	tx, _ := s.q.Ends()
	if err := tx.Push(context.Background(), f); err != nil {
		panic(err)
	}
	return f != nil && s.left.Add(-1) == 0
}

func (s *spscSlot) take() func() {
	_, rx := s.q.Ends()
	f, err := rx.Pop(context.Background())
	if err != nil {
		panic(err)
	}
	return f
}

func (s *spscSlot) done() bool { return s.left.Add(-1) == 0 }

// knitSlot is a knit.Slot: the submitter's Put stores the func and wakes
// the worker, yielding its P to it if it was asleep (the Slot's rule);
// the worker's Take waits for it.
type knitSlot struct{ s knit.Slot[func()] }

func (s *knitSlot) put(f func()) bool {
	if err := s.s.Put(context.Background(), f); err != nil {
		panic(err) // never closed
	}
	return false
}

func (s *knitSlot) take() func() {
	f, err := s.s.Take(context.Background())
	if err != nil {
		panic(err)
	}
	return f
}

func (s *knitSlot) done() bool { return true }

// handoffWorker is one worker: its slot, the number of the task it was
// handed, and what it ran (its own line, read once the worker is idle).
type handoffWorker struct {
	slot  slot
	arg   uint64 // written by the submitter before put
	run   func() // the task, built once: adds arg to sum
	count uint64
	sum   uint64
	_     [64]byte
}

// idleStack is the stack of idle workers every row shares.
type idleStack struct {
	mu       sync.Mutex
	avail    sync.Cond // a worker was pushed; for submitters
	all      sync.Cond // every worker is back; for the end of Run
	idle     []int
	waiting  int // submitters in avail.Wait
	draining bool
	workers  int
}

func (s *idleStack) pop() int {
	s.mu.Lock()
	for len(s.idle) == 0 {
		s.waiting++
		s.avail.Wait()
		s.waiting--
	}
	w := s.idle[len(s.idle)-1]
	s.idle = s.idle[:len(s.idle)-1]
	s.mu.Unlock()
	return w
}

func (s *idleStack) push(w int) {
	s.mu.Lock()
	s.idle = append(s.idle, w)
	if s.waiting > 0 {
		s.avail.Signal()
	}
	if s.draining && len(s.idle) == s.workers {
		s.all.Signal()
	}
	s.mu.Unlock()
}

// drain waits until every worker is back on the stack.
func (s *idleStack) drain() {
	s.mu.Lock()
	s.draining = true
	for len(s.idle) < s.workers {
		s.all.Wait()
	}
	s.draining = false
	s.mu.Unlock()
}

type handoffBench struct {
	submitters int
	idle       idleStack
	workers    []*handoffWorker
	exited     sync.WaitGroup
}

func startHandoff(g handoffGroup, mk func() slot) *handoffBench {
	b := &handoffBench{submitters: g.submitters}
	b.idle.avail.L = &b.idle.mu
	b.idle.all.L = &b.idle.mu
	b.idle.workers = g.workers
	for i := range g.workers {
		w := &handoffWorker{slot: mk()}
		w.run = func() { w.count++; w.sum += w.arg }
		b.workers = append(b.workers, w)
		b.idle.idle = append(b.idle.idle, i)
		b.exited.Add(1)
		go b.work(i, w)
	}
	return b
}

func (b *handoffBench) work(i int, w *handoffWorker) {
	defer b.exited.Done()
	for {
		f := w.slot.take()
		if f == nil {
			return
		}
		f()
		if w.slot.done() {
			b.idle.push(i)
		}
	}
}

// submit hands task number arg to an idle worker.
func (b *handoffBench) submit(arg uint64) {
	i := b.idle.pop()
	w := b.workers[i]
	w.arg = arg
	if w.slot.put(w.run) {
		b.idle.push(i)
	}
}

func (b *handoffBench) Run(n int) error {
	for _, w := range b.workers {
		w.count, w.sum = 0, 0 // every worker is idle: no task is running
	}
	each := func(s int) {
		for i := s; i < n; i += b.submitters {
			b.submit(uint64(i))
		}
	}
	runSubmitters(b.submitters, each)
	b.idle.drain()
	var count, sum uint64
	for _, w := range b.workers {
		count += w.count
		sum += w.sum
	}
	if want := uint64(n) * uint64(n-1) / 2; count != uint64(n) || sum != want {
		return fmt.Errorf("%d tasks ran with numbers summing to %d, want %d summing to %d", count, sum, n, want)
	}
	return nil
}

// Close stops the workers through the same path as a task: pop each one
// from the stack and hand it nil.
func (b *handoffBench) Close() error {
	for range b.workers {
		i := b.idle.pop()
		b.workers[i].slot.put(nil)
	}
	b.exited.Wait()
	return nil
}

// goPool is a pool fed through its Go by the same submitters: knit's
// pool.Go on a W-worker pool, and examples/inboxpool on knit and on
// channels. Such a pool has no idle stack to drain and its tasks no
// worker to carry a number, so the check is the count: each task adds
// one and marks a WaitGroup done (a duplicate panics it, a loss leaves
// Run waiting).
type goPool struct {
	submitters int
	p          goCloser
	wg         sync.WaitGroup
	count      atomic.Uint64
	task       func()
}

type goCloser interface {
	Go(func()) error
	Close()
}

// antsPool is examples/antspool as a goCloser: its Submit is Go.
type antsPool struct{ *antspool.Pool }

func (p antsPool) Go(f func()) error { return p.Submit(f) }

// inboxQueue is each inbox's capacity in the inboxpool rows: pool's
// DefaultQueueSize, as the pool.Go row's queues have.
const inboxQueue = pool.DefaultQueueSize

func startGoPool(g handoffGroup, p goCloser) *goPool {
	b := &goPool{submitters: g.submitters, p: p}
	b.task = func() { b.count.Add(1); b.wg.Done() }
	return b
}

func (b *goPool) Run(n int) error {
	b.count.Store(0)
	b.wg.Add(n)
	errs := make([]error, b.submitters)
	each := func(s int) {
		k := 0
		for i := s; i < n; i += b.submitters {
			if err := b.p.Go(b.task); err != nil {
				errs[s] = err
				break
			}
			k++
		}
		// Mark the tasks never submitted done, so the wait still ends.
		for i := s + k*b.submitters; i < n; i += b.submitters {
			b.wg.Done()
		}
	}
	runSubmitters(b.submitters, each)
	b.wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if c := b.count.Load(); c != uint64(n) {
		return fmt.Errorf("%d tasks ran, want %d", c, n)
	}
	return nil
}

func (b *goPool) Close() error {
	b.p.Close()
	return nil
}

// runSubmitters runs each(0) ... each(k-1), one submitter a goroutine
// (on the caller's own when k is 1), and returns when all have.
func runSubmitters(k int, each func(s int)) {
	if k <= 1 {
		each(0)
		return
	}
	var wg sync.WaitGroup
	for s := range k {
		wg.Go(func() { each(s) })
	}
	wg.Wait()
}
