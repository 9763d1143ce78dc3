package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/affinity"
	"github.com/knit-go/knit/internal/cputime"
)

// liveWorkers counts the pool worker goroutines running now, of every
// pool: the tests that call it have only one pool open.
func liveWorkers() int { return strings.Count(allStacks(), "knit/pool.(*worker).main(") }

// TestResizeModel runs submitters of every kind (Go, TryGo, Call,
// CallContext, CallBatch, Submit, a group, and tasks that wait on their
// own pool) against a resizer that grows and shrinks the pool at random,
// and closes (or shuts down) the pool at a random moment. The model is a
// run count per task: every task the pool accepted ran exactly once,
// every task it refused never ran, and Stats agree: Submitted and
// Completed are what ran, nothing is queued, no worker is left retiring.
func TestResizeModel(t *testing.T) {
	watchdog(t, 120*time.Second)
	var cpu0 affinity.CPUSet
	cpu0.Add(0)
	shapes := append(configs(),
		shape{"w2-pinned", Config{Workers: 2, Pinning: Pinning{CPUs: cpu0}}},
		shape{"w70", Config{Workers: 70, QueueSize: 4}}, // two id blocks
	)
	for round := range scale(40) {
		c := shapes[round%len(shapes)]
		t.Run(fmt.Sprintf("%d-%s", round, c.name), func(t *testing.T) {
			p := New(c.cfg)
			const kinds = 8
			per := scale(400)
			runs := make([]atomic.Int32, kinds*per)
			accepted := make([]atomic.Bool, kinds*per)
			var inner atomic.Int64 // nested tasks run: counted as tasks too
			ctx := context.Background()
			tk := NewTask(p, func(id int) int { runs[id].Add(1); return id })
			stop := make(chan struct{})
			var submitters, resizer sync.WaitGroup
			for kind := range kinds {
				submitters.Add(1)
				go func() {
					defer submitters.Done()
					for i := range per {
						id := kind*per + i
						ok := true
						switch kind {
						case 0:
							ok = p.Go(func() { runs[id].Add(1) }) == nil
						case 1:
							for !p.TryGo(func() { runs[id].Add(1) }) {
								if p.state.Load() != stateOpen {
									ok = false
									break
								}
								runtime.Gosched()
							}
						case 2:
							v, err := tk.Call(id).Wait(ctx)
							ok = err == nil && v == id
						case 3:
							v, err := tk.CallContext(ctx, id).Wait(ctx)
							ok = err == nil && v == id
						case 4:
							v, err := Submit(ctx, p, func() (int, error) { runs[id].Add(1); return id, nil }).Wait(ctx)
							ok = err == nil && v == id
						case 5:
							if i%8 != 0 {
								continue // a batch of 8 per eighth id
							}
							ins := make([]int, min(8, per-i))
							for k := range ins {
								ins[k] = id + k
							}
							fs := make([]Future[int], len(ins))
							tk.CallBatch(ins, fs)
							for k, f := range fs {
								v, err := f.Wait(ctx)
								accepted[id+k].Store(err == nil && v == id+k)
							}
							continue
						case 6:
							g, _ := NewGroup(ctx, p)
							g.Go(func() error { runs[id].Add(1); return nil })
							ok = g.Wait() == nil
						case 7: // waits on its own pool, on a worker that may be removed
							f := Submit(ctx, p, func() (int, error) {
								runs[id].Add(1)
								v, err := Submit(ctx, p, func() (int, error) { inner.Add(1); return 1, nil }).Wait(ctx)
								if err != nil && !errors.Is(err, ErrClosed) {
									return 0, err
								}
								return v, nil
							})
							_, err := f.Wait(ctx)
							ok = err == nil
						}
						accepted[id].Store(ok)
						if !ok {
							return // the pool is closed
						}
					}
				}()
			}
			var resizes atomic.Int64
			resizer.Add(1)
			go func() { // the resizer
				defer resizer.Done()
				r := rand.New(rand.NewPCG(uint64(round), 24))
				for {
					select {
					case <-stop:
						return
					default:
					}
					p.Resize(1 + r.IntN(6))
					resizes.Add(1)
					if r.IntN(4) == 0 {
						time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond) // spacing, not a wait for anything
					} else {
						runtime.Gosched()
					}
				}
			}()
			if round%4 == 1 {
				// Every submitter done and every task run with the pool
				// open, while the resizer runs: a task left queued beside
				// sleeping workers (a ring lost to a removed worker)
				// fails here, where Close would run it.
				done := make(chan struct{})
				go func() { submitters.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatalf("submitters still waiting after 30 s (%d resizes): %+v", resizes.Load(), p.Stats())
				}
				if !eventually(30*time.Second, func() bool {
					s := p.Stats()
					return s.QueueDepth == 0 && s.Completed+s.Skipped == s.Submitted
				}) {
					t.Fatalf("tasks still queued with the pool open (%d resizes): %+v", resizes.Load(), p.Stats())
				}
			} else {
				// Close at a random moment, while the resizer runs.
				time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
			}
			if round%3 == 2 {
				if err := p.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				p.Close()
			}
			close(stop)
			submitters.Wait()
			resizer.Wait()
			ran := uint64(inner.Load())
			for id := range runs {
				n := runs[id].Load()
				ran += uint64(n)
				switch a := accepted[id].Load(); {
				case a && n != 1:
					t.Fatalf("accepted task %d ran %d times", id, n)
				case !a && n > 1:
					t.Fatalf("task %d ran %d times", id, n)
				case !a && n == 1 && id/per != 7:
					// A nested task may run and still report its inner
					// Submit's refusal as its own; any other refused
					// task must not have run.
					t.Fatalf("refused task %d ran", id)
				}
			}
			s := p.Stats()
			if s.QueueDepth != 0 || s.Retiring != 0 || s.Completed+s.Skipped != s.Submitted || s.Skipped != 0 {
				t.Fatalf("stats after Close: %+v", s)
			}
			if s.Completed != ran {
				t.Fatalf("Completed %d, but %d functions ran (%d resizes): %+v", s.Completed, ran, resizes.Load(), s)
			}
			t.Logf("%d resizes, %d ran", resizes.Load(), ran)
			if s.Workers != 0 { // none takes new tasks after Close
				t.Fatalf("Workers %d after Close", s.Workers)
			}
		})
	}
	if leaked := workerGoroutines(5 * time.Second); leaked != "" {
		t.Fatalf("pool workers still running:\n%s", leaked)
	}
}

