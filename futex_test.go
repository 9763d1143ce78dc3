package knit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/testutil"
)

// These run against whichever futex the build has: the kernel's on Linux
// and darwin, the Go table with -tags knit_futex_fallback and elsewhere.

// TestFutexValueMismatch: a wait whose value is already stale returns nil
// at once (EAGAIN on Linux), with or without a timeout.
func TestFutexValueMismatch(t *testing.T) {
	var w atomic.Uint32
	w.Store(7)
	stop := parkWatchdog(t, parkWatchdogTime, nil)
	defer stop()
	for _, timeout := range []time.Duration{0, time.Hour} {
		if err := FutexWait(&w, 6, timeout); err != nil {
			t.Errorf("FutexWait(stale value, %v) = %v, want nil", timeout, err)
		}
	}
	if a := testing.AllocsPerRun(100, func() { FutexWait(&w, 6, 0) }); a != 0 {
		t.Errorf("FutexWait with a stale value allocates %v times", a)
	}
}

// TestFutexTimeout: a wait nobody wakes returns ErrTimeout, which is also
// os.ErrDeadlineExceeded, no earlier than its timeout.
func TestFutexTimeout(t *testing.T) {
	var w atomic.Uint32
	const d = 20 * time.Millisecond
	start := time.Now()
	err := FutexWait(&w, 0, d)
	el := time.Since(start)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("FutexWait timed out with %v; want ErrTimeout, also os.ErrDeadlineExceeded", err)
	}
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("ErrTimeout has no Timeout() true")
	}
	// The kernel may wake a hair early by its own clock; 1 ms covers the
	// difference between clocks. A VM can be arbitrarily late.
	if el < d-time.Millisecond || el > 10*time.Second {
		t.Errorf("FutexWait(%v) returned after %v", d, el)
	}
}

// TestFutexWakeCounts: FutexWake's results add up to exactly the sleepers
// that returned, one at a time and several at once, and a wake with no
// sleeper returns 0.
func TestFutexWakeCounts(t *testing.T) {
	for _, batch := range []int{1, 3, math.MaxInt32} {
		t.Run(fmt.Sprint(batch), func(t *testing.T) {
			const sleepers = 6
			var w atomic.Uint32
			var returned atomic.Int32
			var wg sync.WaitGroup
			for range sleepers {
				wg.Go(func() {
					// One wait, with the value never changed: only a wake
					// ends it (none of the futexes here wakes untimed
					// waits spuriously).
					if err := FutexWait(&w, 0, 0); err != nil {
						t.Error(err)
					}
					returned.Add(1)
				})
			}
			// woken counts what FutexWake reported; the watchdog reads it
			// from its own goroutine.
			var woken atomic.Int32
			stop := parkWatchdog(t, parkWatchdogTime, func() string {
				return fmt.Sprintf("woken %d, returned %d", woken.Load(), returned.Load())
			})
			if batch == math.MaxInt32 {
				// Wake-all until every sleeper has returned. A wake that
				// finds nobody is harmless, so the loop waits for the
				// returns themselves rather than for a time: a woken
				// sleeper may take long to count itself on a loaded
				// machine, and a sleeper not yet asleep is caught by a
				// later round.
				for returned.Load() < sleepers {
					n := FutexWake(&w, batch)
					if n < 0 || n > sleepers {
						t.Fatalf("FutexWake(all) = %d with %d sleepers", n, sleepers)
					}
					woken.Add(int32(n))
					time.Sleep(100 * time.Microsecond)
				}
				wg.Wait()
				stop()
				// Wake-all reports 1 on darwin whatever it woke; elsewhere
				// the reports add up to the sleepers.
				if n := woken.Load(); n > sleepers || (runtime.GOOS != "darwin" && n != sleepers) {
					t.Errorf("wake-all reported %d woken in all, want %d", n, sleepers)
				}
			} else {
				for woken.Load() < sleepers {
					n := FutexWake(&w, batch)
					if left := sleepers - int(woken.Load()); n < 0 || n > min(batch, left) {
						t.Fatalf("FutexWake(%d) = %d with %d sleepers left", batch, n, left)
					}
					woken.Add(int32(n))
					if n == 0 {
						time.Sleep(100 * time.Microsecond) // not all asleep yet
					}
				}
				wg.Wait()
				stop()
				if n := woken.Load(); n != sleepers {
					t.Errorf("woken %d, want %d", n, sleepers)
				}
			}
			if r := returned.Load(); r != sleepers {
				t.Errorf("returned %d, want %d", r, sleepers)
			}
			if n := FutexWake(&w, 1); n != 0 {
				t.Errorf("FutexWake with no sleeper = %d", n)
			}
			if n := FutexWake(&w, 0) + FutexWake(&w, -1); n != 0 {
				t.Errorf("FutexWake(n <= 0) = %d", n)
			}
		})
	}
}

