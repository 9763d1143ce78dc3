package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of shared stream runners queued as streamEntry (callstream.go):
// stale entries, reuse of a stream with runners still queued, and the
// accounting around them.

// retiredShared returns a stream of tk in the state a shared stream is in
// when its last call was claimed and run, every future taken, and one
// runner still queued (counted in runners, not started): the state
// reusable lets through. Its epoch is epoch.
func retiredShared[In, Out any](tk *Task[In, Out], epoch uint64) *callStream[In, Out] {
	s := tk.newStream()
	for i := range s.elems {
		s.elems[i].word.Store((s.gen + 1) << stateBits) // taken: next generation
	}
	n := uint64(s.n)
	s.st.Store(epoch*stEpoch | stActive | stShared | stRunnerOne | n*stHeadOne | n)
	return s
}

// TestStreamEntryStaleDoesNothing: a runner queued for a use of its stream
// that is over (the stream was reused meanwhile) starts as nothing: it
// leaves st alone, is recycled, and its run counts nothing.
func TestStreamEntryStaleDoesNothing(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	s := retiredShared(tk, 7)
	en := s.entry(s.st.Load())
	if !s.reusable() {
		t.Fatalf("a stream whose only runner is still queued is not reusable: st %#x", s.st.Load())
	}
	s.reuse()
	before := s.st.Load()
	if before/stEpoch != 8 || before&(stEpoch-1) != 0 {
		t.Fatalf("reused st %#x", before)
	}
	if got := en.start(); got != nil {
		t.Fatalf("a stale entry started on the stream's next use: st %#x", s.st.Load())
	}
	if st := s.st.Load(); st != before {
		t.Fatalf("a stale entry changed st: %#x, was %#x", st, before)
	}
	if en.s != nil {
		t.Fatalf("a stale entry kept its stream")
	}
	if got, _ := tk.entries.get(); got != en {
		t.Fatalf("a stale entry was not recycled")
	}
	// Through a worker: the stale entry counts nothing in Stats.
	en = &streamEntry[int, int]{s: s, epoch: 7}
	before0 := p.Stats()
	if err := p.submit(en, false); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { s := p.Stats(); return s.QueueDepth == 0 && s.Submitted == before0.Submitted }) {
		t.Fatalf("stale entry: stats %+v, before %+v", p.Stats(), before0)
	}
	if st := s.st.Load(); st != before {
		t.Fatalf("a stale entry run by a worker changed st: %#x, was %#x", st, before)
	}
}

// TestStreamEntryStartDuringReuse: openStream checks that a retired
// shared stream is reusable (no runner started, its last call claimed,
// every future taken: runners still queued may stay) and then reuses it,
// storing a fresh word. A queued runner that starts between the two (its
// CAS of st, of the epoch reusable saw) is a started runner of the old use
// that reuse then wipes out: it goes on as a runner of the new use, which
// never counted it, and its leave takes a started runner and a runner
// that the new word does not have (the subtraction borrows from the
// busy, started and epoch fields), after which entries of the previous
// epoch match and calls of the new use can be run by a runner nobody
// counts (twice, beside a single runner) or by none (hang).
//
// The real window is the few instructions between reusable's load of st
// and reuse's store, under t.mu; this test takes the same steps in that
// order, as openStream would with a worker's en.start in between.
func TestStreamEntryStartDuringReuse(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	const epoch = 5
	s := retiredShared(tk, epoch)
	en := s.entry(s.st.Load())

	tk.mu.Lock()
	ok := s.reusable()
	started := en.start() // a worker pops the queued runner now
	if ok {
		s.reuse() // as openStream: r.reusable() && r.reuse()
	}
	tk.mu.Unlock()
	if !ok {
		t.Fatalf("a stream whose only runner is still queued is not reusable: st %#x", s.st.Load())
	}
	if started == nil {
		t.Fatalf("the entry did not start in its own use: st %#x", s.st.Load())
	}
	st := s.st.Load()
	if st/stEpoch != epoch || st&stStarted != stStartOne {
		left := leave(st)
		t.Fatalf("a runner started between reusable and reuse, and reuse wiped it out: st %#x (epoch %d, started %d, runners %d); "+
			"its leave would store %#x (epoch %d, started %d, runners %d, busy %d)",
			st, st/stEpoch, st&stStarted/stStartOne, st&stRunners/stRunnerOne,
			left, left/stEpoch, left&stStarted/stStartOne, left&stRunners/stRunnerOne, left&stBusy/stBusyOne)
	}
	// Unchanged: the started runner finds nothing to claim and leaves,
	// and the stream has no runner; then it is reusable.
	s.runShared(p.workersNow()[0], false)
	if st := s.st.Load(); st&stActive != 0 || st/stEpoch != epoch {
		t.Fatalf("after the runner left: st %#x", st)
	}
	if !s.reusable() {
		t.Fatalf("not reusable once its last runner left: st %#x", s.st.Load())
	}
}

