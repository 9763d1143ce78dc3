package knit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/emul"
	"github.com/knit-go/knit/internal/testutil"
)

// parkWatchdog fails a blocking test loudly instead of hanging CI: if stop
// is not called within d, it panics with every goroutine's stack and
// state(), which names the counters the test was waiting on.
func parkWatchdog(t testing.TB, d time.Duration, state func() string) (stop func()) {
	return testutil.Watchdog(t, d, state)
}

// eventState describes e's internals for a watchdog report.
func eventState(e *Event) string {
	return fmt.Sprintf("{seq %d waiters %d fsleep %d qsleep %d queued %d solo %#x wakes %d}",
		e.seq.Load(), e.Waiters(), e.fsleep.Load(), e.qsleep.Load(), queuedOn(e), e.solo.v.Load(), e.wakes.Load())
}

// queuedOn is how many runtime sleepers are asleep on e: the nodes in
// its wait list, and the solo sleeper once it has parked (not one that
// has claimed the word and may be about to).
func queuedOn(e *Event) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.q.len()
	if e.solo.v.Load() > wordAwake {
		n++
	}
	return n
}

// parkWatchdogTime is generous: a healthy run of any test here takes a
// few seconds even under -race on a loaded 2-core VM or under qemu.
const parkWatchdogTime = 90 * time.Second

// parkScale divides iteration counts under -race and -short.
func parkScale(n int) int {
	switch {
	case raceEnabled:
		return max(n/20, 1)
	case testing.Short():
		return max(n/5, 1)
	}
	return n
}

// checkEventIdle: after every waiter has returned, the Event must be back
// at rest: no registration, no sleeper count, an empty runtime queue.
func checkEventIdle(t testing.TB, e *Event) {
	t.Helper()
	if e.Waiters() != 0 || e.sleepers() != 0 || queuedOn(e) != 0 || e.solo.v.Load() != wordFree {
		t.Errorf("Event not at rest: %s", eventState(e))
	}
}

// eventWait is the waiter's protocol the stress tests run: Event.WaitFor.
// cond may have a side effect (take an item): WaitFor returns as soon as
// cond reports true, without calling it again.
func eventWait(ctx context.Context, e *Event, p Park, cond func() bool) error {
	return e.WaitFor(ctx, cond, p)
}

// parkConfigs are the Park settings every stress test runs: each
// backend, parking at once and after a short spin, and the zero Park.
var parkConfigs = []Park{
	{Spin: NoSpin, Backend: BackendFutex},
	{Spin: NoSpin, Backend: BackendRuntime},
	{Spin: 5 * time.Microsecond, Backend: BackendFutex},
	{Spin: 5 * time.Microsecond, Backend: BackendRuntime},
	{},
}

func (p Park) String() string {
	switch {
	case p.Spin < 0:
		return p.Backend.String() + "-nospin"
	case p.Spin == 0:
		return p.Backend.String() + "-defaultspin"
	}
	return fmt.Sprintf("%s-spin%v", p.Backend, p.Spin)
}

func TestBackendString(t *testing.T) {
	for b, want := range map[Backend]string{BackendAuto: "auto", BackendFutex: "futex", BackendRuntime: "runtime", 7: "Backend(7)"} {
		if got := b.String(); got != want {
			t.Errorf("Backend(%d).String() = %q, want %q", uint8(b), got, want)
		}
	}
	if r := BackendAuto.resolve(); r != BackendFutex && r != BackendRuntime {
		t.Errorf("BackendAuto resolves to %v", r)
	}
}

// TestEventNotifyNoWaiterNoSyscall is the doorbell's reason to exist: with
// nobody registered, Notify does not touch the word, does no wake (the
// counter is incremented beside every futex wake syscall and every
// goroutine readied), and does not allocate.
func TestEventNotifyNoWaiterNoSyscall(t *testing.T) {
	var e Event
	seq := e.seq.Load()
	const n = 1_000_000
	for range n {
		e.Notify(1)
	}
	for range n / 10 {
		e.NotifyAll()
	}
	// Registered and cancelled: back to no waiter.
	e.Cancel(e.Prepare())
	for range n / 10 {
		e.Notify(1)
	}
	if w := e.wakes.Load(); w != 0 {
		t.Errorf("Notify with no waiter issued %d wakes", w)
	}
	if s := e.seq.Load(); s != seq {
		t.Errorf("Notify with no waiter wrote the event word: %d -> %d", seq, s)
	}
	if a := testing.AllocsPerRun(1000, func() { e.Notify(1) }); a != 0 {
		t.Errorf("Notify with no waiter allocates %v times", a)
	}
	checkEventIdle(t, &e)
}

// TestEventEmulationDetect: the barrier for emulated arm64 (see
// internal/emul) is never switched on natively on x86, where it is not
// needed, and Notify's fast path does not wait for the detection there.
func TestEventEmulationDetect(t *testing.T) {
	broken := emul.StoreLoadBroken()
	t.Logf("emulated store-load reordering: %v", broken)
	if (runtime.GOARCH == "amd64" || runtime.GOARCH == "386") && (broken || !emul.Native()) {
		t.Error("emulation barrier on for a native x86 process")
	}
}

