package pool

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestStatsCountWhatRan is the new-user trial of issue 24 against a model:
// every function the pool ran adds one to a counter of the test's own,
// and Stats.Completed must equal it. A one-worker group of 100 tasks
// whose first fails runs one function; 10 Submits whose context is
// cancelled while they are queued run none; a Map of 3 whose context
// ends while its job is queued runs no element, and its 3 elements count
// as skipped once the worker reaches the job. What was taken and not run
// is Skipped, by reason.
func TestStatsCountWhatRan(t *testing.T) {
	watchdog(t, 20*time.Second)
	p := New(Config{Workers: 1})
	defer p.Close()
	var ran atomic.Uint64 // functions the pool ran, counted by the functions
	ctx := context.Background()

	// A group whose first task fails once the rest are queued behind it.
	g, _ := NewGroup(ctx, p)
	release := make(chan struct{})
	g.Go(func() error { ran.Add(1); <-release; return errBoom })
	for range 99 {
		g.Go(func() error { ran.Add(1); return nil })
	}
	close(release)
	if err := g.Wait(); err != errBoom {
		t.Fatalf("group Wait = %v", err)
	}

	// Submits whose context ends while they are queued behind a gate.
	gt := newGate()
	if err := p.Go(func() { ran.Add(1); gt.block() }); err != nil {
		t.Fatal(err)
	}
	<-gt.entered
	sctx, cancel := context.WithCancel(ctx)
	fs := make([]Future[int], 10)
	for i := range fs {
		fs[i] = Submit(sctx, p, func() (int, error) { ran.Add(1); return i, nil })
	}
	cancel()
	// A group whose parent context ends while its tasks are queued.
	pctx, pcancel := context.WithCancel(ctx)
	g2, _ := NewGroup(pctx, p)
	for range 5 {
		g2.Go(func() error { ran.Add(1); return nil })
	}
	pcancel()
	// A Map whose context ends while its job is queued: Map returns at
	// once; the job is skipped when the worker reaches it.
	mctx, mcancel := context.WithCancel(ctx)
	mapped := make(chan error, 1)
	go func() {
		_, err := Map(mctx, p, []int{1, 2, 3}, func(x int) (int, error) { ran.Add(1); return x, nil })
		mapped <- err
	}()
	if !eventually(10*time.Second, func() bool { return p.Stats().QueueDepth == 10+5+1 }) {
		t.Fatalf("the Map's job was not queued: %+v", p.Stats())
	}
	mcancel()
	if err := <-mapped; !errors.Is(err, context.Canceled) {
		t.Fatalf("Map = %v", err)
	}
	close(gt.release)
	for _, f := range fs {
		if _, err := f.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Submit's Wait = %v", err)
		}
	}
	if err := g2.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("second group's Wait = %v", err)
	}
	if !eventually(10*time.Second, func() bool { s := p.Stats(); return s.QueueDepth == 0 && s.Completed+s.Skipped == s.Submitted }) {
		t.Fatalf("the pool did not settle: %+v", p.Stats())
	}
	s := p.Stats()
	if ran.Load() != 2 {
		t.Fatalf("%d functions ran, want 2 (the group's first task and the gate)", ran.Load())
	}
	want := Stats{Submitted: 100 + 1 + 10 + 5 + 3, Completed: 2, Skipped: 99 + 10 + 5 + 3, SkippedGroup: 99, SkippedCtx: 10 + 5 + 3}
	if s.Submitted != want.Submitted || s.Completed != want.Completed || s.Skipped != want.Skipped ||
		s.SkippedGroup != want.SkippedGroup || s.SkippedCtx != want.SkippedCtx || s.Abandoned != 0 {
		t.Fatalf("stats %+v\nwant Submitted %d Completed %d Skipped %d (group %d, ctx %d)",
			s, want.Submitted, want.Completed, want.Skipped, want.SkippedGroup, want.SkippedCtx)
	}
}

// statsDelta is what a run added to the task counters of Stats.
type statsDelta struct {
	Submitted, Completed, Panicked, Skipped, SkippedGroup, SkippedCtx, Abandoned uint64
}