// TestResizeGrowShrink: Stats follow each Resize (Workers at once,
// Retiring until the removed workers left), the goroutines follow, and
// the pool's policies follow its size as they would at New.
func TestResizeGrowShrink(t *testing.T) {
	watchdog(t, 30*time.Second)
	for _, noSteal := range []bool{false, true} {
		t.Run(fmt.Sprint("nosteal=", noSteal), func(t *testing.T) {
			p := New(Config{Workers: 2, NoSteal: noSteal})
			defer p.Close()
			tk := NewTask(p, func(x int) int { return x + 1 })
			ctx := context.Background()
			for _, n := range []int{5, 1, 3, 3, 70, 2, 1, 64, 65, 1} {
				p.Resize(n)
				if s := p.Stats(); s.Workers != n {
					t.Fatalf("Resize(%d): Workers %d", n, s.Workers)
				}
				if !eventually(10*time.Second, func() bool { return p.Stats().Retiring == 0 && liveWorkers() == n }) {
					t.Fatalf("Resize(%d): %+v, %d worker goroutines", n, p.Stats(), liveWorkers())
				}
				set := p.set.Load()
				if want := !noSteal && n > 1; set.steal != want {
					t.Fatalf("Resize(%d): steal %v", n, set.steal)
				}
				if want := p.cfg.spinFor(n); set.spin != want {
					t.Fatalf("Resize(%d): spin %v, want %v", n, set.spin, want)
				}
				for i := range 3 * n {
					if v, err := tk.Call(i).Wait(ctx); v != i+1 || err != nil {
						t.Fatalf("Resize(%d): Call = %v, %v", n, v, err)
					}
				}
				// Every worker takes tasks: one blocked task per worker,
				// all running at once.
				var started sync.WaitGroup
				started.Add(n)
				release := make(chan struct{})
				var fin sync.WaitGroup
				fin.Add(n)
				for range n {
					if err := p.Go(func() { started.Done(); <-release; fin.Done() }); err != nil {
						t.Fatal(err)
					}
				}
				started.Wait()
				close(release)
				fin.Wait()
			}
			if _, ok := settleParked(p, 10*time.Second); !ok {
				t.Fatalf("workers not parked after the resizes: %+v", p.Stats())
			}
		})
	}
}

