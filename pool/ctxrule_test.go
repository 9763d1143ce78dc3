package pool

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestQueuedCtxRule: the package doc's one rule for a ctx, call by call. A
// task queued behind a blocked worker whose ctx then ends does not run,
// its result is the ctx's error, and Stats counts it in SkippedCtx and
// never in Completed.
func TestQueuedCtxRule(t *testing.T) {
	watchdog(t, 60*time.Second)
	bg := context.Background()
	for _, tc := range []struct {
		name string
		// queue queues work whose fn adds to ran, under ctx, and returns a
		// func that waits for the call's own result (nil for GoContext,
		// which has none once accepted).
		queue func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error
	}{
		{"GoContext", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			if err := p.GoContext(ctx, func() { ran.Add(1) }); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"CallContext", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			f := NewTask(p, func(x int) int { ran.Add(1); return x }).CallContext(ctx, 1)
			return func() error { _, err := f.Wait(bg); return err }
		}},
		{"Submit", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			f := Submit(ctx, p, func() (int, error) { ran.Add(1); return 1, nil })
			return func() error { _, err := f.Wait(bg); return err }
		}},
		{"Group", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			g, _ := NewGroup(ctx, p)
			g.Go(func() error { ran.Add(1); return nil })
			return g.Wait
		}},
		{"Map", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			return background(func() error {
				_, err := Map(ctx, p, []int{1, 2, 3}, func(x int) (int, error) { ran.Add(1); return x, nil })
				return err
			})
		}},
		{"MapSeq", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			return background(func() error {
				_, err := MapSeq(ctx, p, slices.Values([]int{1, 2, 3}), func(x int) (int, error) { ran.Add(1); return x, nil })
				return err
			})
		}},
		{"MapStream", func(t *testing.T, p *Pool, ctx context.Context, ran *atomic.Int32) func() error {
			return background(func() error {
				for _, err := range MapStream(ctx, p, slices.Values([]int{1, 2, 3}), func(x int) (int, error) { ran.Add(1); return x, nil }) {
					if err != nil {
						return err
					}
				}
				return nil
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Config{Workers: 1, QueueSize: 64})
			defer p.Close()
			g := newGate()
			if err := p.Go(g.block); err != nil {
				t.Fatal(err)
			}
			<-g.entered
			before := p.Stats()
			ctx, cancel := context.WithCancel(bg)
			var ran atomic.Int32
			wait := tc.queue(t, p, ctx, &ran)
			if !eventually(10*time.Second, func() bool { return p.Stats().Submitted > before.Submitted }) {
				t.Fatalf("nothing was queued: %+v", p.Stats())
			}
			cancel()
			close(g.release)
			if wait != nil {
				if err := wait(); !errors.Is(err, context.Canceled) {
					t.Fatalf("result %v, want the ctx's error", err)
				}
			}
			if !eventually(10*time.Second, func() bool {
				s := p.Stats()
				return s.SkippedCtx > before.SkippedCtx && s.QueueDepth == 0
			}) {
				t.Fatalf("the queued task was not skipped: %+v", p.Stats())
			}
			if n := ran.Load(); n != 0 {
				t.Fatalf("fn ran %d times after its ctx ended while queued", n)
			}
			if s := p.Stats(); s.Completed != before.Completed+1 { // the gate's task only
				t.Fatalf("Completed %d -> %d", before.Completed, s.Completed)
			}
		})
	}
}

// background runs f on a goroutine of its own and returns a func that
// waits for its result.
func background(f func() error) func() error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return func() error { return <-c }
}