// TestFutexPingPong passes a turn between two goroutines with bare
// FutexWait/FutexWake (timed and untimed waits, locked threads and not),
// counting every turn; a lost wake stops both.
func TestFutexPingPong(t *testing.T) {
	rounds := parkScale(20_000)
	for _, c := range []struct {
		name    string
		locked  bool
		timeout time.Duration
	}{{"untimed", false, 0}, {"untimed-locked", true, 0}, {"timed-locked", true, time.Hour}} {
		t.Run(c.name, func(t *testing.T) {
			var w atomic.Uint32
			stop := parkWatchdog(t, parkWatchdogTime, func() string { return fmt.Sprintf("word %d", w.Load()) })
			defer stop()
			wait := func(old uint32) {
				for w.Load() == old {
					if err := FutexWait(&w, old, c.timeout); err != nil {
						t.Error(err)
						return
					}
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if c.locked {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				for i := range uint32(rounds) {
					wait(2 * i)
					w.Store(2*i + 2)
					FutexWake(&w, 1)
				}
			}()
			if c.locked {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			for i := range uint32(rounds) {
				w.Store(2*i + 1)
				FutexWake(&w, 1)
				wait(2*i + 1)
			}
			<-done
			if got := w.Load(); got != 2*uint32(rounds) {
				t.Fatalf("word = %d, want %d", got, 2*rounds)
			}
		})
	}
}

// TestFutexTimeoutRacingWake: short timed waits racing wakes; each wait
// ends in nil or ErrTimeout, never anything else and never a hang, and
// the fallback's timed-out-but-already-dequeued path leaves no token
// behind (the next round would return early and the count would drift).
func TestFutexTimeoutRacingWake(t *testing.T) {
	rounds := parkScale(5000)
	var w atomic.Uint32
	var timeouts, wakes atomic.Int64
	var wg sync.WaitGroup
	stop := parkWatchdog(t, parkWatchdogTime, nil)
	defer stop()
	quit := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-quit:
				return
			default:
			}
			FutexWake(&w, 1)
			Pause(64)
		}
	})
	for range rounds {
		switch err := FutexWait(&w, 0, 50*time.Microsecond); err {
		case nil:
			wakes.Add(1)
		case ErrTimeout:
			timeouts.Add(1)
		default:
			t.Fatalf("FutexWait = %v", err)
		}
	}
	close(quit)
	wg.Wait()
	t.Logf("%d woken, %d timed out", wakes.Load(), timeouts.Load())
}

// TestFutexSharedInProcess: the process-shared variants work within one
// process where the OS has them, and report errors.ErrUnsupported in the
// fallback.
func TestFutexSharedInProcess(t *testing.T) {
	var w atomic.Uint32
	err := FutexWaitShared(&w, 1, 0) // stale value: returns at once
	if !futexHasShared {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("fallback FutexWaitShared = %v, want ErrUnsupported", err)
		}
		if n := FutexWakeShared(&w, 1); n != 0 {
			t.Fatalf("fallback FutexWakeShared = %d", n)
		}
		return
	}
	if err != nil {
		t.Fatalf("FutexWaitShared(stale) = %v", err)
	}
	if err := FutexWaitShared(&w, 0, time.Millisecond); err != ErrTimeout {
		t.Fatalf("FutexWaitShared timeout = %v", err)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		for w.Load() == 0 && err == nil {
			err = FutexWaitShared(&w, 0, 0)
		}
		done <- err
	}()
	stop := parkWatchdog(t, parkWatchdogTime, nil)
	defer stop()
	// Wake only a waiter in the futex call (the watchdog is the
	// deadline): one that had not called it yet would not be woken at all.
	for testutil.Blocked("knit.FutexWaitShared(") == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	w.Store(1)
	FutexWakeShared(&w, 1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A private wake does not reach a shared sleeper on Linux (different
	// keys); not asserted, since darwin keys them alike for private memory.
}
