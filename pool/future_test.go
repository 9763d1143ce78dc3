package pool

import (
	"bytes"
	"context"
	"errors"
	"log"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/sched"
)

var errBoom = errors.New("boom")

// TestCallPanic: the future returns a *PanicError with the value and a
// stack; the worker survives and the next call works.
func TestCallPanic(t *testing.T) {
	watchdog(t, 10*time.Second)
	for _, c := range configs() {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			defer p.Close()
			tk := NewTask(p, func(x int) int {
				switch x {
				case 1:
					panic("one")
				case 2:
					panic(errBoom)
				}
				return x
			})
			ctx := context.Background()
			for round := range 3 {
				_, err := tk.Call(1).Wait(ctx)
				var pe *PanicError
				if !errors.As(err, &pe) || pe.Value != "one" || !bytes.Contains(pe.Stack, []byte("TestCallPanic")) {
					t.Fatalf("round %d: err %v", round, err)
				}
				if !strings.Contains(err.Error(), "one") {
					t.Fatalf("Error() = %q", err.Error())
				}
				if _, err := tk.Call(2).Wait(ctx); !errors.Is(err, errBoom) {
					t.Fatalf("panic(err) does not unwrap: %v", err)
				}
				if v, err := tk.Call(3).Wait(ctx); v != 3 || err != nil {
					t.Fatalf("after a panic: %v, %v", v, err)
				}
			}
			p.Close()
			if s := p.Stats(); s.Panicked != 6 || s.Completed != 9 {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// TestGoPanic: a Go task's panic goes to the handler, with its stack.
func TestGoPanic(t *testing.T) {
	watchdog(t, 10*time.Second)
	type report struct {
		v     any
		stack []byte
	}
	got := make(chan report, 4)
	p := New(Config{Workers: 2, PanicHandler: func(v any, stack []byte) { got <- report{v, stack} }})
	var ran atomic.Int32
	p.Go(func() { panic("go-panic") })
	r := <-got
	if r.v != "go-panic" || !bytes.Contains(r.stack, []byte("TestGoPanic")) {
		t.Fatalf("handler got %v\n%s", r.v, r.stack)
	}
	for range 10 {
		p.Go(func() { ran.Add(1) })
	}
	p.Close()
	if ran.Load() != 10 {
		t.Fatalf("ran %d after a panic", ran.Load())
	}
	if s := p.Stats(); s.Panicked != 1 || s.Completed != 11 {
		t.Fatalf("stats %+v", s)
	}
}

// TestGoPanicDefaultLogs: without a handler, the panic and its stack are
// logged.
func TestGoPanicDefaultLogs(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	orig := log.Writer()
	defer log.SetOutput(orig)
	log.SetOutput(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(b)
	}))
	p := New(Config{Workers: 1})
	p.Go(func() { panic("logged-panic") })
	p.Close()
	log.SetOutput(orig)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "logged-panic") || !strings.Contains(out, "goroutine") {
		t.Fatalf("log output:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestGoexit: a task calling runtime.Goexit ends its worker goroutine; a
// replacement takes over, the future fails, and the pool still closes.
func TestGoexit(t *testing.T) {
	watchdog(t, 10*time.Second)
	runtime.GC()
	base := runtime.NumGoroutine()
	var handled atomic.Int32
	p := New(Config{Workers: 2, PanicHandler: func(any, []byte) { handled.Add(1) }})
	tk := NewTask(p, func(x int) int {
		if x < 0 {
			runtime.Goexit()
		}
		return x
	})
	ctx := context.Background()
	for range 3 {
		_, err := tk.Call(-1).Wait(ctx)
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != goexitValue {
			t.Fatalf("Goexit call: %v", err)
		}
		p.Go(runtime.Goexit)
		if v, err := tk.Call(5).Wait(ctx); v != 5 || err != nil {
			t.Fatalf("after Goexit: %v %v", v, err)
		}
	}
	p.Close()
	if handled.Load() != 3 {
		t.Fatalf("handler saw %d Goexits, want 3", handled.Load())
	}
	if s := p.Stats(); s.Panicked != 6 || s.Completed != 9 {
		t.Fatalf("stats %+v", s)
	}
	checkNoLeak(t, base)
}

// TestWaitCancel: a Wait cut short by its context returns ctx.Err(), and
// the future still delivers the value afterwards.
func TestWaitCancel(t *testing.T) {
	watchdog(t, 10*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	release := make(chan struct{})
	tk := NewTask(p, func(x int) int { <-release; return x * 2 })
	f := tk.Call(21)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want DeadlineExceeded", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := f.Wait(ctx2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled ctx = %v", err)
	}
	// A Wait blocked when its ctx is cancelled returns promptly.
	ctx3, cancel3 := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { _, err := f.Wait(ctx3); errc <- err }()
	// Cancel only once the Wait is registered and parked: one that
	// started after the cancel would return Canceled too, untested.
	if !eventually(10*time.Second, func() bool {
		return f.r.owner.event().Waiters() == 1 && blockedIn("pool.Future[...].wait(") == 1
	}) {
		t.Fatal("the Wait never parked")
	}
	cancel3()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked Wait = %v", err)
	}
	close(release)
	if v, err := f.Wait(context.Background()); v != 42 || err != nil {
		t.Fatalf("after cancellation: %v, %v", v, err)
	}
	if _, err := f.Wait(context.Background()); !errors.Is(err, ErrFutureUsed) {
		t.Fatalf("second Wait = %v", err)
	}
}

// TestFutureUsed: the value is taken once; a spent future and a copy
// report ErrFutureUsed, even after the slot was reused (the zero Future:
// TestZeroFuture).
func TestFutureUsed(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	ctx := context.Background()
	f := tk.Call(1)
	g := f
	if v, err := f.Wait(ctx); v != 1 || err != nil {
		t.Fatal(v, err)
	}
	for range 3 {
		// Reuse the slot (the free list hands it back).
		if v, err := tk.Call(2).Wait(ctx); v != 2 || err != nil {
			t.Fatal(v, err)
		}
		if _, err := g.Wait(ctx); !errors.Is(err, ErrFutureUsed) {
			t.Fatalf("stale copy: %v", err)
		}
	}
}

// TestFutureCopiesRace: many goroutines Wait on copies of one future
// while the slot is recycled under them: exactly one gets the value, the
// rest ErrFutureUsed, and the race detector sees no race.
func TestFutureCopiesRace(t *testing.T) {
	watchdog(t, 30*time.Second)
	p := New(Config{Workers: 2})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x })
	ctx := context.Background()
	for round := range scale(500) {
		f := tk.Call(round)
		var wins, used atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := f.Wait(ctx)
				switch {
				case err == nil && v == round:
					wins.Add(1)
				case errors.Is(err, ErrFutureUsed):
					used.Add(1)
				default:
					t.Errorf("Wait: %v %v", v, err)
				}
				// Keep the slot churning while others still hold f.
				if v, err := tk.Call(-1).Wait(ctx); err != nil || v != -1 {
					t.Errorf("Call(-1) = %d, %v", v, err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 || used.Load() != 3 {
			t.Fatalf("round %d: %d wins, %d used", round, wins.Load(), used.Load())
		}
	}
}

// TestFutureReleasesResult: a taken call does not keep its argument or
// result alive, in a slot (CallContext's) or in a Call stream.
func TestFutureReleasesResult(t *testing.T) {
	p := New(Config{Workers: 1})
	defer p.Close()
	tk := NewTask(p, func(b *[1 << 10]byte) *[1 << 10]byte { return b })
	ctx := context.Background()
	f := tk.CallContext(ctx, new([1 << 10]byte))
	if _, err := f.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	s, ok := tk.free.get()
	if !ok {
		t.Fatal("slot not recycled")
	}
	if s.in != nil || s.out != nil || s.err != nil {
		t.Fatal("recycled slot still holds the call's values")
	}
	f = tk.Call(new([1 << 10]byte))
	if _, err := f.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	st := tk.open.Load()
	if st == nil {
		t.Fatal("Call on a one-worker pool did not stream")
	}
	if e := &st.elems[0]; e.in != nil || e.out != nil || e.err != nil {
		t.Fatal("a taken stream call still holds the call's values")
	}
}

// TestCallWaitStaysOnP: with one P, a caller and its worker take turns on
// it through the yields before registering (see Future.wait and
// worker.loop): back-to-back Call+Wait rounds park the worker rarely, not
// once a round as a doorbell handoff does.
func TestCallWaitStaysOnP(t *testing.T) {
	if !sched.Linked {
		t.Skip("the worker yields before it parks only where runtime.goyield is linked")
	}
	watchdog(t, 20*time.Second)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := New(Config{Workers: 1})
	defer p.Close()
	tk := NewTask(p, func(x int) int { return x + 1 })
	ctx := context.Background()
	for i := range 100 {
		if v, err := tk.Call(i).Wait(ctx); err != nil || v != i+1 {
			t.Fatalf("Call(%d) = %d, %v", i, v, err)
		}
	}
	const rounds = 2000
	before := p.Stats()
	for i := range rounds {
		if v, err := tk.Call(i).Wait(ctx); err != nil || v != i+1 {
			t.Fatalf("Call(%d) = %d, %v", i, v, err)
		}
	}
	after := p.Stats()
	// A timer, the GC or the watchdog may take the P between the two
	// yields now and then; a tenth of the rounds leaves room for them.
	if parks := after.Parks - before.Parks; parks > rounds/10 {
		t.Fatalf("the worker parked %d times in %d rounds on one P, want at most %d", parks, rounds, rounds/10)
	}
}