// TestStreamEntryEpochWrap: the epoch field of st is 64-43 = 21 bits, so a
// stale entry queued 1<<21 uses ago matches the stream's epoch again and
// starts as a runner of a use that never counted it. Before entries were
// queued for a use, the epoch only kept a caller that read the word in an
// earlier use from CASing it (a few instructions); a queued entry can wait
// behind a worker inside a long call (with NoSteal, for as long as that
// call runs) while the other workers reuse the stream: 1<<21 uses are
// 2^28 calls of one stream, tens of seconds of a busy pipeline.
//
// The entry also names the use by the stream's 64-bit count of reuses,
// which does not wrap.
func TestStreamEntryEpochWrap(t *testing.T) {
	watchdog(t, 60*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	s := retiredShared(tk, 3)
	en := s.entry(s.st.Load())
	for range 1 << 21 {
		s.reuse() // every use ends unrun here; only the epoch matters
	}
	if got := en.start(); got != nil {
		t.Fatalf("an entry queued 1<<21 uses ago started on the current use: st %#x (epoch %d)", s.st.Load(), s.st.Load()/stEpoch)
	}
}

// TestStreamEntryReuseStress: submitters make bursts of whole streams
// (and odd sizes) on pools of several workers and wait for every future at
// once, so the last call of a stream is claimed while the runners it
// spawned are still queued, and the stream is reused right after:
// stale entries start around every reuse. Every call runs once, with its
// own value, nothing hangs, and the accounting comes back.
func TestStreamEntryReuseStress(t *testing.T) {
	watchdog(t, 240*time.Second)
	for _, procs := range []int{1, 2, 4} {
		for _, c := range []shape{
			{"w2", Config{Workers: 2}},
			{"w4", Config{Workers: 4}},
			{"w3-nosteal", Config{Workers: 3, NoSteal: true}},
		} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, c.name), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				p := New(c.cfg)
				defer p.Close()
				const submitters = 4
				per := scale(150000)
				n := submitters * per
				runs := make([]atomic.Int32, n)
				tk := NewTask(p, func(x int) int {
					runs[x].Add(1)
					if x%7 == 0 {
						runtime.Gosched() // a runner inside a call: more runners spawn
					}
					return 2*x + 1
				})
				var bad atomic.Int64
				var first atomic.Value
				var wg sync.WaitGroup
				for g := range submitters {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(g), uint64(procs)))
						ctx := context.Background()
						fs := make([]Future[int], 0, 3*128)
						vs := make([]int, 3*128)
						for x := g * per; x < (g+1)*per; {
							m := 128 * (1 + rng.IntN(3))
							if rng.IntN(4) == 0 {
								m = 1 + rng.IntN(3*128)
							}
							m = min(m, (g+1)*per-x)
							fs = fs[:0]
							for k := range m {
								fs = append(fs, tk.Call(x+k))
							}
							if _, err := WaitAll(ctx, fs, vs[:m]); err != nil {
								bad.Add(1)
								first.CompareAndSwap(nil, err)
							}
							for k := range m {
								if vs[k] != 2*(x+k)+1 {
									bad.Add(1)
									first.CompareAndSwap(nil, fmt.Errorf("call %d: %d", x+k, vs[k]))
								}
							}
							x += m
						}
					}()
				}
				wg.Wait()
				if bad.Load() != 0 {
					t.Fatalf("%d bad results; first %v", bad.Load(), first.Load())
				}
				for x := range runs {
					if k := runs[x].Load(); k != 1 {
						t.Fatalf("call %d ran %d times", x, k)
					}
				}
				checkStreamsSettle(t, tk)
				checkStreamWords(t, tk)
				// Quiet: every stale entry is run (and counts nothing).
				if !eventually(10*time.Second, func() bool {
					s := p.Stats()
					return s.QueueDepth == 0 && s.Submitted == s.Completed && s.Completed == uint64(n)
				}) {
					t.Fatalf("stats %+v, want %d completed, none queued", p.Stats(), n)
				}
			})
		}
	}
}

