package knit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRingBatchStatus: the batch calls tell full, empty and closed apart,
// on every ring and end, so a loop over TryPushBatch ends after Close.
func TestRingBatchStatus(t *testing.T) {
	ctx := context.Background()
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.newInt(4, Park{})
			check := func(what string, n int, err error, wantN int, wantErr error) {
				t.Helper()
				if n != wantN || !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
					t.Fatalf("%s = %d, %v; want %d, %v", what, n, err, wantN, wantErr)
				}
			}
			var n int
			var err error
			if k.unbounded {
				n, err = q.TryPushBatch([]int{1, 2, 3, 4})
				check("TryPushBatch of 4", n, err, 4, nil)
			} else {
				n, err = q.TryPushBatch([]int{1, 2, 3, 4, 5, 6})
				check("TryPushBatch of 6 into 4", n, err, 4, ErrFull)
			}
			dst := make([]int, 8)
			n, err = q.TryPopBatch(dst[:2])
			check("TryPopBatch of 2", n, err, 2, nil)
			n, err = q.TryPopBatch(dst)
			check("TryPopBatch of the rest", n, err, 2, nil)
			if !slices.Equal(dst[:2], []int{3, 4}) {
				t.Fatalf("TryPopBatch took %v, want [3 4]", dst[:2])
			}
			n, err = q.TryPopBatch(dst)
			check("TryPopBatch on empty", n, err, 0, ErrEmpty)
			n, err = q.TryPopBatch(nil)
			check("TryPopBatch of nothing", n, err, 0, nil)
			n, err = q.TryPushBatch(nil)
			check("TryPushBatch of nothing", n, err, 0, nil)
			n, err = q.PushBatch(ctx, []int{7, 8, 9})
			check("PushBatch of 3", n, err, 3, nil)
			q.Close()
			n, err = q.TryPushBatch([]int{10})
			check("TryPushBatch after Close", n, err, 0, ErrClosed)
			n, err = q.PushBatch(ctx, []int{10})
			check("PushBatch after Close", n, err, 0, ErrClosed)
			// The loop the issue was about: it ends after Close.
			vs := []int{10, 11}
			for len(vs) > 0 {
				n, err := q.TryPushBatch(vs)
				vs = vs[n:]
				if errors.Is(err, ErrClosed) {
					break
				}
			}
			n, err = q.PopBatch(ctx, dst)
			check("PopBatch after Close", n, err, 3, nil)
			if !slices.Equal(dst[:3], []int{7, 8, 9}) {
				t.Fatalf("PopBatch took %v, want [7 8 9]", dst[:3])
			}
			n, err = q.TryPopBatch(dst)
			check("TryPopBatch when drained", n, err, 0, ErrClosed)
			n, err = q.PopBatch(ctx, dst)
			check("PopBatch when drained", n, err, 0, ErrClosed)
		})
	}
}

// TestRingBatchBlocking streams items through PushBatch and PopBatch,
// and through All, across a ring much smaller than a batch: every item
// arrives once, in order per producer, and the consumer ends at Close.
func TestRingBatchBlocking(t *testing.T) {
	for _, k := range ringKinds {
		for _, useAll := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/all=%v", k.name, useAll), func(t *testing.T) {
				defer watchdog(t, 60*time.Second)()
				q := k.newInt(4, Park{})
				producers, consumers := 1, 1
				if k.multiProducer {
					producers = 3
				}
				if k.multiConsumer {
					consumers = 3
				}
				per := 20000
				if raceEnabled {
					per = 2000
				}
				ctx := context.Background()
				var pwg sync.WaitGroup
				for p := range producers {
					pwg.Go(func() {
						vs := make([]int, 0, 37)
						for i := 0; i < per; {
							vs = vs[:0]
							for j := 0; j < cap(vs) && i < per; j++ {
								vs = append(vs, p*per+i)
								i++
							}
							if n, err := q.PushBatch(ctx, vs); n != len(vs) || err != nil {
								t.Errorf("PushBatch = %d, %v; want %d, nil", n, err, len(vs))
								return
							}
						}
					})
				}
				got := make([][]int, consumers)
				var cwg sync.WaitGroup
				for c := range consumers {
					cwg.Go(func() {
						if useAll {
							for v := range All(ctx, q) {
								got[c] = append(got[c], v)
							}
							return
						}
						dst := make([]int, 16)
						for {
							n, err := q.PopBatch(ctx, dst)
							if err != nil {
								if !errors.Is(err, ErrClosed) || n != 0 {
									t.Errorf("PopBatch = %d, %v at the end; want 0, ErrClosed", n, err)
								}
								return
							}
							if n == 0 {
								t.Error("PopBatch returned 0 items and no error")
								return
							}
							got[c] = append(got[c], dst[:n]...)
						}
					})
				}
				pwg.Wait()
				q.Close()
				cwg.Wait()
				seen := make([]int, producers*per)
				for _, g := range got {
					last := make([]int, producers)
					for i := range last {
						last[i] = -1
					}
					for _, v := range g {
						seen[v]++
						if p := v / per; v <= last[p] {
							t.Fatalf("producer %d's items out of order: %d after %d", p, v, last[p])
						} else {
							last[p] = v
						}
					}
				}
				for v, n := range seen {
					if n != 1 {
						t.Fatalf("item %d arrived %d times", v, n)
					}
				}
			})
		}
	}
}

