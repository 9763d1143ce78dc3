package pool

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// Rings counted as wakes that the woken worker never answers with a look
// at the queues (see sleepers.go, worker.passRing and Pool.shrink). Each
// test builds its interleaving by hand: it pushes without a ring and
// claims bits as a publisher would, and plays a worker's steps on a
// worker added to the set but never started.

// newParked returns a pool of cfg whose workers have all parked, closed
// when the test ends if it is not closed before (Close is idempotent).
func newParked(t *testing.T, cfg Config) *Pool {
	t.Helper()
	p := New(cfg)
	t.Cleanup(p.Close)
	if _, ok := settleParked(p, 10*time.Second); !ok {
		t.Fatalf("workers not parked: %+v", p.Stats())
	}
	return p
}

// addIdle adds a worker with the highest id to p's set without starting
// it: the test goroutine plays its steps. Close does not wait for it.
func addIdle(p *Pool) *worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.set.Load()
	w := p.newWorker(p.freeID())
	p.publish(append(s.active[:len(s.active):len(s.active)], w), s.all[len(s.active):])
	return w
}

// queueSignal pushes onto w's queue, with no ring, a task that closes
// the channel returned.
func queueSignal(t *testing.T, w *worker) chan struct{} {
	t.Helper()
	ran := make(chan struct{})
	if err := w.q.TryPush(goFunc(func() { close(ran) })); err != nil {
		t.Fatal(err)
	}
	return ran
}

// waitRan fails t unless ran is closed within 10 s: a lost ring leaves
// the task queued for good, and a loaded machine may take a while to run
// the worker a ring woke.
func waitRan(t *testing.T, p *Pool, ran <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: %+v", what, p.Stats())
	}
}

// runBlocked runs on w a task that blocks until done is closed, and
// returns once it has started.
func runBlocked(t *testing.T, w *worker, done chan struct{}) {
	t.Helper()
	started := make(chan struct{})
	if err := w.q.TryPush(goFunc(func() {
		close(started)
		<-done
	})); err != nil {
		t.Fatal(err)
	}
	w.blk.asleep.claim(w.bit)
	w.bell.Notify(1)
	<-started
}

// TestRingToRecheckingWorker: a worker's re-check finds a task, and a
// publisher claims its idle bit before it unparks, counting it woken
// for another task. The worker runs the first task, which waits for the
// second: the ring goes on to a parked worker.
func TestRingToRecheckingWorker(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := newParked(t, Config{Workers: 2})
	defer p.Close()
	fake, ws := addIdle(p), p.workersNow()
	release := make(chan struct{})
	defer close(release)
	if err := fake.q.TryPush(goFunc(func() { <-release })); err != nil {
		t.Fatal(err)
	}
	tk := fake.bell.Prepare()
	fake.blk.asleep.set(fake.bit)
	x := fake.next() // the re-check finds the first task
	second := queueSignal(t, ws[0])
	p.ring(ws[0], 1) // claims fake's bit, the highest, and counts it woken
	if fake.unpark(tk) {
		fake.passRing()
	}
	go fake.run(x) // the first task blocks, as one waiting for the second does
	waitRan(t, p, second, "the second task stayed queued beside parked workers")
}

// TestRingNestedToReadyWaiter: a worker in a wait of its own finds its
// wait over in the re-check after it set its nested bit, and a publisher
// claims that bit meanwhile: the ring goes on to a worker parked in its
// own wait, the only ones there are.
func TestRingNestedToReadyWaiter(t *testing.T) {
	p, ws, fake, done := nestedBeside(t)
	defer done()
	var second chan struct{}
	var ev knit.Event
	calls := 0
	_ = fake.helpWait(context.Background(), &ev, func() bool {
		if calls++; calls < 2 {
			return false
		}
		// The re-check after nestEnter: a publisher pushes and claims
		// fake's nested bit, the highest, before the wait is seen over.
		second = queueSignal(t, ws[0])
		p.ring(ws[0], 1)
		return true
	})
	waitRan(t, p, second, "the task stayed queued beside workers parked in their waits")
}

// TestRingNestedToWokenWaiter: as above, with the ring arriving while
// the waiter sleeps and its wait ending at once: it wakes, finds its
// wait over and returns to its task, and the ring goes on.
func TestRingNestedToWokenWaiter(t *testing.T) {
	p, ws, fake, done := nestedBeside(t)
	defer done()
	var ev knit.Event
	var over atomic.Bool
	returned := make(chan error, 1)
	go func() { returned <- fake.helpWait(context.Background(), &ev, over.Load) }()
	if !eventually(10*time.Second, func() bool { return fake.blk.nested.Load()&fake.bit != 0 && ev.Waiters() != 0 }) {
		t.Fatal("the waiter did not park in its wait")
	}
	over.Store(true) // its wait is over before it wakes...
	second := queueSignal(t, ws[0])
	p.ring(ws[0], 1) // ...and this ring claims its bit and wakes it
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	waitRan(t, p, second, "the task stayed queued beside workers parked in their waits")
}

// nestedBeside returns a pool of two workers parked in waits of their
// own, those workers, and a worker added beside them and not started;
// done releases the waits and closes the pool.
func nestedBeside(t *testing.T) (p *Pool, ws []*worker, fake *worker, done func()) {
	t.Helper()
	watchdog(t, 30*time.Second)
	p = newParked(t, Config{Workers: 2})
	ws, release := nestAll(t, p)
	return p, ws, addIdle(p), func() {
		release() // before Close, which waits for the workers
		p.Close()
	}
}