// TestResizeRunsRemovedQueue: tasks queued on workers that Resize removes
// all run, with stealing on and off, and the removed workers leave once
// their queues are dry.
func TestResizeRunsRemovedQueue(t *testing.T) {
	watchdog(t, 30*time.Second)
	for _, c := range []Config{{Workers: 4}, {Workers: 4, NoSteal: true}, {Workers: 4, QueueSize: 4}} {
		t.Run(fmt.Sprintf("nosteal=%v,q=%d", c.NoSteal, c.QueueSize), func(t *testing.T) {
			p := New(c)
			defer p.Close()
			g := newGate()
			for range 4 {
				p.Go(g.block)
			}
			for range 4 {
				<-g.entered
			}
			var ran atomic.Int32
			queued := 0
			for p.TryGo(func() { ran.Add(1) }) { // fill every queue
				queued++
			}
			if queued == 0 {
				t.Fatal("nothing queued")
			}
			p.Resize(1)
			if s := p.Stats(); s.Workers != 1 || s.Retiring != 3 || s.QueueDepth != queued {
				t.Fatalf("after Resize(1): %+v, want 3 retiring and %d queued", s, queued)
			}
			// A Go now finds the removed workers' queues closed and waits
			// for room on the one left.
			more := make(chan error, 1)
			go func() { more <- p.Go(func() { ran.Add(1) }) }()
			close(g.release)
			if err := <-more; err != nil {
				t.Fatal(err)
			}
			if !eventually(10*time.Second, func() bool { return ran.Load() == int32(queued+1) && p.Stats().Retiring == 0 }) {
				t.Fatalf("ran %d of %d: %+v", ran.Load(), queued+1, p.Stats())
			}
			if s := p.Stats(); s.Completed != uint64(4+queued+1) || s.Submitted != s.Completed {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// TestResizeLongTask: a removed worker in a long task stays, counted as
// Retiring, until the task returns; growing meanwhile makes new workers
// (ids are not shared with it), and it leaves once the task returns.
func TestResizeLongTask(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	g := newGate()
	for range 2 {
		p.Go(g.block)
	}
	for range 2 {
		<-g.entered
	}
	p.Resize(1)
	p.Resize(3)
	if s := p.Stats(); s.Workers != 3 || s.Retiring != 1 {
		t.Fatalf("stats %+v, want 3 workers and 1 retiring", s)
	}
	ids := map[int]bool{}
	for _, w := range p.set.Load().all {
		if ids[w.id] {
			t.Fatalf("two live workers with id %d", w.id)
		}
		ids[w.id] = true
	}
	// The new workers run tasks while the old ones are in theirs.
	tk := NewTask(p, func(x int) int { return x })
	for i := range 20 {
		if v, err := tk.Call(i).Wait(context.Background()); v != i || err != nil {
			t.Fatal(v, err)
		}
	}
	close(g.release)
	if !eventually(10*time.Second, func() bool { return p.Stats().Retiring == 0 && liveWorkers() == 3 }) {
		t.Fatalf("the removed worker did not leave: %+v", p.Stats())
	}
}

// TestResizeFromTask: a task may resize its own pool, removing the worker
// it runs on (which leaves once the task returns), or growing it.
func TestResizeFromTask(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []Config{{Workers: 1}, {Workers: 3}, {Workers: 3, NoSteal: true}} {
		p := New(c)
		ctx := context.Background()
		for _, n := range []int{1, 4, 1, 2} {
			f := Submit(ctx, p, func() (int, error) {
				p.Resize(n)
				// And waits on its own pool after: its worker may be
				// retiring, and still helps.
				return Submit(ctx, p, func() (int, error) { return n, nil }).Wait(ctx)
			})
			if v, err := f.Wait(ctx); v != n || err != nil {
				t.Fatalf("%+v: Resize(%d) from a task: %v, %v", c, n, v, err)
			}
			if !eventually(10*time.Second, func() bool { s := p.Stats(); return s.Workers == n && s.Retiring == 0 }) {
				t.Fatalf("%+v: Resize(%d) from a task: %+v", c, n, p.Stats())
			}
		}
		p.Close()
	}
}

// TestResizeRetiringWhileNested: a worker removed while it waits on its
// own pool (helping, inside a task it took there) goes on running tasks,
// its wait completes, and then it leaves. Both workers are nested when
// Resize(1) comes, so the removed one is.
func TestResizeRetiringWhileNested(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []Config{{Workers: 2}, {Workers: 2, NoSteal: true}} {
		p := New(c)
		ctx := context.Background()
		unblock := make(chan struct{})
		entered := make(chan struct{}, 2)
		var barrier sync.WaitGroup
		barrier.Add(2)
		outer := make(chan error, 2)
		for range 2 {
			p.Go(func() {
				barrier.Done()
				barrier.Wait() // both workers are in an outer task
				g, _ := NewGroup(ctx, p)
				g.Go(func() error { entered <- struct{}{}; <-unblock; return nil })
				outer <- g.Wait() // helps: a worker runs a group's task, which blocks
			})
		}
		<-entered
		if c.NoSteal {
			// The round-robin target is advanced without a locked
			// instruction, so the two group tasks may share a queue: its
			// worker runs one and the other waits behind it, where the
			// other worker, not stealing, parks in its wait.
			if !eventually(10*time.Second, func() bool { return len(entered) > 0 || parkedInWait(p) > 0 }) {
				t.Fatalf("the second worker neither ran a group task nor parked in its wait: %+v", p.Stats())
			}
		} else {
			<-entered
		}
		p.Resize(1) // removes a worker deep in its nested wait
		if s := p.Stats(); s.Workers != 1 || s.Retiring != 1 {
			t.Fatalf("%+v", s)
		}
		close(unblock)
		for range 2 {
			if err := <-outer; err != nil {
				t.Fatal(err)
			}
		}
		if !eventually(10*time.Second, func() bool { s := p.Stats(); return s.Workers == 1 && s.Retiring == 0 }) {
			t.Fatalf("%+v", p.Stats())
		}
		p.Close()
	}
}

// parkedInWait counts p's workers parked in a wait of their own.
func parkedInWait(p *Pool) int {
	n := 0
	for _, w := range p.set.Load().all {
		if w.nestEv.Load() != nil {
			n++
		}
	}
	return n
}

// TestResizeRacesClose: Resize loops race Close and Shutdown; nothing
// hangs, every worker leaves, and Resize after Close does nothing.
func TestResizeRacesClose(t *testing.T) {
	watchdog(t, 60*time.Second)
	for round := range scale(100) {
		p := New(Config{Workers: 1 + round%3, NoSteal: round%4 == 3})
		var wg sync.WaitGroup
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					p.Resize(1 + (i*7+k)%5)
					p.Go(func() {})
				}
			}()
		}
		if round%2 == 0 {
			p.Close()
		} else {
			sctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(200))*time.Microsecond)
			p.Shutdown(sctx)
			cancel()
			p.Close()
		}
		wg.Wait()
		before := p.Stats().Workers
		p.Resize(5)
		if s := p.Stats(); s.Workers != before {
			t.Fatalf("Resize after Close changed Workers %d -> %d", before, s.Workers)
		}
	}
	if leaked := workerGoroutines(5 * time.Second); leaked != "" {
		t.Fatalf("pool workers still running:\n%s", leaked)
	}
}

