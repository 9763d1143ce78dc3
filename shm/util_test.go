package shm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/testutil"
)

// Helpers shared by the tests: re-executing the test binary as a peer,
// watchdogs, and the deterministic message stream both ends regenerate.

// childEnv selects a child mode in RunTestChild (export_test.go).
const childEnv = "KNIT_SHM_TEST_CHILD"

// selfCommand re-executes the test binary with env added. Under an
// emulator the kernel does not know (binfmt_misc not registered),
// KNIT_TEST_EXEC names the wrapper (for example "qemu-aarch64-static") so
// children run the same way as the parent.
func selfCommand(env ...string) *exec.Cmd {
	cmd := testutil.SelfCommand()
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// child is a running child test process.
type child struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	err  error
}

// startChild runs the test binary in mode with the region as fd 3.
func startChild(t testing.TB, mode string, region *Region, env ...string) *child {
	t.Helper()
	var files []*os.File
	if region != nil {
		files = []*os.File{region.File()}
	}
	return startChildFiles(t, mode, files, env...)
}

// startChildFiles runs the test binary in mode with files as fds 3, 4, ...
func startChildFiles(t testing.TB, mode string, files []*os.File, env ...string) *child {
	t.Helper()
	c := &child{done: make(chan struct{})}
	c.cmd = selfCommand(append([]string{childEnv + "=" + mode}, env...)...)
	c.cmd.Stdout = &c.out
	c.cmd.ExtraFiles = files
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting child %s: %v", mode, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait waits up to d for the child to exit and returns its error and
// stdout.
func (c *child) wait(t testing.TB, d time.Duration) (string, error) {
	t.Helper()
	select {
	case <-c.done:
		return c.out.String(), c.err
	case <-time.After(d):
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("child did not exit within %v; stdout: %s", d, c.out.String())
		return "", nil
	}
}

func (c *child) kill(t testing.TB) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
}

// watchdog fails the whole test binary, with every goroutine's stack,
// if the test is still running after d: a hang becomes a failure. Each
// show, run on the watchdog's goroutine (so it may read only what is
// safe to read concurrently: atomics, channels' lengths), adds a line
// of the test's state.
func watchdog(t testing.TB, d time.Duration, show ...func() string) {
	testutil.Watchdog(t, d, show...)
}

// waitDeadline bounds a wait for a condition in the tests: long enough
// for a loaded machine and the race detector, short of the watchdogs.
const waitDeadline = 30 * time.Second

// waitFor waits until cond holds, polling, and fails the test after
// waitDeadline, naming what it waited for and show's account of the
// state then (show may be nil).
func waitFor(t testing.TB, what string, cond func() bool, show func() string) {
	t.Helper()
	if err := waitCond(what, waitDeadline, cond, show); err != nil {
		t.Fatal(err)
	}
}

// waitCond is waitFor for a child process, which has no testing.T.
func waitCond(what string, d time.Duration, cond func() bool, show func() string) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			state := ""
			if show != nil {
				state = "; " + show()
			}
			return fmt.Errorf("waited %v for %s%s", d, what, state)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// waitAsleep waits until a call on r has registered as a sleeper on
// waiting, one of r's doorbell flags: it is past its spin and its
// re-check, in the futex sleep or about to enter it (a ring then ends
// the sleep at once). Nothing else clears the flag but a ring or the
// call's return, so the wait is for a state, not a moment.
func waitAsleep(t testing.TB, r *Ring, waiting *atomic.Uint32) {
	t.Helper()
	waitFor(t, "a call asleep on the "+r.role.String()+" end", func() bool { return waiting.Load() != 0 }, r.debugState)
}

// debugState describes the ring's shared words, for a failed wait or a
// watchdog. It reads only atomics, inside the mapping as any call does,
// so any goroutine may call it while the ends are in use.
func (r *Ring) debugState() string {
	if err := r.enter(); err != nil {
		return fmt.Sprintf("%v end: %v", r.role, err)
	}
	defer r.leave()
	return fmt.Sprintf("%v end: tail %d head %d (%d bytes in flight), data waiter %d bell %d, space waiter %d bell %d, closed word %d, end state %#x",
		r.role, r.tail.Load(), r.head.Load(), r.tail.Load()-r.head.Load(),
		r.dataWait.Load(), r.dataWake.Load(), r.spaceWait.Load(), r.spaceWake.Load(),
		r.closedW.Load(), r.state.Load())
}

// scale picks a message count: full, or short under -short, the race
// detector, and a build without a process-shared futex, whose parks poll
// with sleeps of 50 µs to 1 ms (300,000 messages between processes took
// 84-87 s there, against about 1 s with the futex).
func scale(full, short int) int {
	if testing.Short() || raceEnabled || pollingBuild {
		return short
	}
	return full
}

// pollingBuild reports that this build parks by polling (no
// process-shared futex: other OSes, or -tags knit_futex_fallback).
var pollingBuild = func() bool {
	var w atomic.Uint32
	return errors.Is(knit.FutexWaitShared(&w, 1, time.Millisecond), errors.ErrUnsupported)
}()

// The message stream: message i of a stream with seed has length
// msgLen(seed, i, max) and contents fillMsg(seed, i); messages of 8 bytes
// or more start with i. Both ends regenerate it, so every byte is checked.

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func msgLen(seed, i uint64, max int) int {
	r := mix64(seed ^ (i+1)*0x9e3779b97f4a7c15)
	switch r & 15 {
	case 0:
		return 0
	case 1:
		return max
	case 2, 3:
		return int(r>>8) % (max + 1)
	}
	return int(r>>8) % min(max+1, 128)
}

func fillMsg(p []byte, seed, i uint64) {
	x := mix64(seed + i)
	j := 0
	if len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, i)
		j = 8
	}
	for ; j < len(p); j += 8 {
		x = mix64(x + 1)
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], x)
		copy(p[j:], w[:])
	}
}

// checkMsg reports how message i differs from the stream, or "".
func checkMsg(got, scratch []byte, seed, i uint64, max int) string {
	n := msgLen(seed, i, max)
	if len(got) != n {
		return fmt.Sprintf("message %d: %d bytes, want %d", i, len(got), n)
	}
	fillMsg(scratch[:n], seed, i)
	if !bytes.Equal(got, scratch[:n]) {
		return fmt.Sprintf("message %d (%d bytes): contents differ", i, n)
	}
	return ""
}

func newRegion(t testing.TB, size int) *Region {
	t.Helper()
	r, err := Create(t.Name(), size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// pair makes a ring with both ends in this process, each with park.
func pair(t testing.TB, capacity int, park knit.Park) (p, c *Ring) {
	t.Helper()
	region := newRegion(t, RingSize(capacity))
	p, err := CreateRing(region, 0, capacity, RoleProducer, park)
	if err != nil {
		t.Fatal(err)
	}
	c, err = AttachRing(region, 0, RoleConsumer, park)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// raceEnabled: the race detector is on (stress tests scale down).
const raceEnabled = testutil.Race
