package shm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

func startWorkers(t *testing.T, n int) *Workers {
	t.Helper()
	ws, err := StartWorkers(WorkerConfig{
		Workers:  n,
		Capacity: 1 << 16,
		Command:  func() *exec.Cmd { return selfCommand() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func reversed(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// Many goroutines, three children: every call gets its own answer.
func TestWorkersCalls(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	ws := startWorkers(t, 3)
	calls := scale(3000, 300)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range calls / 6 {
				req := fmt.Sprintf("goroutine %d call %d %s", g, i, make([]byte, i%300))
				out, err := ws.Call(context.Background(), []byte(req))
				if err != nil {
					t.Error(err)
					return
				}
				if string(out) != reversed(req) {
					t.Errorf("call %q: got %q", req, out)
					return
				}
			}
		})
	}
	wg.Wait()
	pids := map[string]bool{}
	for range 30 {
		out, err := ws.Call(context.Background(), []byte("pid"))
		if err != nil {
			t.Fatal(err)
		}
		pids[string(out)] = true
	}
	if len(pids) < 2 {
		t.Errorf("30 calls served by %d process(es), want several of 3", len(pids))
	}
	if out, err := ws.Call(context.Background(), nil); err != nil || len(out) != 0 {
		t.Errorf("empty call: %q, %v", out, err)
	}
	if _, err := ws.Call(context.Background(), make([]byte, 1<<16)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized request: %v, want ErrTooLarge", err)
	}
	if _, err := ws.Call(context.Background(), []byte("big")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized response: %v, want ErrTooLarge", err)
	}
	if out, err := ws.Call(context.Background(), []byte("ab")); err != nil || string(out) != "ba" {
		t.Errorf("after the errors: %q, %v", out, err)
	}
}

// A child killed in the middle of a call fails that call with
// ErrWorkerDied; the next call gets a new child.
func TestWorkersChildKilled(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	ws := startWorkers(t, 1)
	pid := ws.Pids()[0]
	errc := make(chan error, 1)
	go func() {
		_, err := ws.Call(context.Background(), []byte("sleep:1m"))
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	err = <-errc
	if !errors.Is(err, ErrWorkerDied) {
		t.Fatalf("call to a killed worker: %v, want ErrWorkerDied", err)
	}
	t.Logf("%v after %v", err, time.Since(t0))
	out, err := ws.Call(context.Background(), []byte("pid"))
	if err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
	if string(out) == strconv.Itoa(pid) || ws.Restarts() != 1 || ws.Pids()[0] == pid {
		t.Errorf("served by %s, pids %v, %d restarts; want a new process and 1 restart", out, ws.Pids(), ws.Restarts())
	}

	// A panic kills the worker too.
	if _, err := ws.Call(context.Background(), []byte("panic")); !errors.Is(err, ErrWorkerDied) {
		t.Errorf("panicking handler: %v, want ErrWorkerDied", err)
	}
	if out, err := ws.Call(context.Background(), []byte("xy")); err != nil || string(out) != "yx" {
		t.Errorf("after the panic: %q, %v", out, err)
	}
}

// A call whose context ends returns at once; the child's late answer is
// dropped and the next call gets its own.
func TestWorkersCallContext(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	ws := startWorkers(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := ws.Call(ctx, []byte("sleep:300ms")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call past its deadline: %v", err)
	}
	if out, err := ws.Call(context.Background(), []byte("abc")); err != nil || string(out) != "cba" {
		t.Fatalf("next call: %q, %v; want \"cba\" (not the late \"slept\")", out, err)
	}
}

// Close ends the children (they exit 0 once their rings close) and fails
// later calls.
func TestWorkersClose(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	ws := startWorkers(t, 2)
	if _, err := ws.Call(context.Background(), []byte("x")); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := ws.Call(context.Background(), []byte("sleep:200ms"))
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("call in flight at Close: %v, want ErrClosed", err)
	}
	for _, w := range ws.all {
		if !w.hasExited() {
			t.Errorf("worker %d still running after Close", w.pid)
		} else if w.waitErr != nil {
			t.Errorf("worker %d: %v, want a clean exit", w.pid, w.waitErr)
		}
	}
	if _, err := ws.Call(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close: %v, want ErrClosed", err)
	}
	if err := ws.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
