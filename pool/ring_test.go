package pool

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// Rings counted as wakes that the woken worker never answers with a look
// at the queues (see sleepers.go and passRing). Each test builds its
// interleaving by hand: it claims bits as a publisher would, and plays a
// worker's steps on a worker added to the set but never started.

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

// waitRan fails t unless ran is closed within 5 s.
func waitRan(t *testing.T, p *Pool, ran <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: %+v", what, p.Stats())
	}
}

// TestRingToRecheckingWorker: a worker's re-check finds a task, and a
// publisher claims its idle bit before it unparks, counting it woken
// for another task. The worker runs the first task, which waits for the
// second: the ring goes on to a parked worker.
func TestRingToRecheckingWorker(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	if _, ok := settleParked(p, 10*time.Second); !ok {
		t.Fatalf("workers not parked: %+v", p.Stats())
	}
	fake, ws := addIdle(p), p.workersNow()
	second := make(chan struct{})
	if err := fake.q.TryPush(goFunc(func() {
		select {
		case <-second:
		case <-time.After(10 * time.Second):
		}
	})); err != nil {
		t.Fatal(err)
	}
	tk := fake.bell.Prepare()
	fake.blk.asleep.set(fake.bit)
	x := fake.next() // the re-check finds the first task
	if err := ws[0].q.TryPush(goFunc(func() { close(second) })); err != nil {
		t.Fatal(err)
	}
	p.ring(ws[0], 1) // claims fake's bit, the highest, and counts it woken
	if fake.unpark(tk) {
		fake.passRing()
	}
	go fake.run(x) // the first task waits for the second
	waitRan(t, p, second, "the second task stayed queued beside parked workers")
}

// TestRingNestedToReadyWaiter: a worker in a wait of its own finds its
// wait over in the re-check after it set its nested bit, and a publisher
// claims that bit meanwhile: the ring goes on to a worker parked in its
// own wait, the only ones there are.
func TestRingNestedToReadyWaiter(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	ws, release := nestAll(t, p)
	defer release() // before Close, which waits for the workers
	fake := addIdle(p)
	second := make(chan struct{})
	var ev knit.Event
	calls := 0
	_ = fake.helpWait(context.Background(), &ev, func() bool {
		if calls++; calls < 2 {
			return false
		}
		// The re-check after nestEnter: a publisher pushes and claims
		// fake's nested bit, the highest, before the wait is seen over.
		if err := ws[0].q.TryPush(goFunc(func() { close(second) })); err != nil {
			t.Error(err)
		}
		p.ring(ws[0], 1)
		return true
	})
	waitRan(t, p, second, "the task stayed queued beside workers parked in their waits")
}

// TestRingNestedToWokenWaiter: as above, with the ring arriving while
// the waiter sleeps and its wait ending at once: it wakes, finds its
// wait over and returns to its task, and the ring goes on.
func TestRingNestedToWokenWaiter(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	ws, release := nestAll(t, p)
	defer release() // before Close, which waits for the workers
	fake := addIdle(p)
	var ev knit.Event
	var over atomic.Bool
	returned := make(chan error, 1)
	go func() { returned <- fake.helpWait(context.Background(), &ev, over.Load) }()
	if !eventually(10*time.Second, func() bool { return fake.blk.nested.Load()&fake.bit != 0 && ev.Waiters() != 0 }) {
		t.Fatal("the waiter did not park in its wait")
	}
	over.Store(true) // its wait is over before it wakes...
	second := make(chan struct{})
	if err := ws[0].q.TryPush(goFunc(func() { close(second) })); err != nil {
		t.Fatal(err)
	}
	p.ring(ws[0], 1) // ...and this ring claims its bit and wakes it
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	waitRan(t, p, second, "the task stayed queued beside workers parked in their waits")
}

// nestAll parks every worker of p in a wait of its own (a task that
// waits on an event nobody rings until release), so that a ring for a
// task finds only nested bits, and returns the workers.
func nestAll(t *testing.T, p *Pool) (ws []*worker, release func()) {
	t.Helper()
	if _, ok := settleParked(p, 10*time.Second); !ok {
		t.Fatalf("workers not parked: %+v", p.Stats())
	}
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

// TestResizeRingToRetiringQueue: as TestResizeRingToRetiring, with the
// task in a removed worker's queue, behind that worker's running task,
// which waits for it: the workers left, which steal, are rung for it.
func TestResizeRingToRetiringQueue(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 4})
	defer p.Close()
	if _, ok := settleParked(p, 10*time.Second); !ok {
		t.Fatalf("workers not parked: %+v", p.Stats())
	}
	ws := p.workersNow()
	busy, claimed := ws[2], ws[3] // both removed by Resize(2)
	started, second := make(chan struct{}), make(chan struct{})
	runBlocked(t, busy, started, second)
	// The publisher: a push to busy's queue, and a ring with the old
	// set, which claims the highest bit.
	if err := busy.q.TryPush(goFunc(func() { close(second) })); err != nil {
		t.Fatal(err)
	}
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
	p := New(Config{Workers: 2})
	defer p.Close()
	if _, ok := settleParked(p, 10*time.Second); !ok {
		t.Fatalf("workers not parked: %+v", p.Stats())
	}
	busy := p.workersNow()[1] // removed by Resize(1)
	started, second := make(chan struct{}), make(chan struct{})
	runBlocked(t, busy, started, second)
	// Pushed with no ring yet: its publisher rings after Resize, with
	// the new set.
	if err := busy.q.TryPush(goFunc(func() { close(second) })); err != nil {
		t.Fatal(err)
	}
	p.Resize(1)
	p.ring(busy, 1)
	waitRan(t, p, second, "the task behind a removed worker's waiting task never ran")
}

// runBlocked runs, on w, a task that closes started and then waits for
// done (or gives up after 10 s, so that a failed test still closes),
// and returns once it has started.
func runBlocked(t *testing.T, w *worker, started, done chan struct{}) {
	t.Helper()
	if err := w.q.TryPush(goFunc(func() {
		close(started)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	})); err != nil {
		t.Fatal(err)
	}
	w.blk.asleep.claim(w.bit)
	w.bell.Notify(1)
	<-started
}