// TestEventNotifyRegisteredNotSleeping: a registered waiter that has not
// gone to sleep (it is re-checking or spinning) is told by the change of
// the word alone: still no wake, and its Wait returns at once.
func TestEventNotifyRegisteredNotSleeping(t *testing.T) {
	for _, p := range parkConfigs {
		t.Run(p.String(), func(t *testing.T) {
			var e Event
			tk := e.Prepare()
			e.Notify(1)
			if w := e.wakes.Load(); w != 0 {
				t.Errorf("Notify with a registered, non-sleeping waiter issued %d wakes", w)
			}
			if e.seq.Load() == uint32(tk) {
				t.Fatal("Notify with a registered waiter did not move the word")
			}
			stop := parkWatchdog(t, parkWatchdogTime, nil)
			if err := e.Wait(context.Background(), tk, p); err != nil {
				t.Errorf("Wait after Notify = %v", err)
			}
			stop()
			checkEventIdle(t, &e)
		})
	}
}

// TestEventWakesSleeper: a waiter that is asleep (counted as a sleeper)
// is woken by Notify(1), with exactly one wake issued.
func TestEventWakesSleeper(t *testing.T) {
	for _, p := range parkConfigs {
		t.Run(p.String(), func(t *testing.T) {
			var e Event
			var flag atomic.Bool
			done := make(chan error, 1)
			go func() {
				done <- eventWait(context.Background(), &e, p, flag.Load)
			}()
			waitSleepers(t, &e, 1)
			flag.Store(true)
			e.Notify(1)
			stop := parkWatchdog(t, parkWatchdogTime, nil)
			if err := <-done; err != nil {
				t.Errorf("Wait = %v", err)
			}
			stop()
			if w := e.wakes.Load(); w != 1 {
				t.Errorf("one Notify of one sleeper issued %d wakes, want 1", w)
			}
			checkEventIdle(t, &e)
		})
	}
}

// waitSleepers polls until n waiters are past their spin phase.
func waitSleepers(t testing.TB, e *Event, n int32) {
	t.Helper()
	stop := parkWatchdog(t, parkWatchdogTime, func() string {
		return fmt.Sprintf("waiting for %d sleepers: %s", n, eventState(e))
	})
	defer stop()
	for e.sleepers() < n {
		time.Sleep(100 * time.Microsecond)
	}
	// Counted is not yet asleep. Wait until they are, parked or in the
	// futex call, so that the wake path is the one exercised.
	for asleepOn(e) < int(n) {
		time.Sleep(100 * time.Microsecond)
	}
}

// asleepOn counts the goroutines asleep in e's sleep phases: parked by
// the scheduler in sleepQueue, or in the futex system call in
// sleepFutex.
func asleepOn(e *Event) int {
	return testutil.Blocked(fmt.Sprintf("(*Event).sleepQueue(%p", e), fmt.Sprintf("(*Event).sleepFutex(%p", e))
}

// TestEventCtx: a sleeping waiter returns ctx.Err() promptly on
// cancellation and on a deadline, on every backend, and leaves the Event
// at rest; a done ctx returns at once.
func TestEventCtx(t *testing.T) {
	for _, p := range parkConfigs {
		t.Run(p.String(), func(t *testing.T) {
			var e Event
			never := func() bool { return false }
			stop := parkWatchdog(t, parkWatchdogTime, nil)
			defer stop()

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- eventWait(ctx, &e, p, never) }()
			waitSleepers(t, &e, 1)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled Wait = %v, want context.Canceled", err)
			}
			checkEventIdle(t, &e)

			start := time.Now() // before the deadline is set, which counts from WithTimeout
			dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			defer dcancel()
			if err := eventWait(dctx, &e, p, never); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Wait past deadline = %v, want context.DeadlineExceeded", err)
			}
			if el := time.Since(start); el < 5*time.Millisecond {
				t.Errorf("Wait returned %v before its deadline", el)
			}
			checkEventIdle(t, &e)

			// Already done: returns at once, without sleeping.
			tk := e.Prepare()
			if err := e.Wait(ctx, tk, p); !errors.Is(err, context.Canceled) {
				t.Errorf("Wait on a done ctx = %v", err)
			}
			if w := e.wakes.Load(); w > 2 {
				t.Errorf("%d wakes for two cancellations", w)
			}
			checkEventIdle(t, &e)
		})
	}
}