func deltaOf(before, after Stats) statsDelta {
	return statsDelta{
		Submitted:    after.Submitted - before.Submitted,
		Completed:    after.Completed - before.Completed,
		Panicked:     after.Panicked - before.Panicked,
		Skipped:      after.Skipped - before.Skipped,
		SkippedGroup: after.SkippedGroup - before.SkippedGroup,
		SkippedCtx:   after.SkippedCtx - before.SkippedCtx,
		Abandoned:    after.Abandoned - before.Abandoned,
	}
}

// TestStatsMapCountsElements: Map, MapSeq and MapStream over the same
// input add the same counts to Stats, one task per element, whether
// every element returns, the last one panics, or the map runs from a
// task of the pool (which counts once more, for itself).
func TestStatsMapCountsElements(t *testing.T) {
	watchdog(t, 60*time.Second)
	const n = 1000
	in := make([]int, n)
	for i := range in {
		in[i] = i
	}
	ctx := context.Background()
	mappers := []struct {
		name string
		run  func(p *Pool, fn func(int) (int, error)) error
	}{
		{"Map", func(p *Pool, fn func(int) (int, error)) error {
			_, err := Map(ctx, p, in, fn)
			return err
		}},
		{"MapSeq", func(p *Pool, fn func(int) (int, error)) error {
			_, err := MapSeq(ctx, p, slices.Values(in), fn)
			return err
		}},
		{"MapStream", func(p *Pool, fn func(int) (int, error)) error {
			for _, err := range MapStream(ctx, p, slices.Values(in), fn) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
	}
	double := func(x int) (int, error) { return 2 * x, nil }
	panicLast := func(x int) (int, error) {
		if x == n-1 {
			panic("last")
		}
		return 2 * x, nil
	}
	cases := []struct {
		name    string
		workers int
		fn      func(int) (int, error)
		inTask  bool
		wantErr bool
		want    statsDelta
	}{
		{"all return", 4, double, false, false, statsDelta{Submitted: n, Completed: n}},
		// One worker runs the elements in order: every one runs.
		{"last panics", 1, panicLast, false, true, statsDelta{Submitted: n, Completed: n, Panicked: 1}},
		{"from a task", 2, double, true, false, statsDelta{Submitted: n + 1, Completed: n + 1}},
	}
	for _, c := range cases {
		for _, m := range mappers {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				p := New(Config{Workers: c.workers})
				defer p.Close()
				quiet := func() (s Stats) {
					if !eventually(10*time.Second, func() bool {
						s = p.Stats()
						return s.QueueDepth == 0 && s.Completed+s.Skipped == s.Submitted
					}) {
						t.Fatalf("the pool did not settle: %+v", s)
					}
					return s
				}
				before := quiet()
				var err error
				if c.inTask {
					f := Submit(ctx, p, func() (struct{}, error) { return struct{}{}, m.run(p, c.fn) })
					_, err = f.Wait(ctx)
				} else {
					err = m.run(p, c.fn)
				}
				var pe *PanicError
				if c.wantErr != errors.As(err, &pe) || (!c.wantErr && err != nil) {
					t.Fatalf("%s = %v, want a panic: %v", m.name, err, c.wantErr)
				}
				if got := deltaOf(before, quiet()); got != c.want {
					t.Fatalf("Stats delta %+v\nwant %+v", got, c.want)
				}
			})
		}
	}
}

// TestStatsWorkersAfterClose: Workers counts the workers taking new
// tasks, so it is 0 once Close or Shutdown has begun, while the workers
// still run what was queued, and after they have exited.
func TestStatsWorkersAfterClose(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, stop := range []string{"Close", "Shutdown"} {
		t.Run(stop, func(t *testing.T) {
			p := New(Config{Workers: 3})
			if w := p.Stats().Workers; w != 3 {
				t.Fatalf("Workers = %d before %s, want 3", w, stop)
			}
			g := newGate()
			if err := p.Go(g.block); err != nil {
				t.Fatal(err)
			}
			<-g.entered
			stopped := make(chan error, 1)
			go func() {
				if stop == "Close" {
					p.Close()
					stopped <- nil
				} else {
					stopped <- p.Shutdown(context.Background())
				}
			}()
			if !eventually(10*time.Second, func() bool { return p.Stats().Workers == 0 }) {
				t.Errorf("Workers = %d while %s waits for a task, want 0", p.Stats().Workers, stop)
			}
			close(g.release)
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			if s := p.Stats(); s.Workers != 0 {
				t.Fatalf("Workers = %d after %s, want 0: %+v", s.Workers, stop, s)
			}
		})
	}
}