// TestRingBatchCloseAndCancel: a PushBatch blocked on a full ring returns
// when the ring is closed (multi-producer rings, where another goroutine
// may close) or its ctx is cancelled, and says exactly how many went in;
// a PopBatch and a range blocked on an empty ring end the same way.
func TestRingBatchCloseAndCancel(t *testing.T) {
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			defer watchdog(t, 30*time.Second)()
			q := k.newInt(2, Park{})
			type res struct {
				n   int
				err error
			}
			rc := make(chan res, 1)
			if k.unbounded {
				// A PushBatch never waits: only the consumer's half applies.
				if n, err := q.TryPushBatch([]int{1, 2}); n != 2 || err != nil {
					t.Fatalf("TryPushBatch = %d, %v", n, err)
				}
				q.Close()
			} else {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					n, err := q.PushBatch(ctx, []int{1, 2, 3, 4, 5})
					rc <- res{n, err}
				}()
				waitRegistered(t, &bellsOfRing(q).notFull.Event, 1)
				cancel()
				if r := <-rc; r.n != 2 || !errors.Is(r.err, context.Canceled) {
					t.Fatalf("cancelled PushBatch = %d, %v; want 2, context.Canceled", r.n, r.err)
				}
				if q.Len() != 2 {
					t.Fatalf("Len = %d after a PushBatch that put in 2", q.Len())
				}
				if k.multiProducer {
					go func() {
						n, err := q.PushBatch(context.Background(), []int{6, 7})
						rc <- res{n, err}
					}()
					waitRegistered(t, &bellsOfRing(q).notFull.Event, 1)
					q.Close()
					if r := <-rc; r.n != 0 || !errors.Is(r.err, ErrClosed) {
						t.Fatalf("PushBatch blocked across Close = %d, %v; want 0, ErrClosed", r.n, r.err)
					}
				} else {
					q.Close()
				}
			}
			dst := make([]int, 4)
			if n, err := q.PopBatch(context.Background(), dst); n != 2 || err != nil {
				t.Fatalf("PopBatch after Close = %d, %v; want the 2 items", n, err)
			}

			// Blocked consumers: PopBatch cancelled, then a range
			// cancelled, then a range that Close ends.
			e := k.newInt(2, Park{})
			rctx, rcancel := context.WithCancel(context.Background())
			go func() {
				n, err := e.PopBatch(rctx, dst)
				rc <- res{n, err}
			}()
			waitRegistered(t, &bellsOfRing(e).notEmpty.Event, 1)
			rcancel()
			if r := <-rc; r.n != 0 || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancelled PopBatch = %d, %v", r.n, r.err)
			}
			actx, acancel := context.WithCancel(context.Background())
			go func() {
				n := 0
				for range All(actx, e) {
					n++
				}
				rc <- res{n, actx.Err()}
			}()
			waitRegistered(t, &bellsOfRing(e).notEmpty.Event, 1)
			acancel()
			if r := <-rc; r.n != 0 || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancelled range = %d items, ctx %v", r.n, r.err)
			}
			go func() {
				n := 0
				for range All(context.Background(), e) {
					n++
				}
				rc <- res{n, nil}
			}()
			if err := e.TryPush(1); err != nil {
				t.Fatal(err)
			}
			waitRegistered(t, &bellsOfRing(e).notEmpty.Event, 1)
			e.Close()
			if r := <-rc; r.n != 1 {
				t.Fatalf("range ended by Close saw %d items, want 1", r.n)
			}
		})
	}
}

// TestRingAllBreak: leaving a range early takes nothing more.
func TestRingAllBreak(t *testing.T) {
	for _, k := range ringKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.newInt(8, Park{})
			if n, err := q.TryPushBatch([]int{1, 2, 3, 4}); n != 4 || err != nil {
				t.Fatalf("TryPushBatch = %d, %v", n, err)
			}
			for v := range All(context.Background(), q) {
				if v == 2 {
					break
				}
			}
			if v, err := q.TryPop(); v != 3 || err != nil {
				t.Fatalf("after a break at 2, TryPop = %d, %v; want 3", v, err)
			}
		})
	}
}

