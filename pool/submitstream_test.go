package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Submit with a ctx that cannot end travels in the pool's Submit stream
// for its result type (submit.go, callstream.go). These tests drive it
// as TestCallStreamExactlyOnce drives Call: every call runs once, each
// future gives its own value and its function's error unchanged, panics
// and runtime.Goexit become *PanicErrors, and Close refuses or runs every
// call, none twice.

var errOdd = errors.New("odd")

func TestSubmitStreamExactlyOnce(t *testing.T) {
	watchdog(t, 120*time.Second)
	for _, procs := range []int{1, 2, 4} {
		for _, c := range streamShapes() {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, c.name), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				p := New(c.cfg)
				defer p.Close()
				const submitters = 3
				per := scale(3000)
				runs := make([]atomic.Int32, submitters*per)
				var wg sync.WaitGroup
				for g := range submitters {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx := context.Background()
						fs := make([]Future[int], 0, 150)
						xs := make([]int, 0, 150)
						check := func() {
							for k, f := range fs {
								x := xs[k]
								v, err := f.Wait(ctx)
								var pe *PanicError
								switch {
								case x%97 == 0:
									if !errors.As(err, &pe) {
										t.Errorf("call %d: %v, %v: want a *PanicError", x, v, err)
									}
								case x%2 == 1:
									if v != -x || !errors.Is(err, errOdd) {
										t.Errorf("call %d: %v, %v: want %d, errOdd", x, v, err, -x)
									}
								case v != -x || err != nil:
									t.Errorf("call %d: %v, %v: want %d, nil", x, v, err, -x)
								}
							}
							fs, xs = fs[:0], xs[:0]
						}
						for i := range per {
							x := g*per + i
							fs = append(fs, Submit(ctx, p, func() (int, error) {
								runs[x].Add(1)
								if x%97 == 0 {
									panic(x)
								}
								if x%2 == 1 {
									return -x, fmt.Errorf("call %d: %w", x, errOdd)
								}
								return -x, nil
							}))
							xs = append(xs, x)
							if len(fs) == 1+(x*7)%150 {
								check()
							}
						}
						check()
					}()
				}
				wg.Wait()
				for x := range runs {
					if n := runs[x].Load(); n != 1 {
						t.Fatalf("call %d ran %d times", x, n)
					}
				}
				if p.qs >= minStreamCap && cacheFor[int](p).stream.open.Load() == nil {
					t.Fatal("no Submit stream was opened: the calls went one by one")
				}
				p.Close()
				if s := p.Stats(); s.Submitted != s.Completed || s.Completed != uint64(len(runs)) {
					t.Fatalf("stats %+v, want %d submitted and completed", s, len(runs))
				}
			})
		}
	}
}

// TestSubmitStreamCloseRace: Close races submitters in mid-burst. A
// future gives its own value (its call ran once) or ErrClosed (it never
// ran).
func TestSubmitStreamCloseRace(t *testing.T) {
	watchdog(t, 120*time.Second)
	for round := range scale(200) {
		c := streamShapes()[round%len(streamShapes())]
		p := New(c.cfg)
		var ran atomic.Int64
		var got, refused atomic.Int64
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				fs := make([]Future[int], 60)
				for i := range fs {
					x := g*1000 + i
					fs[i] = Submit(ctx, p, func() (int, error) { ran.Add(1); return x, nil })
				}
				for i, f := range fs {
					switch v, err := f.Wait(ctx); {
					case err == nil && v == g*1000+i:
						got.Add(1)
					case errors.Is(err, ErrClosed):
						refused.Add(1)
					default:
						t.Errorf("round %d (%s): call %d: %v, %v", round, c.name, i, v, err)
					}
				}
			}()
		}
		if round%2 == 0 {
			runtime.Gosched()
		}
		p.Close()
		wg.Wait()
		if ran.Load() != got.Load() || got.Load()+refused.Load() != 180 {
			t.Fatalf("round %d (%s): ran %d, got %d, refused %d of 180", round, c.name, ran.Load(), got.Load(), refused.Load())
		}
	}
}
