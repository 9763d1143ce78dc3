package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestShutdownAbandons blocks every worker, queues calls and Go tasks
// behind them, and lets Shutdown's context expire: every queued task is
// abandoned (its future fails with ErrClosed), the count is reported, and
// the blocked tasks still finish.
func TestShutdownAbandons(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"w1", Config{Workers: 1}},
		{"w3", Config{Workers: 3}},
		{"w3-nosteal", Config{Workers: 3, NoSteal: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			n := len(p.workersNow())
			g := newGate()
			for range n {
				p.Go(g.block)
			}
			for range n {
				<-g.entered
			}
			tk := NewTask(p, func(x int) int { return x })
			var goRan atomic.Int32
			const calls, gos = 20, 10
			fs := make([]Future[int], calls)
			for i := range fs {
				fs[i] = tk.Call(i)
			}
			for range gos {
				if err := p.Go(func() { goRan.Add(1) }); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			err := p.Shutdown(ctx)
			var se *ShutdownError
			if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Shutdown = %v, want a *ShutdownError wrapping DeadlineExceeded", err)
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("(%d queued tasks abandoned)", calls+gos)) {
				t.Fatalf("Error() = %q", msg)
			}
			if se.Abandoned != calls+gos {
				t.Fatalf("abandoned %d, want %d", se.Abandoned, calls+gos)
			}
			for i, f := range fs {
				if _, err := f.Wait(context.Background()); !errors.Is(err, ErrClosed) {
					t.Fatalf("abandoned call %d: %v", i, err)
				}
			}
			close(g.release)
			p.Close()
			if goRan.Load() != 0 {
				t.Fatalf("%d abandoned Go tasks ran", goRan.Load())
			}
			s := p.Stats()
			if s.Abandoned != calls+gos || s.Completed != uint64(n) || s.Submitted != uint64(n+calls+gos) {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// TestShutdownInTime: a Shutdown whose context outlasts the work returns
// nil, with everything run.
func TestShutdownInTime(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	var ran atomic.Int32
	for range 100 {
		p.Go(func() { ran.Add(1) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 100 {
		t.Fatalf("ran %d of 100", ran.Load())
	}
}

// TestCloseRacesSubmitters closes (or shuts down with a short deadline)
// while submitters push (Go, Call and CallBatch) and workers park and
// wake. Every submission is either refused (ErrClosed), or run exactly
// once, or abandoned and its future failed: accepted == ran + abandoned,
// exactly.
func TestCloseRacesSubmitters(t *testing.T) {
	watchdog(t, 60*time.Second)
	rounds := scale(200)
	cfgs := configs()
	var totalAbandoned, totalRefused, totalRan uint64
	defer func() {
		t.Logf("%d rounds: %d ran, %d abandoned, %d refused", rounds, totalRan, totalAbandoned, totalRefused)
	}()
	for r := range rounds {
		c := cfgs[r%len(cfgs)]
		shutdown := r%3 != 0
		p := New(c.cfg)
		var callRan atomic.Int64
		tk := NewTask(p, func(x int) int {
			callRan.Add(1)
			if x%7 == 0 {
				time.Sleep(time.Duration(x%3) * time.Microsecond) // calls of uneven length
			}
			return x + 1
		})
		const submitters = 4
		var (
			accepted, ran, refused atomic.Int64
			callsOK, callsClosed   atomic.Int64
			callsRefused           atomic.Int64
			wg                     sync.WaitGroup
			stop                   atomic.Bool
		)
		for g := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var fs []Future[int]
				var xs []int
				for i := 0; !stop.Load() || i < 50; i++ {
					x := g<<20 | i
					switch i % 4 {
					case 0, 1:
						if err := p.Go(func() { ran.Add(1) }); err == nil {
							accepted.Add(1)
						} else if errors.Is(err, ErrClosed) {
							refused.Add(1)
						} else {
							t.Error(err)
						}
					case 2:
						fs = append(fs, tk.Call(x))
						xs = append(xs, x)
					case 3:
						// A batch, from one call up to past a packet.
						ins := make([]int, 1+(i*37)%150)
						for k := range ins {
							ins[k] = x + k<<8
						}
						outs := make([]Future[int], len(ins))
						n := tk.CallBatch(ins, outs)
						for k, f := range outs {
							if (k < n) != (f.r != nil) {
								t.Errorf("CallBatch accepted %d, future %d has slot %v", n, k, f.r != nil)
							}
						}
						fs = append(fs, outs...)
						xs = append(xs, ins...)
					}
					if i%16 == 0 { // jitter: workers park and wake between bursts
						time.Sleep(time.Duration(rand.IntN(20)) * time.Microsecond)
					}
					if i > 1<<16 {
						break
					}
				}
				for k, f := range fs {
					v, err := f.Wait(context.Background())
					switch {
					case err == nil && v == xs[k]+1:
						callsOK.Add(1)
					case errors.Is(err, ErrClosed):
						callsClosed.Add(1)
						if f.r == nil {
							callsRefused.Add(1)
						}
					default:
						t.Errorf("call %d: %v, %v", xs[k], v, err)
					}
				}
			}()
		}
		// Close at a random moment; the accounting holds at any.
		time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
		var abandoned int
		if shutdown {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(200))*time.Microsecond)
			var se *ShutdownError
			if err := p.Shutdown(ctx); errors.As(err, &se) {
				abandoned = se.Abandoned
			} else if err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		stop.Store(true)
		p.Close()
		wg.Wait()
		s := p.Stats()
		// Stats also counts the calls of streams and CallBatch runs that
		// waited behind a running call (see ShutdownError).
		if uint64(abandoned) > s.Abandoned {
			t.Fatalf("round %d: Shutdown reported %d abandoned, Stats %d", r, abandoned, s.Abandoned)
		}
		// Go tasks: accepted = ran + abandoned. Calls: a future failing
		// with ErrClosed was refused (no slot behind it) or abandoned.
		if got, want := callRan.Load(), callsOK.Load(); got != want {
			t.Fatalf("round %d: %d calls ran, %d returned a value", r, got, want)
		}
		if got, want := s.Completed, uint64(ran.Load()+callRan.Load()); got != want {
			t.Fatalf("round %d: completed %d, want %d (stats %+v)", r, got, want, s)
		}
		callsAbandoned := callsClosed.Load() - callsRefused.Load()
		if got, want := int64(s.Abandoned), accepted.Load()-ran.Load()+callsAbandoned; got != want {
			t.Fatalf("round %d: abandoned %d, want Go accepted %d - ran %d + calls abandoned %d", r, got, accepted.Load(), ran.Load(), callsAbandoned)
		}
		if got, want := int64(s.Submitted), accepted.Load()+callsOK.Load()+callsAbandoned; got != want {
			t.Fatalf("round %d: submitted %d, want %d", r, got, want)
		}
		totalAbandoned += s.Abandoned
		totalRan += s.Completed
		totalRefused += uint64(refused.Load() + callsRefused.Load())
		if !shutdown && s.Abandoned != 0 {
			t.Fatalf("round %d: Close abandoned %d", r, s.Abandoned)
		}
	}
}