// checkStreamWords checks every retired and the open stream of tk: a
// stream with no started runner has a sane word (runners within the
// workers, busy and started within runners, head within tail).
func checkStreamWords[In, Out any](t *testing.T, tk *Task[In, Out]) {
	t.Helper()
	tk.mu.Lock()
	defer tk.mu.Unlock()
	var ss []*callStream[In, Out]
	if s := tk.open.Load(); s != nil {
		ss = append(ss, s)
	}
	for range retiredStreams {
		s, err := tk.retired.TryPop()
		if err != nil {
			break
		}
		ss = append(ss, s)
		defer tk.retired.TryPush(s)
	}
	for _, s := range ss {
		st := s.st.Load()
		r, b, sd := st&stRunners/stRunnerOne, st&stBusy/stBusyOne, st&stStarted/stStartOne
		if head(st) > int64(st&stTail) || int64(st&stTail) > s.n || b > sd || sd > r || r > uint64(s.n) ||
			st&stActive == 0 && st&(stShared|stPending|stRunners|stBusy|stStarted) != 0 {
			t.Errorf("stream %p: corrupt st %#x: head %d tail %d runners %d busy %d started %d", s, st, head(st), st&stTail, r, b, sd)
		}
	}
}

// TestStreamEntryShutdownAbandonsQueued: Shutdown's expiry with shared
// runners queued behind blocked workers: the queued entries of a live use
// fail the calls no runner took (abandonShared), stale ones fail nothing;
// every future ends, and Submitted = Completed + Abandoned.
func TestStreamEntryShutdownAbandonsQueued(t *testing.T) {
	watchdog(t, 120*time.Second)
	for round := range scale(40) {
		p := New(Config{Workers: 3, NoSteal: true})
		gate := make(chan struct{})
		var running atomic.Int32
		tk := NewTask(p, func(in *gatedCall) int {
			if in.gate != nil {
				running.Add(1)
				<-in.gate
			}
			return in.id
		})
		// Whole streams first (stale entries of their uses stay queued
		// behind the blocked workers), then gated calls block every
		// worker, then calls nobody runs.
		var fs []Future[int]
		for k := range 2 * 128 {
			fs = append(fs, tk.Call(&gatedCall{id: k}))
		}
		for _, f := range fs {
			if _, err := f.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		fs = fs[:0]
		for k := range 3 {
			fs = append(fs, tk.Call(&gatedCall{gate: gate, id: 1000 + k}))
		}
		if !eventually(10*time.Second, func() bool { return running.Load() >= 2 }) {
			t.Fatalf("round %d: gated calls not running: %+v", round, p.Stats())
		}
		for k := range 50 {
			fs = append(fs, tk.Call(&gatedCall{id: 2000 + k}))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- p.Shutdown(ctx) }()
		var se *ShutdownError
		// Shutdown gives up after ctx; then the gated calls may end.
		if !eventually(10*time.Second, func() bool { return p.Stats().Abandoned > 0 || ctx.Err() != nil }) {
			t.Fatalf("round %d: no expiry", round)
		}
		<-ctx.Done()
		if !eventually(10*time.Second, func() bool { return p.state.Load() == stateAbandon }) {
			t.Fatalf("round %d: pool not abandoning", round)
		}
		close(gate)
		err := <-done
		cancel()
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("round %d: Shutdown: %v", round, err)
		}
		wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
		for k, f := range fs {
			if _, err := f.Wait(wctx); err != nil && !errors.Is(err, ErrClosed) {
				wcancel()
				t.Fatalf("round %d: future %d: %v", round, k, err)
			}
		}
		wcancel()
		// The runners finish after their last publish: poll.
		if !eventually(10*time.Second, func() bool {
			s := p.Stats()
			return s.QueueDepth == 0 && s.Submitted == s.Completed+s.Abandoned+s.Skipped
		}) {
			t.Fatalf("round %d: stats %+v", round, p.Stats())
		}
	}
}

// TestStreamEntryResizeFlipQueued: entries queued behind a blocked worker
// while Resize flips the pool between one worker and several: streams
// reused meanwhile go single (their stale shared entries must do
// nothing), and every call runs once.
func TestStreamEntryResizeFlipQueued(t *testing.T) {
	watchdog(t, 180*time.Second)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := New(Config{Workers: 3})
			defer p.Close()
			const submitters = 3
			per := scale(20000)
			r := newStressTask(p, submitters*per)
			var stop atomic.Bool
			var flips sync.WaitGroup
			flips.Add(1)
			go func() {
				defer flips.Done()
				for i := 0; !stop.Load(); i++ {
					p.Resize(1 + 2*(i%2))
					runtime.Gosched()
				}
			}()
			var wg sync.WaitGroup
			for g := range submitters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.drive(rand.New(rand.NewPCG(uint64(g), uint64(procs))), g*per, (g+1)*per)
				}()
			}
			wg.Wait()
			stop.Store(true)
			flips.Wait()
			checkStreamsSettle(t, r.tk)
			checkStreamWords(t, r.tk)
			p.Close()
			r.verify(t, p, submitters*per)
		})
	}
}