// TestEventNotifyBeatsCancel: a Notify that comes before the cancellation
// is delivered: Wait returns nil, not ctx.Err(). If a waiter that was
// dequeued by Notify(1) returned the error, the wake would be lost to the
// sleepers behind it.
func TestEventNotifyBeatsCancel(t *testing.T) {
	rounds := parkScale(300)
	for _, p := range parkConfigs {
		t.Run(p.String(), func(t *testing.T) {
			var e Event
			stop := parkWatchdog(t, parkWatchdogTime, nil)
			defer stop()
			for r := 0; r < rounds; {
				ctx, cancel := context.WithCancel(context.Background())
				tk := e.Prepare()
				done := make(chan error, 1)
				go func() { done <- e.Wait(ctx, tk, p) }()
				// Wait until it sleeps, or returns before sleeping (a
				// spurious nil, allowed: then the round does not count).
				asleep := false
				for len(done) == 0 && !asleep {
					asleep = e.sleepers() > 0
					runtime.Gosched()
				}
				e.Notify(1)
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Notify then cancel: Wait = %v, want nil", err)
				}
				if asleep {
					r++
				}
			}
			checkEventIdle(t, &e)
		})
	}
}

// TestEventCancelThenNotify: the first sleeper's ctx is cancelled and at
// once an item is published with Notify(1), which (FIFO) dequeues that
// same sleeper before it gets back to the queue lock. The sleeper must
// report the wake (nil; its loop then takes the item), not the
// cancellation: a caller that gets ctx.Err() leaves without re-checking,
// and the second sleeper, which no Notify reached, would sleep on beside
// the item.
func TestEventCancelThenNotify(t *testing.T) {
	rounds := parkScale(150)
	for _, b := range []Backend{BackendRuntime, BackendFutex} {
		t.Run(b.String(), func(t *testing.T) {
			p := Park{Spin: NoSpin, Backend: b}
			var e Event
			var item, quit atomic.Bool
			var takenA, takenB, cancelledA int
			for range rounds {
				item.Store(false)
				quit.Store(false)
				ctx, cancel := context.WithCancel(context.Background())
				cond := func() bool { return item.Load() || quit.Load() }
				take := func() bool { return item.CompareAndSwap(true, false) }
				resA := make(chan int, 1) // 1 took the item, 0 left without, -1 cancelled
				resB := make(chan bool, 1)
				go func() {
					if err := eventWait(ctx, &e, p, cond); err != nil {
						resA <- -1
						return
					}
					if take() {
						resA <- 1
					} else {
						resA <- 0
					}
				}()
				waitSleepers(t, &e, 1)
				go func() {
					eventWait(context.Background(), &e, p, cond)
					resB <- take()
				}()
				waitSleepers(t, &e, 2)
				cancel()
				item.Store(true)
				e.Notify(1)
				a := <-resA
				if a != 1 {
					// A left without the item: B must have it, woken by
					// the one Notify.
					deadline := time.Now().Add(10 * time.Second)
					for item.Load() && time.Now().Before(deadline) {
						time.Sleep(100 * time.Microsecond)
					}
					if item.Load() {
						t.Fatalf("lost wakeup: the first sleeper left (%d) and the item sat beside a sleeping second one for 10 s", a)
					}
				}
				quit.Store(true)
				e.NotifyAll()
				gotB := <-resB
				switch {
				case a == 1 && gotB, a != 1 && !gotB:
					t.Fatalf("item taken by A: %v, by B: %v", a == 1, gotB)
				case a == 1:
					takenA++
				default:
					takenB++
					if a == -1 {
						cancelledA++
					}
				}
				cancel()
			}
			t.Logf("item taken by the cancelled sleeper %d times, by the other %d (first sleeper cancelled %d)", takenA, takenB, cancelledA)
			checkEventIdle(t, &e)
		})
	}
}

// TestEventRaceWindows reruns the ping-pong, the one-item test and the
// handoff with the eventGap hook set: every step of the protocol where a
// count and the check it guards could be split by another goroutine now
// reschedules or pauses at random, so an ordering mistake there (a
// sleeper counted after it queued, a notifier reading the count before
// bumping the word) shows up as a lost wakeup within a few thousand
// rounds instead of once in a blue moon.
func TestEventRaceWindows(t *testing.T) {
	defer setHooks(func(h *testHooks) {
		h.eventGap = func() {
			switch r := rand.IntN(8); {
			case r == 0:
				runtime.Gosched()
			case r < 4:
				Pause(rand.IntN(128))
			}
		}
	})()
	t.Run("pingpong", TestEventPingPong)
	t.Run("oneitem", TestEventOneItemNoLostWakeup)
	t.Run("cancelthennotify", TestEventCancelThenNotify)
}

// TestEventVariants reruns the stress tests on the runtime backend's
// other ways to sleep and wake (eventVariants): the channel wait list
// alone, as a knit_nolinkname build waits, the semaphore without the
// deferred handoff, and the semaphore's own handoff. The default (the
// semaphore, with the deferred handoff, and the wait list with it for
// a cancellable ctx) runs in every other test.
func TestEventVariants(t *testing.T) {
	for _, v := range eventVariants {
		t.Run(v.name, func(t *testing.T) {
			defer v.set()()
			t.Run("racewindows", TestEventRaceWindows)
			t.Run("cancelrace", TestEventCancelRace)
			t.Run("manywaiters", TestEventManyWaiters)
			t.Run("handoff", TestEventHandoffStress)
		})
	}
}

