package pool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestStatsCountWhatRan is the new-user trial of issue 24 against a model:
// every function the pool ran adds one to a counter of the test's own,
// and Stats.Completed must equal it. A one-worker group of 100 tasks
// whose first fails runs one function; 10 Submits whose context is
// cancelled while they are queued run none; a Map whose context ends
// while its jobs are queued runs no element. What was taken and not run
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
	want := Stats{Submitted: 100 + 1 + 10 + 5 + 1, Completed: 2, Skipped: 99 + 10 + 5 + 1, SkippedGroup: 99, SkippedCtx: 10 + 5 + 1}
	if s.Submitted != want.Submitted || s.Completed != want.Completed || s.Skipped != want.Skipped ||
		s.SkippedGroup != want.SkippedGroup || s.SkippedCtx != want.SkippedCtx || s.Abandoned != 0 {
		t.Fatalf("stats %+v\nwant Submitted %d Completed %d Skipped %d (group %d, ctx %d)",
			s, want.Submitted, want.Completed, want.Skipped, want.SkippedGroup, want.SkippedCtx)
	}
}
