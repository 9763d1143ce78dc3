package pool

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStealingUnblocks: with one worker stuck on a long task, the tasks
// queued behind it are stolen and run by the others while it is still
// stuck. With stealing off they wait for it.
func TestStealingUnblocks(t *testing.T) {
	watchdog(t, 20*time.Second)
	for _, noSteal := range []bool{false, true} {
		p := New(Config{Workers: 3, NoSteal: noSteal})
		g := newGate()
		p.Go(g.block) // round-robin target 0
		<-g.entered
		var ran atomic.Int32
		const n = 90 // a third of them queued on the stuck worker
		for range n {
			p.Go(func() { ran.Add(1) })
		}
		if !noSteal {
			if !eventually(10*time.Second, func() bool { return ran.Load() == n }) {
				t.Fatalf("stealing: %d of %d ran while one worker was stuck; stats %+v", ran.Load(), n, p.Stats())
			}
			if s := p.Stats(); s.Stolen == 0 {
				t.Fatalf("all ran but nothing stolen: %+v", s)
			}
		} else {
			// The others finish their share and park. A worker counts
			// itself parked only after its last look at every queue it
			// may take from, the look a wrong steal would be made in,
			// and with its own queue empty nothing but a push (there are
			// no more) wakes it: so once both are parked the stuck
			// worker's share can only still be queued, whatever the
			// timing.
			if !eventually(10*time.Second, func() bool { return ran.Load() >= n*2/3 && idleParked(p) == 2 }) {
				t.Fatalf("NoSteal: the free workers did not finish their share and park: %d of %d ran; stats %+v", ran.Load(), n, p.Stats())
			}
			if got := ran.Load(); got == n {
				t.Fatalf("NoSteal: all %d ran while the worker they were queued on was stuck", n)
			}
			if s := p.Stats(); s.Stolen != 0 {
				t.Fatalf("NoSteal stole: %+v", s)
			}
		}
		close(g.release)
		p.Close()
		if ran.Load() != n {
			t.Fatalf("ran %d of %d", ran.Load(), n)
		}
	}
}

// idleParked counts p's workers that are parked with their own queue
// empty.
func idleParked(p *Pool) int {
	k := 0
	for _, w := range p.workersNow() {
		if w.parks.load() != w.wakes.load() && w.q.Len() == 0 {
			k++
		}
	}
	return k
}

// pareto draws a Pareto(alpha) duration with the given minimum, capped.
func pareto(r *rand.Rand, minimum time.Duration, alpha float64, maxd time.Duration) time.Duration {
	d := time.Duration(float64(minimum) / math.Pow(1-r.Float64(), 1/alpha))
	return min(d, maxd)
}

// TestStealingPareto runs a heavy-tailed mix of blocking tasks submitted
// as one CallBatch and checks every task ran and the batch was spread
// over every worker (by claiming, now that a batch travels as packets).
// Its timing is logged, not asserted: the benchmark measures makespan.
func TestStealingPareto(t *testing.T) {
	watchdog(t, 30*time.Second)
	r := rand.New(rand.NewPCG(1, 2))
	const workers = 4
	p := New(Config{Workers: workers})
	// Each task reports how long it actually took (sleeps overshoot).
	var slept atomic.Int64
	var mu sync.Mutex
	runners := map[uintptr]bool{}
	tk := NewTask(p, func(d time.Duration) time.Duration {
		mu.Lock()
		runners[curg()] = true
		mu.Unlock()
		t0 := time.Now()
		time.Sleep(d) // the task's work, not a wait
		slept.Add(int64(time.Since(t0)))
		return d
	})
	ds := make([]time.Duration, scale(400))
	var sum time.Duration
	for i := range ds {
		ds[i] = pareto(r, 50*time.Microsecond, 1.2, 20*time.Millisecond)
		sum += ds[i]
	}
	start := time.Now()
	fs := make([]Future[time.Duration], len(ds))
	tk.CallBatch(ds, fs)
	var got time.Duration
	for _, f := range fs {
		d, err := f.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got += d
	}
	span := time.Since(start)
	p.Close()
	s := p.Stats()
	if got != sum || s.Completed != uint64(len(ds)) {
		t.Fatalf("sum %v want %v; stats %+v", got, sum, s)
	}
	if len(runners) != workers {
		t.Fatalf("a batch of %d ran on %d of %d workers: %+v", len(ds), len(runners), workers, s)
	}
	ideal := time.Duration(slept.Load()) / workers
	t.Logf("makespan %v, ideal %v (%.2fx), stolen %d of %d", span, ideal, float64(span)/float64(ideal), s.Stolen, len(ds))
}