// TestEventCancelTwicePanics: a ticket used twice (Cancel twice, Cancel
// after Wait, Wait after Cancel) would make the count of waiters
// negative; the second use panics at once, as sync.WaitGroup does,
// instead of leaving a count that makes the next Notify skip a sleeper.
// The panic leaves the Event as it was: after a recover, correct use of
// the same Event still works, with the count balanced.
func TestEventCancelTwicePanics(t *testing.T) {
	bg := context.Background()
	mustPanic := func(name string, misuse func(e *Event)) {
		t.Helper()
		var e Event
		func() {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, "knit: Event.") || !strings.Contains(msg, "ticket already used") {
					t.Errorf("%s: panic %v, want one naming Event and the reused ticket", name, r)
				}
			}()
			misuse(&e)
			t.Errorf("%s: no panic", name)
		}()
		if w := e.Waiters(); w != 0 {
			t.Errorf("%s: %d waiters after the recovered panic, want 0", name, w)
		}
		// Correct use after the recover: a Cancel, then a Wait that a
		// Notify from another goroutine ends.
		e.Cancel(e.Prepare())
		tk := e.Prepare()
		go func() {
			for e.Waiters() == 0 {
				runtime.Gosched()
			}
			e.Notify(1)
		}()
		if err := e.Wait(bg, tk, Park{Spin: NoSpin}); err != nil {
			t.Errorf("%s: Wait after the recover: %v", name, err)
		}
		if w := e.Waiters(); w != 0 {
			t.Errorf("%s: %d waiters after correct use, want 0", name, w)
		}
	}
	mustPanic("Cancel twice", func(e *Event) {
		tk := e.Prepare()
		e.Cancel(tk)
		e.Cancel(tk)
	})
	mustPanic("Cancel after Wait", func(e *Event) {
		tk := e.Prepare()
		e.Notify(1) // moves the word: Wait returns at once
		if err := e.Wait(bg, tk, Park{Spin: NoSpin}); err != nil {
			t.Fatal(err)
		}
		e.Cancel(tk)
	})
	mustPanic("Wait after Cancel", func(e *Event) {
		tk := e.Prepare()
		e.Cancel(tk)
		e.Notify(1)
		e.Wait(bg, tk, Park{Spin: NoSpin})
	})
	mustPanic("Cancel never prepared", func(e *Event) { e.Cancel(0) })
	// Correct use next to the misuse still balances: the panic is at
	// the misuse, not in a correct waiter later.
	var e Event
	a, b := e.Prepare(), e.Prepare()
	e.Cancel(a)
	e.Cancel(b)
	if w := e.Waiters(); w != 0 {
		t.Errorf("two Prepares, two Cancels: %d waiters", w)
	}
}

