package suites

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/knit-go/knit/bench/internal/harness"
)

// Linux futex operations (linux/futex.h); x/sys/unix does not export them.
const (
	futexWait        = 0
	futexWake        = 1
	futexPrivateFlag = 128
)

// futexRows is the floor for any parked wake: two locked threads that
// always sleep in FUTEX_WAIT until the other's FUTEX_WAKE. No user-space
// spin and no waiter flag, so every round trip pays two wakes.
func futexRows() []harness.Row {
	return []harness.Row{{Name: "limit: futex ping-pong", Start: func(cfg harness.Config) (harness.Bench, error) {
		return startFutexPingPong(cfg), nil
	}}}
}

// futexPP uses the same even/odd turn protocol as atomicPingPong on a
// 32-bit word, the futex's unit.
type futexPP struct {
	_    line
	seq  atomic.Uint32
	_    line
	stop atomic.Bool
	cfg  harness.Config
	done chan struct{}
}

func startFutexPingPong(cfg harness.Config) *futexPP {
	f := &futexPP{cfg: cfg, done: make(chan struct{})}
	ready := make(chan struct{})
	go f.partner(ready)
	<-ready
	return f
}

func (f *futexPP) partner(ready chan<- struct{}) {
	defer close(f.done)
	release := f.cfg.LockThread(1)
	defer release()
	close(ready)
	var seen uint32
	for {
		v := f.waitChange(seen)
		if f.stop.Load() {
			return
		}
		seen = v + 1
		f.seq.Store(seen)
		f.wake()
	}
}

func (f *futexPP) Run(n int) error {
	release := f.cfg.LockThread(0)
	defer release()
	for range n {
		v := f.seq.Load()
		f.seq.Store(v + 1)
		f.wake()
		f.waitChange(v + 1)
	}
	return nil
}

func (f *futexPP) Close() error {
	f.stop.Store(true)
	f.seq.Add(1)
	f.wake()
	<-f.done
	return nil
}

// waitChange sleeps until seq differs from old. The kernel compares the
// word with old under its own lock, so a store-and-wake that lands between
// our load and the sleep makes FUTEX_WAIT return EAGAIN at once: no lost
// wakeup. EINTR and spurious returns just loop.
//
// The wait goes through Syscall6, never RawSyscall: a raw syscall that
// blocks keeps its P from the scheduler (it hung a GOMAXPROCS=1 process).
func (f *futexPP) waitChange(old uint32) uint32 {
	for {
		if v := f.seq.Load(); v != old {
			return v
		}
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&f.seq)),
			futexWait|futexPrivateFlag, uintptr(old), 0, 0, 0)
	}
}

// wake wakes the one possible waiter. FUTEX_WAKE never blocks, but it
// still goes through Syscall6 so both halves pay what a real parker pays.
func (f *futexPP) wake() {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&f.seq)),
		futexWake|futexPrivateFlag, 1, 0, 0, 0)
}
