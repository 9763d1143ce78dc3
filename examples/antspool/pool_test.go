package antspool

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/testutil"
)

var pools = []struct {
	name string
	new  func(capacity int, opts Options) *Pool
}{
	{"slot", New},
	{"chan", NewChan},
}

// waitFor polls cond until it holds, failing t after a generous deadline:
// the tests wait for a state another goroutine reaches, never a fixed
// sleep.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
		time.Sleep(50 * time.Microsecond)
	}
}

// TestEveryTaskOnce: several submitters against a pool smaller than
// they are, so Submit often waits; every task runs exactly once, never
// more than Cap at a time, and all have run when Close returns.
func TestEveryTaskOnce(t *testing.T) {
	submitters, each := 8, 5000
	if testutil.Race {
		each = 500
	}
	for _, pc := range pools {
		for _, capacity := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/cap-%d", pc.name, capacity), func(t *testing.T) {
				defer testutil.Watchdog(t, 60*time.Second)()
				p := pc.new(capacity, Options{})
				ran := make([]atomic.Int32, submitters*each)
				var busy, most atomic.Int32
				var wg sync.WaitGroup
				for s := range submitters {
					wg.Go(func() {
						for i := range each {
							id := s*each + i
							err := p.Submit(func() {
								n := busy.Add(1)
								for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
								}
								ran[id].Add(1)
								busy.Add(-1)
							})
							if err != nil {
								t.Errorf("Submit: %v", err)
								return
							}
						}
					})
				}
				wg.Wait()
				p.Close()
				for id := range ran {
					if n := ran[id].Load(); n != 1 {
						t.Fatalf("task %d ran %d times", id, n)
					}
				}
				if m := most.Load(); m > int32(capacity) {
					t.Fatalf("%d tasks ran at once in a pool of %d", m, capacity)
				}
				if r := p.Running(); r != 0 {
					t.Fatalf("Running %d after Close", r)
				}
			})
		}
	}
}

// TestBlockingContract: tasks that block hold their goroutines; at
// capacity a Nonblocking pool reports ErrOverload, a blocking one makes
// Submit wait (Waiting counts it) until a task returns, and
// MaxBlockingTasks bounds the waiters.
func TestBlockingContract(t *testing.T) {
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			defer testutil.Watchdog(t, 60*time.Second)()
			const capacity = 3
			release := make(chan struct{})
			var done atomic.Int32
			blocker := func() { <-release; done.Add(1) }

			nb := pc.new(capacity, Options{Nonblocking: true})
			for range capacity {
				if err := nb.Submit(blocker); err != nil {
					t.Fatal(err)
				}
			}
			if nb.Running() != capacity || nb.Free() != 0 || nb.Cap() != capacity {
				t.Fatalf("Running %d Free %d Cap %d at capacity", nb.Running(), nb.Free(), nb.Cap())
			}
			if err := nb.Submit(blocker); !errors.Is(err, ErrOverload) {
				t.Fatalf("Nonblocking Submit at capacity: %v, want ErrOverload", err)
			}

			bl := pc.new(1, Options{MaxBlockingTasks: 2})
			if err := bl.Submit(blocker); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			for range 2 {
				go func() { errs <- bl.Submit(func() { done.Add(1) }) }()
			}
			waitFor(t, "two waiting submitters", func() bool { return bl.Waiting() == 2 })
			if err := bl.Submit(blocker); !errors.Is(err, ErrOverload) {
				t.Fatalf("Submit past MaxBlockingTasks: %v, want ErrOverload", err)
			}
			close(release) // the blockers return; the waiting submitters get the worker in turn
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("a waiting Submit: %v", err)
				}
			}
			nb.Close()
			bl.Close()
			if n := done.Load(); n != capacity+1+2 {
				t.Fatalf("%d tasks ran, want %d", n, capacity+3)
			}
			if bl.Waiting() != 0 {
				t.Fatalf("Waiting %d after Close", bl.Waiting())
			}
		})
	}
}

// TestCloseWakesWaiting: a Submit waiting for a worker when Close comes
// returns knit.ErrClosed and its task never runs; Close waits for the
// running task.
func TestCloseWakesWaiting(t *testing.T) {
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			defer testutil.Watchdog(t, 60*time.Second)()
			p := pc.new(1, Options{})
			release := make(chan struct{})
			var ranLate, finished atomic.Bool
			if err := p.Submit(func() { <-release; finished.Store(true) }); err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() { errc <- p.Submit(func() { ranLate.Store(true) }) }()
			waitFor(t, "a waiting submitter", func() bool { return p.Waiting() == 1 })
			closed := make(chan struct{})
			go func() { p.Close(); close(closed) }()
			if err := <-errc; !errors.Is(err, knit.ErrClosed) {
				t.Fatalf("waiting Submit at Close: %v, want knit.ErrClosed", err)
			}
			select {
			case <-closed:
				t.Fatal("Close returned with a task still running")
			default:
			}
			close(release)
			<-closed
			if !finished.Load() || ranLate.Load() {
				t.Fatalf("running task finished %v, rejected task ran %v", finished.Load(), ranLate.Load())
			}
			if err := p.Submit(func() {}); !errors.Is(err, knit.ErrClosed) {
				t.Fatalf("Submit after Close: %v", err)
			}
		})
	}
}

// TestCloseRacesSubmit: submitters call Submit until it reports
// knit.ErrClosed while Close runs; every Submit that returned nil ran
// its task exactly once, none that returned ErrClosed did, and no task
// runs after Close returns.
func TestCloseRacesSubmit(t *testing.T) {
	rounds := 200
	if testutil.Race {
		rounds = 40
	}
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			defer testutil.Watchdog(t, 60*time.Second)()
			for round := range rounds {
				p := pc.new(2, Options{})
				var accepted, ran atomic.Int64
				var closed atomic.Bool
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for {
							err := p.Submit(func() {
								if closed.Load() {
									t.Error("a task ran after Close returned")
								}
								ran.Add(1)
							})
							if errors.Is(err, knit.ErrClosed) {
								return
							}
							if err != nil {
								t.Errorf("Submit: %v", err)
								return
							}
							accepted.Add(1)
						}
					})
				}
				for i := 0; i < round%7; i++ {
					runtime.Gosched()
				}
				p.Close()
				closed.Store(true)
				wg.Wait()
				if a, r := accepted.Load(), ran.Load(); a != r {
					t.Fatalf("round %d: %d accepted, %d ran", round, a, r)
				}
			}
		})
	}
}

// TestSleepingTasks: the shape ants is built for: more tasks than
// goroutines, each sleeping; every task runs once, and the pool never
// starts more than Cap goroutines.
func TestSleepingTasks(t *testing.T) {
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			defer testutil.Watchdog(t, 60*time.Second)()
			const capacity, tasks = 16, 400
			p := pc.new(capacity, Options{})
			var ran atomic.Int32
			var wg sync.WaitGroup
			wg.Add(tasks)
			for range tasks {
				if err := p.Submit(func() {
					time.Sleep(100 * time.Microsecond)
					ran.Add(1)
					wg.Done()
				}); err != nil {
					t.Fatal(err)
				}
				if r := p.Running(); r > capacity {
					t.Fatalf("Running %d in a pool of %d", r, capacity)
				}
			}
			wg.Wait()
			p.Close()
			if ran.Load() != tasks {
				t.Fatalf("%d of %d tasks ran", ran.Load(), tasks)
			}
		})
	}
}