// TestParkSpin: the zero Park spins DefaultSpin with four Ps or more
// on a machine with four CPUs or more, and not at all below; NoSpin (any
// negative budget) never; a positive budget is itself.
func TestParkSpin(t *testing.T) {
	if got := (Park{Spin: NoSpin}).spin(); got != 0 {
		t.Errorf("NoSpin spins %v", got)
	}
	if got := (Park{Spin: -time.Hour}).spin(); got != 0 {
		t.Errorf("Spin -1h spins %v", got)
	}
	if got := (Park{Spin: 3 * time.Microsecond}).spin(); got != 3*time.Microsecond {
		t.Errorf("Spin 3µs spins %v", got)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if got := (Park{}).spin(); got != 0 {
		t.Errorf("zero Park at GOMAXPROCS=1 spins %v", got)
	}
	runtime.GOMAXPROCS(4)
	want := time.Duration(0)
	if runtime.NumCPU() >= 4 {
		want = DefaultSpin
	}
	if got := (Park{}).spin(); got != want {
		t.Errorf("zero Park at GOMAXPROCS=4 on %d CPUs spins %v, want %v", runtime.NumCPU(), got, want)
	}
}

// TestEventHandoffStress passes every value of a sequence through a
// 64-slot ring guarded by two Events, one producer and one consumer, in
// order and exactly once: the consumer sleeps when it catches up, the
// producer when it gets 64 ahead, so both Events see the fast path (no
// waiter) millions of times and the slow path often.
func TestEventHandoffStress(t *testing.T) {
	total := parkScale(3_000_000)
	per := total / len(parkConfigs) / 2
	for _, p := range parkConfigs {
		for _, locked := range []bool{false, true} {
			if locked && p.Backend == BackendAuto {
				continue
			}
			name := p.String()
			if locked {
				name += "-locked"
			}
			t.Run(name, func(t *testing.T) {
				handoff(t, p, locked, per)
			})
		}
	}
}

func handoff(t *testing.T, p Park, locked bool, n int) {
	const size = 64
	var (
		buf                [size]uint64
		head, tail         atomic.Uint64 // consumed, published
		notEmpty, notFull  Event
		sum                uint64
		prodDone, consDone = make(chan struct{}), make(chan struct{})
		bad                atomic.Value
	)
	stop := parkWatchdog(t, parkWatchdogTime, func() string {
		return fmt.Sprintf("published %d consumed %d; notEmpty waiters %d, notFull waiters %d",
			tail.Load(), head.Load(), notEmpty.Waiters(), notFull.Waiters())
	})
	defer stop()
	bg := context.Background()
	go func() {
		defer close(prodDone)
		if locked {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for i := range uint64(n) {
			if err := eventWait(bg, &notFull, p, func() bool { return i-head.Load() < size }); err != nil {
				bad.Store(err)
				return
			}
			buf[i%size] = i + 1
			tail.Store(i + 1)
			notEmpty.Notify(1)
		}
	}()
	go func() {
		defer close(consDone)
		if locked {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for i := range uint64(n) {
			if err := eventWait(bg, &notEmpty, p, func() bool { return tail.Load() > i }); err != nil {
				bad.Store(err)
				return
			}
			v := buf[i%size]
			if v != i+1 {
				bad.Store(fmt.Errorf("slot %d holds %d, want %d", i, v, i+1))
				return
			}
			sum += v
			head.Store(i + 1)
			notFull.Notify(1)
		}
	}()
	<-prodDone
	<-consDone
	if err := bad.Load(); err != nil {
		t.Fatal(err)
	}
	if want := uint64(n) * uint64(n+1) / 2; sum != want {
		t.Fatalf("sum of consumed values %d, want %d", sum, want)
	}
	checkEventIdle(t, &notEmpty)
	checkEventIdle(t, &notFull)
}

// TestEventPingPong parks on every turn: two goroutines pass a token back
// and forth, each sleeping until the other's Notify. A single lost wakeup
// stops both, and the watchdog reports it.
func TestEventPingPong(t *testing.T) {
	rounds := parkScale(5000)
	for _, p := range parkConfigs {
		for _, locked := range []bool{false, true} {
			name := p.String()
			if locked {
				name += "-locked"
			}
			t.Run(name, func(t *testing.T) {
				var turn atomic.Uint64
				var ping, pong Event
				stop := parkWatchdog(t, parkWatchdogTime, func() string {
					return fmt.Sprintf("turn %d; ping %s, pong %s", turn.Load(), eventState(&ping), eventState(&pong))
				})
				defer stop()
				bg := context.Background()
				done := make(chan struct{})
				go func() {
					defer close(done)
					if locked {
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
					}
					for i := range uint64(rounds) {
						eventWait(bg, &pong, p, func() bool { return turn.Load() == 2*i+1 })
						turn.Store(2*i + 2)
						ping.Notify(1)
					}
				}()
				if locked {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				for i := range uint64(rounds) {
					turn.Store(2*i + 1)
					pong.Notify(1)
					eventWait(bg, &ping, p, func() bool { return turn.Load() == 2*i+2 })
				}
				<-done
				if got := turn.Load(); got != 2*uint64(rounds) {
					t.Fatalf("turn = %d, want %d", got, 2*rounds)
				}
				checkEventIdle(t, &ping)
				checkEventIdle(t, &pong)
			})
		}
	}
}

// TestEventManyWaiters: 8 consumers (each with its own Park, so both
// backends and spinning and sleeping waiters share the Event) take items
// from a queue that 2 producers fill, Notify(1) per item; then Close
// (flag, NotifyAll). Every item is taken exactly once, and every consumer
// sees the close.
func TestEventManyWaiters(t *testing.T) {
	const consumers, producers = 8, 2
	items := parkScale(200_000)
	for _, mode := range []string{"mixed", "futex", "runtime"} {
		t.Run(mode, func(t *testing.T) {
			var (
				e      Event
				queue  = make(chan int, items)
				closed atomic.Bool
				seen   = make([]atomic.Int32, items)
				taken  atomic.Int64
				wg     sync.WaitGroup
			)
			stop := parkWatchdog(t, parkWatchdogTime, func() string {
				return fmt.Sprintf("taken %d of %d, closed %v, waiters %d", taken.Load(), items, closed.Load(), e.Waiters())
			})
			defer stop()
			for c := range consumers {
				p := parkConfigs[c%len(parkConfigs)]
				switch mode {
				case "futex":
					p.Backend = BackendFutex
				case "runtime":
					p.Backend = BackendRuntime
				}
				wg.Go(func() {
					var v int
					have := false
					cond := func() bool {
						select {
						case v = <-queue:
							have = true
							return true
						default:
							return closed.Load()
						}
					}
					for {
						have = false
						if err := eventWait(context.Background(), &e, p, cond); err != nil {
							t.Error(err)
							return
						}
						if !have {
							if len(queue) == 0 {
								return // closed and drained
							}
							continue
						}
						seen[v].Add(1)
						taken.Add(1)
					}
				})
			}
			var pw sync.WaitGroup
			for pr := range producers {
				pw.Go(func() {
					for i := pr; i < items; i += producers {
						queue <- i
						e.Notify(1)
					}
				})
			}
			pw.Wait()
			closed.Store(true)
			e.NotifyAll()
			wg.Wait()
			for i := range seen {
				if n := seen[i].Load(); n != 1 {
					t.Fatalf("item %d taken %d times", i, n)
				}
			}
			checkEventIdle(t, &e)
		})
	}
}

// TestEventOneItemNoLostWakeup publishes one item at a time and waits for
// it to be taken before the next, with no further Notify to cover for a
// lost one: 8 consumers with mixed backends and spin budgets, some with
// contexts that expire at random moments (and go round again), some
// cancelling because they found the item on the re-check. If Notify(1)'s
// wake went to a spinner or a waiter that left, and the sleepers slept on,
// the item would sit there and the watchdog would fire.
func TestEventOneItemNoLostWakeup(t *testing.T) {
	const consumers = 8
	rounds := parkScale(20_000)
	var (
		e       Event
		item    atomic.Int64 // 1: an item is waiting
		taken   Event        // consumers ring the publisher here
		takenN  atomic.Int64
		quit    atomic.Bool
		wg      sync.WaitGroup
		expired atomic.Int64
	)
	stop := parkWatchdog(t, parkWatchdogTime, func() string {
		return fmt.Sprintf("taken %d of %d, item %d, event %s, ctx expiries %d",
			takenN.Load(), rounds, item.Load(), eventState(&e), expired.Load())
	})
	defer stop()
	for c := range consumers {
		p := Park{Spin: NoSpin, Backend: []Backend{BackendFutex, BackendRuntime}[c%2]}
		if c%4 >= 2 {
			p.Spin = 20 * time.Microsecond
		}
		withDeadline := c >= consumers/2
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			cond := func() bool { return item.Load() == 1 || quit.Load() }
			for !quit.Load() {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if withDeadline {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(50))*time.Microsecond)
				}
				err := eventWait(ctx, &e, p, cond)
				cancel()
				if err != nil {
					expired.Add(1)
					continue
				}
				if item.CompareAndSwap(1, 0) {
					takenN.Add(1)
					taken.Notify(1)
				}
			}
		})
	}
	bg := context.Background()
	for i := range int64(rounds) {
		item.Store(1)
		e.Notify(1)
		eventWait(bg, &taken, Park{Spin: 5 * time.Microsecond}, func() bool { return takenN.Load() == i+1 })
	}
	quit.Store(true)
	e.NotifyAll()
	wg.Wait()
	if n := takenN.Load(); n != int64(rounds) {
		t.Fatalf("taken %d items, want %d", n, rounds)
	}
	t.Logf("%d rounds, %d context expiries, %d wakes", rounds, expired.Load(), e.wakes.Load())
	checkEventIdle(t, &e)
	checkEventIdle(t, &taken)
}

