package knit

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/cputime"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// The parking benchmarks. Every figure that matters is a ratio between
// sub-benchmarks of one run: run with -count N so they interleave, and
// compare medians. Beside ns/op each reports cpu-µs/op, the process's CPU
// time (every thread, from getrusage) per operation, and where an Event
// is involved wakes/op, the futex wake syscalls and goroutine readies it
// issued.
//
//	go test -run '^$' -bench 'Event|Futex|Park' -count 5 .

// parkMeter measures process CPU over a benchmark loop.
type parkMeter struct{ cpu time.Duration }

func startParkMeter(b *testing.B) parkMeter {
	b.ResetTimer()
	return parkMeter{cputime.Used()}
}

func (m parkMeter) stop(b *testing.B, events ...*Event) {
	b.StopTimer()
	cpu := cputime.Used() - m.cpu
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/op")
	if len(events) > 0 {
		var w uint32
		for _, e := range events {
			w += e.wakes.Load()
		}
		b.ReportMetric(float64(w)/n, "wakes/op")
	}
}

// BenchmarkEventNotifyNoWaiter: the doorbell's fast path, against the
// FutexWake it saves (a syscall that finds nobody).
func BenchmarkEventNotifyNoWaiter(b *testing.B) {
	b.Run("notify", func(b *testing.B) {
		var e Event
		m := startParkMeter(b)
		for b.Loop() {
			e.Notify(1)
		}
		m.stop(b, &e)
	})
	b.Run("notify-contended", func(b *testing.B) {
		// Every P notifying the same Event: the line stays shared,
		// since nobody writes it.
		var e Event
		m := startParkMeter(b)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.Notify(1)
			}
		})
		m.stop(b, &e)
	})
	b.Run("futexwake-nobody", func(b *testing.B) {
		var w atomic.Uint32
		m := startParkMeter(b)
		for b.Loop() {
			FutexWake(&w, 1)
		}
		m.stop(b)
	})
}

// parkPair runs serve on a partner goroutine and call b.N times on the
// benchmark goroutine, both locked to their threads if locked. serve
// returns when quit (called once after the loop) has told it to.
func parkPair(b *testing.B, locked bool, serve func(), call func(i uint32), quit func(), events ...*Event) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if locked {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		serve()
	}()
	if locked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	for i := range uint32(100) { // warm up: threads started, pools filled
		call(i)
	}
	m := startParkMeter(b)
	for i := uint32(100); b.Loop(); i++ {
		call(i)
	}
	m.stop(b, events...)
	quit()
	<-done
}

// eventPingPong: the partner waits on pong for an odd turn and answers
// with the next even one on ping.
func eventPingPong(b *testing.B, p Park, locked bool, gap func(), rtt *time.Duration) {
	eventPingPongMixed(b, p, p, locked, locked, gap, rtt)
}