// TestResizeBounds: Resize panics, naming itself and the bound, outside
// 1 to MaxWorkers.
func TestResizeBounds(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	for _, n := range []int{0, -1, MaxWorkers + 1} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, fmt.Sprintf("pool: Resize(%d)", n)) || !strings.Contains(msg, "MaxWorkers") {
					t.Errorf("Resize(%d): panic %q", n, msg)
				}
			}()
			p.Resize(n)
		}()
	}
}

// TestResizePinned: workers a Resize adds are pinned as New's are, by id.
func TestResizePinned(t *testing.T) {
	watchdog(t, 10*time.Second)
	avail, err := affinity.Available()
	if err != nil || avail.Len() == 0 {
		t.Skip("no CPU set:", err)
	}
	cpus := slices.Collect(avail.All())
	var set affinity.CPUSet
	set.Add(cpus...)
	p := New(Config{Workers: 1, Pinning: Pinning{CPUs: set}})
	defer p.Close()
	if p.Stats().Pinned != 1 {
		t.Skip("pinning unavailable here")
	}
	p.Resize(3)
	if s := p.Stats(); s.Pinned != 3 {
		t.Fatalf("%d of 3 workers pinned", s.Pinned)
	}
	for _, w := range p.workersNow() {
		if want := cpus[w.id%len(cpus)]; w.cpu != want {
			t.Fatalf("worker %d on cpu %d, want %d", w.id, w.cpu, want)
		}
	}
	p.Resize(1)
	if !eventually(10*time.Second, func() bool { s := p.Stats(); return s.Retiring == 0 && s.Pinned == 1 }) {
		t.Fatalf("%+v", p.Stats())
	}
}