// TestEventSharedConditions: one Event rung for several conditions, one
// waiter each, as a pool rings one event for every result of a batch.
// NotifyAll for one condition wakes the others too; they find nothing
// and go back to sleep at once. That new sleep must not take the wake
// meant for the waiter whose condition came true, which has been
// readied but has not run yet: wakes are addressed, not counted.
func TestEventSharedConditions(t *testing.T) {
	const waiters = 4
	rounds := parkScale(20_000)
	for _, p := range parkConfigs {
		t.Run(p.String(), func(t *testing.T) {
			var (
				e     Event
				flags [waiters]atomic.Int64 // flags[i]: the last round addressed to waiter i
				acks  [waiters]atomic.Int64 // acks[i]: the last round waiter i saw
				acked Event
				wg    sync.WaitGroup
			)
			round := atomic.Int64{}
			stop := parkWatchdog(t, parkWatchdogTime, func() string {
				r := round.Load()
				i := r % waiters
				return fmt.Sprintf("round %d for waiter %d: flag %d ack %d, event %s",
					r, i, flags[i].Load(), acks[i].Load(), eventState(&e))
			})
			defer stop()
			bg := context.Background()
			for i := range waiters {
				wg.Go(func() {
					for want := int64(i); want < int64(rounds); want += waiters {
						eventWait(bg, &e, p, func() bool { return flags[i].Load() >= want })
						acks[i].Store(want)
						acked.NotifyAll()
					}
				})
			}
			for r := range int64(rounds) {
				round.Store(r)
				i := r % waiters
				flags[i].Store(r)
				e.NotifyAll()
				eventWait(bg, &acked, Park{Spin: NoSpin}, func() bool { return acks[i].Load() >= r })
			}
			wg.Wait()
			checkEventIdle(t, &e)
			checkEventIdle(t, &acked)
		})
	}
}