// eventPingPongMixed is eventPingPong with each side's own Park and
// thread: the pinned-worker shape is a locked partner on the futex
// serving a plain caller in the runtime.
func eventPingPongMixed(b *testing.B, p, pp Park, locked, plocked bool, gap func(), rtt *time.Duration) {
	var (
		turn       atomic.Uint32
		ping, pong Event
		stop       atomic.Bool
	)
	bg := context.Background()
	serve := func() {
		if plocked && !locked {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for i := uint32(0); ; i++ {
			eventWait(bg, &pong, pp, func() bool { return turn.Load() == 2*i+1 || stop.Load() })
			if stop.Load() {
				return
			}
			turn.Store(2*i + 2)
			ping.Notify(1)
		}
	}
	call := func(i uint32) {
		if gap != nil {
			gap()
		}
		var t0 time.Time
		if rtt != nil {
			t0 = time.Now()
		}
		turn.Store(2*i + 1)
		pong.Notify(1)
		eventWait(bg, &ping, p, func() bool { return turn.Load() == 2*i+2 })
		if rtt != nil {
			*rtt += time.Since(t0)
		}
	}
	quit := func() {
		stop.Store(true)
		pong.NotifyAll()
	}
	parkPair(b, locked, serve, call, quit, &ping, &pong)
}

// rawFutexPingPong is the limit: one word, bare futex syscalls, a wake
// on every turn whether or not the partner sleeps.
func rawFutexPingPong(b *testing.B) {
	var w atomic.Uint32
	var stop atomic.Bool
	serve := func() {
		for i := uint32(0); ; i++ {
			for w.Load() == 2*i {
				rawFutexWait(&w, 2*i)
			}
			if stop.Load() {
				return
			}
			w.Store(2*i + 2)
			rawFutexWake(&w)
		}
	}
	call := func(i uint32) {
		w.Store(2*i + 1)
		rawFutexWake(&w)
		for w.Load() == 2*i+1 {
			rawFutexWait(&w, 2*i+1)
		}
	}
	quit := func() {
		stop.Store(true)
		w.Add(1) // odd: the partner's turn
		rawFutexWake(&w)
	}
	parkPair(b, true, serve, call, quit)
}

func chanPingPong(b *testing.B, locked bool) {
	req, resp := make(chan struct{}), make(chan struct{})
	serve := func() {
		for range req {
			resp <- struct{}{}
		}
	}
	call := func(uint32) {
		req <- struct{}{}
		<-resp
	}
	parkPair(b, locked, serve, call, func() { close(req) })
}

func condPingPong(b *testing.B, locked bool) {
	var (
		mu   sync.Mutex
		c    = sync.NewCond(&mu)
		turn uint32
		stop bool
	)
	serve := func() {
		mu.Lock()
		defer mu.Unlock()
		for i := uint32(0); ; i++ {
			for turn != 2*i+1 && !stop {
				c.Wait()
			}
			if stop {
				return
			}
			turn = 2*i + 2
			c.Signal()
		}
	}
	call := func(i uint32) {
		mu.Lock()
		turn = 2*i + 1
		c.Signal()
		for turn != 2*i+2 {
			c.Wait()
		}
		mu.Unlock()
	}
	quit := func() {
		mu.Lock()
		stop = true
		c.Signal()
		mu.Unlock()
	}
	parkPair(b, locked, serve, call, quit)
}

// BenchmarkParkPingPong: a parked wake's round trip, both sides sleeping
// every turn (no spin). limit-futex-locked is the floor: two locked
// threads, bare futex syscalls. The Event runs on each backend with
// locked threads and plain goroutines; channels and sync.Cond are what a
// Go programmer would otherwise write.
func BenchmarkParkPingPong(b *testing.B) {
	b.Run("limit-futex-locked", rawFutexPingPong)
	for _, c := range []struct {
		name   string
		p      Park
		locked bool
	}{
		{"event-futex-locked", Park{Spin: NoSpin, Backend: BackendFutex}, true},
		{"event-runtime-locked", Park{Spin: NoSpin, Backend: BackendRuntime}, true},
		{"event-futex", Park{Spin: NoSpin, Backend: BackendFutex}, false},
		{"event-runtime", Park{Spin: NoSpin, Backend: BackendRuntime}, false},
		{"event-auto", Park{Spin: NoSpin}, false},
	} {
		b.Run(c.name, func(b *testing.B) { eventPingPong(b, c.p, c.locked, nil, nil) })
	}
	// The runtime backend's other ways to sleep, for the comparison that
	// chose the semaphore with handoff: the channel wait list (what a
	// knit_nolinkname build uses, and every build with a cancellable
	// ctx), and the semaphore without the handoff.
	rt := Park{Spin: NoSpin, Backend: BackendRuntime}
	for _, v := range eventVariants {
		b.Run("event-runtime-"+v.name, func(b *testing.B) {
			defer v.set()()
			eventPingPong(b, rt, false, nil, nil)
		})
	}
	b.Run("event-runtime-defaultspin", func(b *testing.B) {
		eventPingPong(b, Park{Backend: BackendRuntime}, false, nil, nil)
	})
	// A pinned worker (locked, on the futex) serving a plain goroutine
	// in the runtime: the semaphore's handoff would make the locked
	// notifier yield its thread.
	fx := Park{Spin: NoSpin, Backend: BackendFutex}
	b.Run("event-mixed-locked-futex-server", func(b *testing.B) {
		eventPingPongMixed(b, rt, fx, false, true, nil, nil)
	})
	b.Run("chan-locked", func(b *testing.B) { chanPingPong(b, true) })
	b.Run("chan", func(b *testing.B) { chanPingPong(b, false) })
	b.Run("sema", func(b *testing.B) { semaPingPong(b, false, false) })
	b.Run("sema-handoff", func(b *testing.B) { semaPingPong(b, true, false) })
	b.Run("sema-handoff-locked", func(b *testing.B) { semaPingPong(b, true, true) })
	b.Run("cond-locked", func(b *testing.B) { condPingPong(b, true) })
	b.Run("cond", func(b *testing.B) { condPingPong(b, false) })
}

// eventVariants are the runtime backend's other ways to sleep and wake,
// kept switchable for the benchmarks that chose between them and for
// the tests, which run the protocol under each: channel nodes with no
// deferred handoff (what a knit_nolinkname build does), and semaphore
// nodes without the deferred handoff. set switches one on and returns
// the func that switches it off; call it only while no Event is in use.
var eventVariants = []struct {
	name string
	set  func() (restore func())
}{
	{"waitlist", func() func() {
		return setHooks(func(h *testHooks) { h.noSema, h.noHandoff = true, true })
	}},
	{"noyield", func() func() {
		return setHooks(func(h *testHooks) { h.noHandoff = true })
	}},
}

// BenchmarkParkSpin: spin-then-park with each budget, at a high request
// rate (the next request follows the reply at once) and a low one (the
// caller pauses about 100 µs, a timed futex wait, before each request).
// Both sides wait with the same Park. rtt-µs is the request-to-reply
// time, without the pause; cpu-µs/op shows what the spinning costs. The
// futex rows run on locked threads (pinned workers), the runtime rows on
// plain goroutines.
func BenchmarkParkSpin(b *testing.B) {
	var gapWord atomic.Uint32
	lowRate := func() { FutexWait(&gapWord, 0, 100*time.Microsecond) }
	for _, rate := range []struct {
		name string
		gap  func()
	}{{"high", nil}, {"low", lowRate}} {
		for _, be := range []struct {
			name   string
			b      Backend
			locked bool
		}{{"futex-locked", BackendFutex, true}, {"runtime", BackendRuntime, false}} {
			for _, spin := range []time.Duration{NoSpin, 5 * time.Microsecond, 20 * time.Microsecond, 50 * time.Microsecond} {
				name := rate.name + "/" + be.name + "/spin=" + spin.String()
				b.Run(name, func(b *testing.B) {
					var rtt time.Duration
					eventPingPong(b, Park{Spin: spin, Backend: be.b}, be.locked, rate.gap, &rtt)
					b.ReportMetric(float64(rtt.Microseconds())/float64(b.N), "rtt-µs")
				})
			}
		}
	}
}

// BenchmarkEventRegister: a waiter's registration and its undoing, the
// steps every blocked call takes whether or not it sleeps. "cancel" is
// Prepare then Cancel; "moved" is Prepare, a Notify from the same
// goroutine, then a Wait that sees the ticket stale and returns at once
// (the path of a waiter whose item came while it registered).
func BenchmarkEventRegister(b *testing.B) {
	b.Run("cancel", func(b *testing.B) {
		var e Event
		for b.Loop() {
			e.Cancel(e.Prepare())
		}
	})
	b.Run("moved", func(b *testing.B) {
		var e Event
		ctx := context.Background()
		for b.Loop() {
			t := e.Prepare()
			e.Notify(1)
			if err := e.Wait(ctx, t, Park{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkZeroParkResolve: what a zero Park costs a wait to resolve
// where the CPU count lets a default spin (8 CPUs, as the policy sees
// it): "exact" reads GOMAXPROCS, and the scheduler's lock, every time, as
// a constructor does; "each-wait" is Event.Wait's and Select's, which
// reads it once per procsWindow. Run it with -cpu 1,2,4 to see the
// lock's contention.
func BenchmarkZeroParkResolve(b *testing.B) {
	defer spinpolicy.SetCPUs(8)()
	for _, c := range []struct {
		name string
		fn   func() time.Duration
	}{
		{"exact", Park{}.spin},
		{"each-wait", Park{}.spinEachWait},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				var sum time.Duration
				for pb.Next() {
					sum += c.fn()
				}
				if sum < 0 {
					b.Fatal(sum)
				}
			})
		})
	}
}