// TestParallelWake parks every worker, then submits one task per worker
// that waits at a barrier for all the others: it completes only if every
// parked worker is woken, not one worker left to run them in turn. Both
// single submissions (a ring per task) and a batch (one ring for all,
// one queue when stealing) are checked, round after round.
func TestParallelWake(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"w4", Config{Workers: 4}},
		{"w8", Config{Workers: 8}},
		{"w4-nosteal", Config{Workers: 4, NoSteal: true}},
		{"w70", Config{Workers: 70}}, // two words of sleeper bits
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			n := len(p.workersNow())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// A barrier that gives up with ctx, so that a failure reports
			// instead of leaving Close waiting on stuck workers.
			type barrier struct {
				in  atomic.Int32
				all chan struct{}
			}
			meet := NewTask(p, func(b *barrier) int {
				if int(b.in.Add(1)) == n {
					close(b.all)
				}
				select {
				case <-b.all:
					return 1
				case <-ctx.Done():
					return 0
				}
			})
			for round := range scale(40) {
				if !eventually(10*time.Second, func() bool { return p.Stats().Parked == n }) {
					t.Fatalf("round %d: workers not parked: %+v", round, p.Stats())
				}
				b := &barrier{all: make(chan struct{})}
				fs := make([]Future[int], n)
				if round%2 == 0 {
					for i := range fs {
						fs[i] = meet.Call(b)
					}
				} else {
					ins := make([]*barrier, n)
					for i := range ins {
						ins[i] = b
					}
					meet.CallBatch(ins, fs)
				}
				for i, f := range fs {
					if v, err := f.Wait(context.Background()); err != nil || v != 1 {
						t.Fatalf("round %d: call %d: %v, %v: not every parked worker woke; %+v", round, i, v, err, p.Stats())
					}
				}
			}
		})
	}
}

// TestStealWakesClaimedWorker: two workers, a Call to warm them, then two
// tasks, the first of which blocks until the second runs. The second
// must wake the idle worker. When publishers rang one doorbell shared by
// the workers, Notify could wake a worker other than the one whose idle
// bit was claimed, and the claimed one slept on with its bit clear: the
// second task then waited behind the first for good (seen under -race in
// most runs of 300 rounds). See sleepers.go.
func TestStealWakesClaimedWorker(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, c := range []Config{{Workers: 2}, {Workers: 2, QueueSize: 1}, {Workers: 3}} {
		t.Run(fmt.Sprintf("w%d-q%d", c.Workers, c.QueueSize), func(t *testing.T) {
			for round := range scale(300) {
				p := New(c)
				tk := NewTask(p, func(x int) int { return x * 2 })
				ctx := context.Background()
				if round%2 == 0 {
					if v, err := tk.Call(4).Wait(ctx); err != nil || v != 8 {
						t.Fatalf("Call(4) = %d, %v", v, err)
					}
				}
				second := make(chan struct{})
				first := make(chan struct{})
				p.Go(func() { close(first); <-second })
				<-first
				p.Go(func() { close(second) })
				select {
				case <-second:
				case <-time.After(10 * time.Second):
					t.Fatalf("round %d: the second task never ran while a worker was idle: %+v", round, p.Stats())
				}
				p.Close()
			}
		})
	}
}