// TestEventCancelRace: each waiter waits for the flag to change from what
// it last saw, so it finds the change on the re-check (and Cancels) or
// sleeps, at random, racing a notifier that never stops and a canceller
// that cancels the contexts half of them wait with; the registration and
// sleep counts always come back to zero.
func TestEventCancelRace(t *testing.T) {
	iters := parkScale(10_000)
	const waiters = 4
	var (
		e         Event
		flag      atomic.Uint32
		finished  atomic.Int32
		cur       atomic.Pointer[context.Context]
		wg        sync.WaitGroup
		cancelled atomic.Int64
		cancels   atomic.Int64
	)
	stop := parkWatchdog(t, parkWatchdogTime, func() string {
		return fmt.Sprintf("%d of %d waiters finished, waiters %d", finished.Load(), waiters, e.Waiters())
	})
	defer stop()
	bg := context.Background()
	cur.Store(&bg)
	for w := range waiters {
		wg.Go(func() {
			defer finished.Add(1)
			p := parkConfigs[w%len(parkConfigs)]
			seen := flag.Load()
			for range iters {
				ctx := context.Background()
				if w%2 == 1 {
					ctx = *cur.Load()
				}
				for flag.Load() == seen {
					Pause(8 * w) // widen the window for a change between the check and Prepare
					tk := e.Prepare()
					if flag.Load() != seen {
						e.Cancel(tk)
						cancels.Add(1)
						break
					}
					if e.Wait(ctx, tk, p) != nil {
						cancelled.Add(1)
						break
					}
				}
				seen = flag.Load()
			}
		})
	}
	wg.Go(func() { // canceller: a fresh context every few notifications
		for finished.Load() < waiters {
			ctx, cancel := context.WithCancel(context.Background())
			cur.Store(&ctx)
			for range 8 {
				runtime.Gosched()
			}
			cancel()
		}
	})
	wg.Go(func() { // notifier: flips the condition, with gaps for waiters to sleep in
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; finished.Load() < waiters; i++ {
			flag.Add(1)
			e.Notify(1)
			Pause(rng.IntN(256))
			if i%64 == 0 {
				runtime.Gosched()
			}
		}
	})
	wg.Wait()
	t.Logf("%d notifications, %d Cancels after the re-check, %d waits ended by cancellation, %d wakes",
		flag.Load(), cancels.Load(), cancelled.Load(), e.wakes.Load())
	checkEventIdle(t, &e)
}

// TestEventGOMAXPROCS1: the futex backend blocks the OS thread in a real
// syscall (Syscall6, not RawSyscall), so even with one P and unlocked
// goroutines the scheduler gets the P back and the partner runs.
func TestEventGOMAXPROCS1(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, p := range []Park{{Spin: NoSpin, Backend: BackendFutex}, {Spin: NoSpin, Backend: BackendRuntime}} {
		t.Run(p.String(), func(t *testing.T) { handoff(t, p, false, parkScale(2000)) })
	}
}

// parkAllocsPerRun is testing.AllocsPerRun without its GOMAXPROCS(1),
// which would make a futex sleeper hold the only P: mallocs of the whole
// process (both sides of a ping-pong) per call of f.
func parkAllocsPerRun(runs int, f func()) float64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / float64(runs)
}

// TestEventWaitNoAlloc: a parked round trip through Wait with
// context.Background allocates nothing in the steady state, on either
// backend.
func TestEventWaitNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	// A ctx that can be cancelled (and is not) takes the runtime
	// backend's wait list, which must not allocate either.
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		p   Park
		ctx context.Context
	}{
		{Park{Spin: NoSpin, Backend: BackendFutex}, context.Background()},
		{Park{Spin: NoSpin, Backend: BackendRuntime}, context.Background()},
		{Park{Spin: NoSpin, Backend: BackendRuntime}, cctx},
		{Park{Spin: 5 * time.Microsecond}, context.Background()},
	} {
		p, bg := c.p, c.ctx
		name := p.String()
		if bg.Done() != nil {
			name += "-cancellable"
		}
		t.Run(name, func(t *testing.T) {
			var turn atomic.Uint64
			var ping, pong Event
			quit := make(chan struct{})
			go func() {
				for i := uint64(0); ; i++ {
					eventWait(bg, &pong, p, func() bool { return turn.Load() >= 2*i+1 })
					if turn.Load() == 1<<62 {
						close(quit)
						return
					}
					turn.Store(2*i + 2)
					ping.Notify(1)
				}
			}()
			i := uint64(0)
			round := func() {
				turn.Store(2*i + 1)
				pong.Notify(1)
				eventWait(bg, &ping, p, func() bool { return turn.Load() == 2*i+2 })
				i++
			}
			// Steady state: the runtime's sudog caches (per P, filled
			// from each other only when one overflows) and the wait
			// list's node pool grow to fit before the allocations stop,
			// and with a spin few round trips sleep, so the warm-up can
			// take several thousand. A real per-wait allocation never
			// stops. A stray allocation by the runtime or the test
			// framework (a timer, a GC worker) is not ours: allow one
			// in 100.
			var a float64
			for try := 0; try < 5; try++ {
				if a = parkAllocsPerRun(2000, round); a <= 0.01 {
					break
				}
			}
			if a > 0.01 {
				t.Errorf("%v allocations per parked round trip", a)
			}
			turn.Store(1 << 62)
			pong.Notify(1)
			<-quit
		})
	}
}