// TestDoneContextDoesNothing: every call that takes a ctx does nothing
// and returns ctx.Err() when the ctx is done before the call, even where
// it would not have had to wait: on every ring and end, Push stores
// nothing, Pop, PopBatch and a range take nothing, PushBatch stores
// nothing; and Event.Wait returns ctx.Err() even after a Notify.
func TestDoneContextDoesNothing(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{cancelled, expired} {
		want := ctx.Err()
		for _, k := range ringKinds {
			t.Run(fmt.Sprintf("%s/%v", k.name, want), func(t *testing.T) {
				q := k.newInt(8, Park{})
				if err := q.TryPush(1); err != nil {
					t.Fatal(err)
				}
				if err := q.Push(ctx, 2); !errors.Is(err, want) {
					t.Errorf("Push = %v, want %v", err, want)
				}
				if n, err := q.PushBatch(ctx, []int{2, 3}); n != 0 || !errors.Is(err, want) {
					t.Errorf("PushBatch = %d, %v; want 0, %v", n, err, want)
				}
				if _, err := q.Pop(ctx); !errors.Is(err, want) {
					t.Errorf("Pop = %v, want %v", err, want)
				}
				if n, err := q.PopBatch(ctx, make([]int, 4)); n != 0 || !errors.Is(err, want) {
					t.Errorf("PopBatch = %d, %v; want 0, %v", n, err, want)
				}
				for v := range All(ctx, q) {
					t.Errorf("a range with a done ctx yielded %d", v)
				}
				if q.Len() != 1 {
					t.Fatalf("Len = %d after calls with a done ctx, want the 1 item pushed before", q.Len())
				}
				if v, err := q.TryPop(); v != 1 || err != nil {
					t.Fatalf("TryPop = %d, %v; want the item pushed before", v, err)
				}
			})
		}
		var e Event
		tk := e.Prepare()
		e.Notify(1)
		if err := e.Wait(ctx, tk, Park{}); !errors.Is(err, want) {
			t.Errorf("Event.Wait after a Notify with a done ctx = %v, want %v", err, want)
		}
		if w := e.Waiters(); w != 0 {
			t.Errorf("Event.Wait with a done ctx left %d waiters", w)
		}
	}
}

// TestCtxErrFastPath: ctxErr skips the call for the contexts that are
// never done, and makes it for every other.
func TestCtxErrFastPath(t *testing.T) {
	if ctxErr(context.Background()) != nil || ctxErr(context.TODO()) != nil {
		t.Fatal("ctxErr of Background or TODO is not nil")
	}
	ctx, cancel := context.WithCancel(context.Background())
	if ctxErr(ctx) != nil {
		t.Fatal("ctxErr of a live ctx is not nil")
	}
	cancel()
	if !errors.Is(ctxErr(ctx), context.Canceled) {
		t.Fatal("ctxErr of a cancelled ctx is nil")
	}
	var calls atomic.Int32
	if !errors.Is(ctxErr(countingCtx{context.Background(), &calls}), context.DeadlineExceeded) || calls.Load() != 1 {
		t.Fatal("ctxErr did not ask a context of another type")
	}
}

// countingCtx is a ctx of a type ctxErr does not know, whose Err counts.
type countingCtx struct {
	context.Context
	calls *atomic.Int32
}

func (c countingCtx) Err() error { c.calls.Add(1); return context.DeadlineExceeded }

// TestRingBatchPopTakesWhatIsReady: a TryPopBatch that finds the ring
// empty at its look says so; it never turns into a single pop that
// leaves ready items behind. On the rings whose batch push publishes all
// its items with one store (SPSC, Words, a Broadcast's subscription), a
// producer that only pushes pairs into an even capacity makes every pair
// ready at one instant, so a TryPopBatch of two takes none or both.
func TestRingBatchPopTakesWhatIsReady(t *testing.T) {
	pairs := 200_000
	if testing.Short() {
		pairs = 20_000
	}
	for _, k := range ringKinds {
		switch k.name {
		case "SPSC", "Words", "Broadcast 1 subscriber":
		default:
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			defer watchdog(t, 2*time.Minute)()
			q := k.newInt(8, Park{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer q.Close()
				for i := 0; i < pairs; {
					n, err := q.TryPushBatch([]int{2 * i, 2*i + 1})
					switch {
					case n == 2:
						i++
					case n == 0 && errors.Is(err, ErrFull):
						runtime.Gosched()
					default:
						t.Errorf("TryPushBatch of a pair = %d, %v", n, err)
						return
					}
				}
			}()
			var dst [2]int
			next, singles := 0, 0
			for {
				n, err := q.TryPopBatch(dst[:])
				if n == 1 {
					singles++
				}
				for _, v := range dst[:n] {
					if v != next {
						t.Fatalf("popped %d, want %d", v, next)
					}
					next++
				}
				if errors.Is(err, ErrClosed) {
					break
				}
				if n == 0 {
					runtime.Gosched()
				}
			}
			wg.Wait()
			if next != 2*pairs || singles != 0 {
				t.Fatalf("popped %d of %d items; %d batches took one item of a ready pair", next, 2*pairs, singles)
			}
		})
	}
}