// nestAll parks every worker of p in a wait of its own (a task that
// waits on an event nobody rings until release), so that a ring for a
// task finds only nested bits, and returns the workers.
func nestAll(t *testing.T, p *Pool) (ws []*worker, release func()) {
	t.Helper()
	ws = p.workersNow()
	evs := make([]knit.Event, len(ws))
	flags := make([]atomic.Bool, len(ws))
	release = func() {
		for i := range flags {
			flags[i].Store(true)
			evs[i].NotifyAll()
		}
	}
	for i, w := range ws {
		if err := w.q.TryPush(goFunc(func() { _ = p.self().helpWait(context.Background(), &evs[i], flags[i].Load) })); err != nil {
			t.Fatal(err)
		}
		w.blk.asleep.claim(w.bit)
		w.bell.Notify(1)
		if !eventually(10*time.Second, func() bool { return w.blk.nested.Load()&w.bit != 0 }) {
			release()
			t.Fatalf("worker %d not in its wait", i)
		}
	}
	return ws, release
}

// TestRingNestedSkipsRetiring: a ring for a task, finding only workers
// parked in waits of their own, counts a retiring one rung but not woken,
// and goes on to the next: the retiring one may leave its wait and the
// pool without looking at the other queues.
func TestRingNestedSkipsRetiring(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := newParked(t, Config{Workers: 3})
	defer p.Close()
	ws := p.workersNow()
	active, retiring := ws[0], ws[2] // the ring claims the highest bit first
	var evA, evR knit.Event
	active.nestEv.Store(&evA)
	retiring.nestEv.Store(&evR)
	active.blk.nested.mark(active.bit)
	retiring.blk.nested.mark(retiring.bit)
	retiring.retiring.Store(true)
	defer func() {
		retiring.retiring.Store(false)
		for _, w := range []*worker{active, retiring} {
			w.nestLeave()
		}
	}()
	p.set.Load().ringNested(1)
	if b := ws[0].blk.nested.Load(); b&retiring.bit != 0 || b&active.bit != 0 {
		t.Fatalf("nested bits after one ring: %#b, want both claimed (the retiring worker's not counted)", b)
	}
}

// TestResizeRingToRetiring: a publisher's ring that reached a worker
// Resize then removes is not lost. The publisher pushed a task to one
// worker's queue and claimed another's idle bit (the highest, as
// ringAsleep does), counting that worker woken; Resize retires the
// claimed worker before it looks, and a retiring worker runs only its
// own queue. The worker left keeps sleeping unless Resize rings for what
// the queues hold.
func TestResizeRingToRetiring(t *testing.T) {
	for _, c := range []struct {
		name      string
		workers   int
		to        int
		queueAt   int // the active worker whose queue holds the task
		claimedAt int // the retiring worker whose bit the ring claimed
	}{
		{"3to1", 3, 1, 0, 2},
		{"4to2", 4, 2, 1, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			watchdog(t, 30*time.Second)
			p := newParked(t, Config{Workers: c.workers})
			defer p.Close()
			ws := p.workersNow()
			ran := queueSignal(t, ws[c.queueAt])
			v := ws[c.claimedAt]
			if !v.blk.asleep.claim(v.bit) {
				t.Fatalf("worker %d not parked", c.claimedAt)
			}
			p.Resize(c.to)
			v.bell.Notify(1) // the publisher's ring, late: the worker has left or is leaving
			waitRan(t, p, ran, "the task queued before Resize did not run")
		})
	}
}

// TestResizeRingToRetiringQueue: as TestResizeRingToRetiring, with the
// task in a removed worker's queue, behind that worker's running task,
// which waits for it: the workers left, which steal, are rung for it.
func TestResizeRingToRetiringQueue(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := newParked(t, Config{Workers: 4})
	defer p.Close()
	ws := p.workersNow()
	busy, claimed := ws[2], ws[3] // both removed by Resize(2)
	release := make(chan struct{})
	defer close(release)
	runBlocked(t, busy, release)
	// The publisher: a push to busy's queue, and a ring with the old
	// set, which claims the highest bit.
	second := queueSignal(t, busy)
	if !claimed.blk.asleep.claim(claimed.bit) {
		t.Fatal("the claimed worker is not parked")
	}
	p.Resize(2)
	claimed.bell.Notify(1)
	waitRan(t, p, second, "the task stayed in a removed worker's queue beside parked workers")
}

// TestResizeStealsFromRetiring: shrinking to one worker, the one left
// takes from a removed worker's queue until that worker leaves: the
// removed worker's task waits for a task queued behind it.
func TestResizeStealsFromRetiring(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := newParked(t, Config{Workers: 2})
	defer p.Close()
	busy := p.workersNow()[1] // removed by Resize(1)
	release := make(chan struct{})
	defer close(release)
	runBlocked(t, busy, release)
	// Pushed with no ring yet: its publisher rings after Resize, with
	// the new set.
	second := queueSignal(t, busy)
	p.Resize(1)
	p.ring(busy, 1)
	waitRan(t, p, second, "the task behind a removed worker's waiting task never ran")
}