// TestEventWaitFor: WaitFor returns once its condition holds, whether it
// held before the call, came true while it slept, or came true between
// the Prepare and the re-check; it returns ctx.Err() when ctx ends first,
// and at once for a ctx already done; it leaves the Event at rest.
func TestEventWaitFor(t *testing.T) {
	defer parkWatchdog(t, parkWatchdogTime, nil)()
	ctx := context.Background()
	var e Event
	var flag atomic.Bool
	flag.Store(true)
	if err := e.WaitFor(ctx, flag.Load, Park{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []Backend{BackendRuntime, BackendFutex} {
		for range parkScale(2000) {
			flag.Store(false)
			go func() {
				flag.Store(true)
				e.Notify(1)
			}()
			if err := e.WaitFor(ctx, flag.Load, Park{Spin: NoSpin, Backend: b}); err != nil || !flag.Load() {
				t.Fatalf("WaitFor = %v with the flag %v", err, flag.Load())
			}
		}
	}
	flag.Store(false)
	dctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if err := e.WaitFor(dctx, flag.Load, Park{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFor past its deadline = %v", err)
	}
	flag.Store(true)
	if err := e.WaitFor(dctx, flag.Load, Park{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFor with a done ctx = %v, want its error even with the condition true", err)
	}
	checkEventIdle(t, &e)
}

// TestEventSleeperInDump: a runtime sleeper with a ctx that cannot be
// cancelled, parked on its park word, shows in a goroutine dump as the
// docs/parking-and-spin.md says: "[waiting]", with Event.Wait on its stack.
func TestEventSleeperInDump(t *testing.T) {
	if !parkLinked() {
		t.Skip("sleepers park on channels in this build")
	}
	var e Event
	var ready atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.WaitFor(context.Background(), ready.Load, Park{Spin: NoSpin})
	}()
	waitQueued(t, &e, 1)
	buf := make([]byte, 1<<20)
	dump := string(buf[:runtime.Stack(buf, true)])
	ready.Store(true)
	e.Notify(1)
	<-done
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "(*Event).Wait") {
			if !strings.Contains(g, "[waiting]") {
				t.Fatalf("sleeper's dump does not say [waiting]:\n%s", g)
			}
			return
		}
	}
	t.Fatalf("no goroutine in Event.Wait in the dump:\n%s", dump)
}

// TestEventHandoff: Handoff wakes a waiter as Notify(1) does, and when it
// woke a goroutine parked in the runtime, that goroutine has run by the
// time Handoff returns (GOMAXPROCS 1: after a Notify it runs only once
// the caller blocks). Handoff takes back the deferred handoff's note, so
// the woken goroutine's next wait on this P sleeps, and the next Handoff
// yields to it again: every round of the loop below is a handoff. With
// nobody registered it does nothing. Where the runtime's yield is not
// linked, Handoff yields with runtime.Gosched, to the global run queue,
// which the scheduler serves first now and then: there only the wakes
// are checked.
func TestEventHandoff(t *testing.T) {
	defer watchdog(t, 20*time.Second)()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var e Event
	e.Handoff() // nobody registered
	for _, handoff := range []bool{true, false} {
		var flag, ran atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := e.WaitFor(context.Background(), flag.Load, Park{Spin: NoSpin}); err != nil {
				t.Error(err)
			}
			ran.Store(true)
		}()
		waitSleepers(t, &e, 1)
		flag.Store(true)
		if handoff {
			e.Handoff()
		} else {
			e.Notify(1)
		}
		if got := ran.Load(); got != handoff && haveLinkname {
			t.Errorf("handoff %v: the woken goroutine had run on return: %v", handoff, got)
		}
		<-done
	}

	// A worker that takes rounds one at a time, handed each by Handoff.
	const rounds = 1000
	var round, took atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := int32(1); r <= rounds; r++ {
			if err := e.WaitFor(context.Background(), func() bool { return round.Load() >= r }, Park{Spin: NoSpin}); err != nil {
				t.Error(err)
				return
			}
			took.Store(r)
		}
	}()
	waitSleepers(t, &e, 1)
	// A round is a handoff only if the worker was asleep when Handoff ran.
	// A preemption (sysmon, or a GC's stop request on a loaded machine)
	// can leave it runnable but not yet asleep; Handoff then has no one to
	// yield to, and at GOMAXPROCS 1 the worker gets the P only when this
	// goroutine gives it up. So after a miss the test waits for the worker
	// to take the round: one preemption costs one round, not every round
	// after it.
	misses := 0
	for r := int32(1); r <= rounds; r++ {
		round.Store(r)
		e.Handoff()
		if got := took.Load(); got != r {
			misses++
			for took.Load() != r {
				select {
				case <-done:
					t.Fatalf("round %d: the worker ended early", r)
				default:
					runtime.Gosched()
				}
			}
		}
	}
	<-done
	if misses > rounds/20 && haveLinkname {
		t.Fatalf("in %d of %d rounds the worker had not taken the round on Handoff's return", misses, rounds)
	}
	if n := e.Waiters(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}
