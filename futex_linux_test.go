//go:build linux && !knit_futex_fallback

package knit

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// signalThread sends SIGURG (the runtime's preemption signal, which it
// handles and otherwise ignores) to thread tid every interval until stop
// is closed.
func signalThread(t *testing.T, tid int, interval time.Duration, stop <-chan struct{}) {
	pid := unix.Getpid()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if err := unix.Tgkill(pid, tid, unix.SIGURG); err != nil {
			t.Errorf("tgkill: %v", err)
			return
		}
		time.Sleep(interval)
	}
}

// TestFutexEINTR interrupts a timed wait with signals: the kernel returns
// EINTR to a timed FUTEX_WAIT whose thread ran a signal handler, and
// FutexWait must go back to sleep, not report a wake or an error, and
// still return nil when really woken.
func TestFutexEINTR(t *testing.T) {
	var w atomic.Uint32
	tidc := make(chan int)
	res := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tidc <- unix.Gettid()
		// One call: a return before the store below is a failure.
		err := FutexWait(&w, 0, time.Minute)
		if err == nil && w.Load() == 0 {
			err = errors.New("FutexWait returned nil with the word unchanged and no wake: EINTR leaked out")
		}
		res <- err
	}()
	tid := <-tidc
	stop := parkWatchdog(t, parkWatchdogTime, nil)
	defer stop()
	before := futexIntr.Load()
	sig := make(chan struct{})
	go signalThread(t, tid, 200*time.Microsecond, sig)
	deadline := time.Now().Add(20 * time.Second)
	for futexIntr.Load() < before+5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(sig)
	intr := futexIntr.Load() - before
	w.Store(1)
	FutexWake(&w, 1)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if intr == 0 {
		t.Fatal("signals never interrupted the timed wait: the EINTR path was not exercised")
	}
	t.Logf("%d EINTR retries", intr)
}

// TestFutexEINTRKeepsDeadline: under a steady stream of signals a timed
// wait still times out on time: each retry waits for what is left, not
// the whole timeout again.
func TestFutexEINTRKeepsDeadline(t *testing.T) {
	var w atomic.Uint32
	tidc := make(chan int)
	type result struct {
		err error
		el  time.Duration
	}
	res := make(chan result, 1)
	const d = 200 * time.Millisecond
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tidc <- unix.Gettid()
		start := time.Now()
		err := FutexWait(&w, 0, d)
		res <- result{err, time.Since(start)}
	}()
	tid := <-tidc
	stop := parkWatchdog(t, parkWatchdogTime, nil)
	defer stop()
	before := futexIntr.Load()
	sig := make(chan struct{})
	// Every 20 ms: ten interruptions in the timeout, each restarting a
	// full 200 ms would need two seconds to get through.
	go signalThread(t, tid, 20*time.Millisecond, sig)
	r := <-res
	close(sig)
	if r.err != ErrTimeout {
		t.Fatalf("FutexWait = %v, want ErrTimeout", r.err)
	}
	if r.el < d-time.Millisecond || r.el > 10*d {
		t.Fatalf("timed out after %v, want about %v", r.el, d)
	}
	retries := futexIntr.Load() - before
	if retries == 0 {
		t.Fatal("no EINTR retry happened")
	}
	if left := time.Duration(futexIntrLeft.Load()); left >= d {
		t.Fatalf("a retry resumed with %v of a %v timeout: it must resume with what is left", left, d)
	}
	t.Logf("timed out after %v with %d EINTR retries", r.el, retries)
}

// The cross-process test: a memfd mapped MAP_SHARED by this process and a
// child (the test binary re-executed), a word in it passed back and forth
// with FutexWaitShared/FutexWakeShared, every turn counted on both sides.
const (
	sharedChildEnv = "KNIT_FUTEX_SHARED_CHILD" // set to the round count in the child
	sharedFd       = 3                         // ExtraFiles[0]
)

// mapShared maps the memfd: the turn word at offset 0, the child's turn
// count on the next cache line.
func mapShared(fd int) (word, count *atomic.Uint32, unmap func(), err error) {
	mem, err := unix.Mmap(fd, 0, os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mmap: %w", err)
	}
	word = (*atomic.Uint32)(unsafe.Pointer(&mem[0]))
	count = (*atomic.Uint32)(unsafe.Pointer(&mem[128]))
	return word, count, func() { unix.Munmap(mem) }, nil
}

// sharedWait waits until *w != old, in one-second slices so a child whose
// parent died does not sleep forever. A slice that times out means a wake
// did not arrive (a turn takes microseconds): past the first round, where
// the child may still be starting, three of them fail the test, so a wake
// that does not cross the process boundary cannot hide behind the slices.
func sharedWait(w *atomic.Uint32, old uint32, limit time.Time, timeouts *int) error {
	for w.Load() == old {
		if time.Now().After(limit) {
			return fmt.Errorf("word stuck at %d", old)
		}
		err := FutexWaitShared(w, old, time.Second)
		switch {
		case err == ErrTimeout && old > 1:
			if *timeouts++; *timeouts >= 3 {
				return fmt.Errorf("word %d: %d waits timed out: the shared wake is not arriving", old, *timeouts)
			}
		case err != nil && err != ErrTimeout:
			return err
		}
	}
	return nil
}

func TestFutexSharedCrossProcess(t *testing.T) {
	if v := os.Getenv(sharedChildEnv); v != "" {
		sharedChild(v)
		return
	}
	rounds := parkScale(2000)
	fd, err := unix.MemfdCreate("knit-futex-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("memfd_create: %v", err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	defer f.Close()
	if err := unix.Ftruncate(fd, int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	word, count, unmap, err := mapShared(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()

	cmd := selfCommand("-test.run=^TestFutexSharedCrossProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), sharedChildEnv+"="+strconv.Itoa(rounds))
	cmd.ExtraFiles = []*os.File{f}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := parkWatchdog(t, parkWatchdogTime, func() string {
		cmd.Process.Kill()
		return fmt.Sprintf("word %d, child count %d, child output %q", word.Load(), count.Load(), out.String())
	})
	defer stop()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	limit := time.Now().Add(time.Minute)
	timeouts := 0
	for i := range uint32(rounds) {
		word.Store(2*i + 1) // the child's turn
		FutexWakeShared(word, 1)
		if err := sharedWait(word, 2*i+1, limit, &timeouts); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if got := word.Load(); got != 2*i+2 {
			t.Fatalf("round %d: word %d, want %d", i, got, 2*i+2)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	if c := count.Load(); c != uint32(rounds) {
		t.Fatalf("child counted %d turns, want %d\n%s", c, rounds, out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("child done %d", rounds)) {
		t.Fatalf("child output: %q", out.String())
	}
}

// sharedChild is the other process: it answers every odd word with the
// next even one.
func sharedChild(v string) {
	rounds, err := strconv.Atoi(v)
	if err != nil {
		fmt.Println("bad round count", v)
		os.Exit(2)
	}
	word, count, _, err := mapShared(sharedFd)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	runtime.LockOSThread()
	limit := time.Now().Add(time.Minute)
	timeouts := 0
	for i := range uint32(rounds) {
		if err := sharedWait(word, 2*i, limit, &timeouts); err != nil {
			fmt.Printf("child round %d: %v\n", i, err)
			os.Exit(1)
		}
		if got := word.Load(); got != 2*i+1 {
			fmt.Printf("child round %d: word %d, want %d\n", i, got, 2*i+1)
			os.Exit(1)
		}
		count.Add(1)
		word.Store(2*i + 2)
		FutexWakeShared(word, 1)
	}
	fmt.Printf("child done %d\n", rounds)
	os.Exit(0)
}
