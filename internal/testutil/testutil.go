// Package testutil holds what the tests of every knit package need alike:
// a watchdog that turns a hang (a lost wakeup) into a failure with every
// goroutine's stack, and whether the race detector is on.
package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Watchdog panics, printing t's name, what state reports and the stack of
// every goroutine, if the test is still running after d: a lost wakeup
// becomes a failure with the evidence, not a CI run that hangs until its
// timeout. It stops at t's cleanup, or earlier by the returned stop.
// state may read only what is safe to read from another goroutine.
func Watchdog(t testing.TB, d time.Duration, state ...func() string) (stop func()) {
	name := t.Name()
	timer := time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var states []string
		for _, f := range state {
			if f != nil {
				states = append(states, f())
			}
		}
		msg := fmt.Sprintf("watchdog: %s made no progress for %v (lost wakeup?)", name, d)
		if len(states) > 0 {
			msg += ": " + strings.Join(states, "; ")
		}
		fmt.Fprintf(os.Stderr, "%s\n\n%s\n", msg, buf)
		panic(msg)
	})
	stop = func() { timer.Stop() }
	t.Cleanup(stop)
	return stop
}

// SelfCommand re-executes the test binary with args. When the tests run
// under an emulator that the kernel does not know (binfmt_misc not
// registered), KNIT_TEST_EXEC names the wrapper (for example
// "qemu-aarch64-static"), so children run the way their parent does.
func SelfCommand(args ...string) *exec.Cmd {
	if w := strings.Fields(os.Getenv("KNIT_TEST_EXEC")); len(w) > 0 {
		return exec.Command(w[0], append(append(w[1:], os.Args[0]), args...)...)
	}
	return exec.Command(os.Args[0], args...)
}

// CheckGoroutineIDs fails t unless id, a way of identifying the calling
// goroutine, is stable within a goroutine, non-zero, and different for
// eight goroutines alive at once.
func CheckGoroutineIDs(t testing.TB, name string, id func() uintptr) {
	t.Helper()
	a := id()
	if a == 0 || id() != a {
		t.Fatalf("%s: %d, then %d", name, a, id())
	}
	const n = 8
	ids := make([]uintptr, n)
	var started, done sync.WaitGroup
	release := make(chan struct{})
	started.Add(n)
	for i := range n {
		done.Go(func() {
			ids[i] = id()
			started.Done()
			<-release // all alive at once
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	seen := map[uintptr]bool{a: true}
	for _, g := range ids {
		if g == 0 || seen[g] {
			t.Fatalf("%s: ids %v (caller %d) not distinct", name, ids, a)
		}
		seen[g] = true
	}
}

// Blocked counts the goroutines whose stack holds one of frames (each a
// substring of a frame's line, such as
// "knit.(*Event).sleepQueue(0xc000123450") and that are blocked: parked
// by the scheduler, or in a system call, rather than running or runnable.
// It is how a test waits for another goroutine to be asleep, where a
// count the code keeps says only that it is about to be. It stops the
// world to take every stack, once per call: poll it, but not in a hot
// loop.
func Blocked(frames ...string) int {
	return BlockedWhere(func(stack string) bool {
		for _, f := range frames {
			if strings.Contains(stack, f) {
				return true
			}
		}
		return false
	})
}

// BlockedWhere is Blocked for the goroutines whose stack match accepts:
// for a test that looks for many goroutines at once, with one pass over
// each stack.
func BlockedWhere(match func(stack string) bool) int {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	k := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[running") || strings.Contains(header, "[runnable") {
			continue
		}
		if match(g) {
			k++
		}
	}
	return k
}