// TestResizeScale: growing a pool from one worker to thousands, shrinking
// it back and closing it each cost work linear in the workers added or
// removed. Each step has a budget of the process's CPU time (which busy
// loops elsewhere on the machine do not eat into) that a linear pool
// stays well within, under -race too, and that one whose every new or
// closing worker scans every queue, or whose every leaving worker copies
// the set, spends many times over: that work is the square of the worker
// count. Between steps the pool is let go quiet, so that each step is
// charged its own work only. The growth with a backlog checks that the
// new workers, which park without looking at the other queues, are rung
// for what those hold.
func TestResizeScale(t *testing.T) {
	n, budget := 16384, time.Second
	if raceEnabled {
		// Fewer, with more time each: under the race detector a look at
		// a queue costs about a microsecond, and the growth with a
		// backlog has each of the 64 workers it rings look at every
		// queue a few times (at 8192 workers that step took 0.2–1.8 s of
		// CPU beside two busy loops, at 4096 up to 1.1 s). A pool whose
		// every worker looked at every queue would spend 16 s here.
		n, budget = 4096, 3*budget
	}
	if emulated {
		budget *= 5
	}
	watchdog(t, 60*time.Second)
	if _, ok := cputime.Process(); !ok {
		t.Skip("no CPU time on this platform")
	}
	// Small queues: the test is about the workers, not their memory.
	p := New(Config{Workers: 1, QueueSize: 64})
	// Closed at the end, or left to the failed binary if a step is still
	// running: Close would wait for it.
	stuck := false
	defer func() {
		if !stuck {
			p.Close()
		}
	}()
	step := func(name string, f func()) {
		t.Helper()
		done := make(chan struct{})
		start, cpu0 := time.Now(), cputime.Used()
		go func() {
			defer close(done)
			f()
		}()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				t.Logf("%s: %v, %v of CPU", name, time.Since(start), cputime.Used()-cpu0)
				return
			case <-tick.C:
				if used := cputime.Used() - cpu0; used > budget {
					// Not Stats: it waits for the Resize in progress.
					stuck = true
					t.Fatalf("%s: not done after %v of CPU (%v); the goroutines, grouped by stack:\n%s",
						name, used, time.Since(start), goroutineGroups(32<<10))
				}
			}
		}
	}
	// A step's CPU is its own: a worker woken by a call before it still
	// scans every queue, once, before it parks.
	quiet := func() {
		t.Helper()
		if _, ok := settleParked(p, 10*time.Second); !ok {
			t.Fatalf("workers not parked: %+v", p.Stats())
		}
	}
	tk := NewTask(p, func(x int) int { return x + 1 })
	call := func(name string) {
		t.Helper()
		for i := range 64 {
			if v, err := tk.Call(i).Wait(context.Background()); v != i+1 || err != nil {
				t.Fatalf("%s: Call(%d) = %d, %v", name, i, v, err)
			}
		}
	}
	step(fmt.Sprint("grow to ", n), func() { p.Resize(n) })
	if s := p.Stats(); s.Workers != n || s.Retiring != 0 {
		t.Fatalf("after Resize(%d): %+v", n, s)
	}
	call("grown")
	quiet()
	step("shrink to 1 and leave", func() {
		p.Resize(1)
		for p.Stats().Retiring != 0 {
			time.Sleep(time.Millisecond)
		}
	})
	call("shrunk")
	// A backlog behind the one worker, blocked: the workers the next grow
	// adds run it.
	g := newGate()
	if err := p.Go(g.block); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	var ran atomic.Int32
	queued := 0
	for p.TryGo(func() { ran.Add(1) }) {
		queued++
	}
	step("grow again", func() { p.Resize(n) })
	if !eventually(10*time.Second, func() bool { return ran.Load() == int32(queued) }) {
		t.Fatalf("the new workers ran %d of the %d tasks queued before they came: %+v", ran.Load(), queued, p.Stats())
	}
	close(g.release)
	quiet()
	step("close", p.Close)
	if s := p.Stats(); s.Submitted != s.Completed || s.Completed != uint64(queued+1+2*64) || s.Workers != 0 {
		t.Fatalf("after Close: %+v", s)
	}
}

// goroutineGroups returns the goroutines' stacks, those that are the same
// counted once, cut to at most limit bytes: what a step over its budget
// was doing.
func goroutineGroups(limit int) string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	if s := b.String(); len(s) > limit {
		return s[:limit] + "\n[cut]"
	}
	return b.String()
}
