package shm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

func startWorkers(t *testing.T, n int) *Workers {
	t.Helper()
	ws, err := StartWorkers(WorkerConfig{
		Workers:  n,
		Capacity: 1 << 16,
		Command:  func() *exec.Cmd { return selfCommand(childEnv + "=worker") },
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
	w := ws.current(0)
	pid := w.pid
	errc := make(chan error, 1)
	go func() {
		_, err := ws.Call(context.Background(), []byte("sleep:1m"))
		errc <- err
	}()
	// Kill it in the handler: a kill before the call takes the worker
	// would have the call restart it and wait out the minute.
	waitFor(t, "the child to take the request", w.taken, w.req.debugState)
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

// A call whose ctx is done before it starts sends nothing: it returns
// ctx.Err(), and the handler never sees it.
func TestWorkersCallDoneContext(t *testing.T) {
	needProcesses(t)
	const calls = 200
	var made atomic.Int64
	watchdog(t, 60*time.Second, func() string { return fmt.Sprintf("%d of %d calls made", made.Load(), calls) })
	ws := startWorkers(t, 1)
	if out, err := ws.Call(context.Background(), []byte("count?")); err != nil || string(out) != "0" {
		t.Fatalf("count before: %q, %v; want \"0\"", out, err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for i := range calls {
		ctx, want := cancelled, context.Canceled
		if i%2 == 1 {
			ctx, want = expired, context.DeadlineExceeded
		}
		if _, err := ws.Call(ctx, []byte("count")); !errors.Is(err, want) || errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("call %d: %v, want %v alone (not sent)", i, err, want)
		}
		made.Add(1)
	}
	out, err := ws.Call(context.Background(), []byte("count?"))
	if err != nil || string(out) != "0" {
		t.Errorf("the handler counted %q of %d calls whose ctx was done (%v), want 0", out, calls, err)
	}
}

// current is the worker now in slot.
func (ws *Workers) current(slot int) *worker {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.all[slot]
}

// taken reports whether w's child has received every request sent to it
// and at least one: it is in the handler, or has answered.
func (w *worker) taken() bool {
	tail := w.req.tail.Load()
	return tail != 0 && w.req.head.Load() == tail
}

// A call whose ctx ends after its request was sent says so: its error
// matches ErrOutcomeUnknown and the ctx's error. One whose ctx ends
// while it waits for a busy worker was not sent, and says that. The
// worker stays in service, and its late answer does not reach the next
// call.
func TestWorkersCallCancelledInFlight(t *testing.T) {
	needProcesses(t)
	release := filepath.Join(t.TempDir(), "release") // before the workers: removed after their Close
	ws := startWorkers(t, 1)
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) }) // a failed test does not leave the handler blocked
	w := ws.current(0)
	watchdog(t, 60*time.Second, w.req.debugState, w.resp.debugState)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := ws.Call(ctx, []byte("block:"+release))
		errc <- err
	}()
	waitFor(t, "the child to take the request", w.taken, w.req.debugState)

	qctx, qcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer qcancel()
	if _, err := ws.Call(qctx, []byte("count")); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("call queued behind a busy worker past its deadline: %v, want context.DeadlineExceeded alone (not sent)", err)
	}

	cancel()
	if err := <-errc; !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
		t.Fatalf("call cancelled in the handler: %v, want ErrOutcomeUnknown and context.Canceled", err)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := ws.Call(context.Background(), []byte("abc")); err != nil || string(out) != "cba" {
		t.Fatalf("next call: %q, %v; want \"cba\" (not the late \"released\")", out, err)
	}
	if out, err := ws.Call(context.Background(), []byte("count?")); err != nil || string(out) != "0" {
		t.Errorf("count: %q, %v; want \"0\": the queued call was not sent", out, err)
	}
	if ws.Restarts() != 0 || ws.current(0) != w {
		t.Errorf("%d restarts, pids %v (was %d): want the same worker, kept in service", ws.Restarts(), ws.Pids(), w.pid)
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
	workers := []*worker{ws.current(0), ws.current(1)}
	var sent [2]uint32
	for i, w := range workers {
		sent[i] = w.req.tail.Load()
	}
	errc := make(chan error, 1)
	go func() {
		_, err := ws.Call(context.Background(), []byte("sleep:200ms"))
		errc <- err
	}()
	waitFor(t, "a child to take the request", func() bool {
		for i, w := range workers {
			if tail := w.req.tail.Load(); tail != sent[i] && w.req.head.Load() == tail {
				return true
			}
		}
		return false
	}, func() string { return workers[0].req.debugState() + "; " + workers[1].req.debugState() })
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
	if _, err := ws.Call(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
		t.Errorf("Call after Close: %v, want ErrClosed (and knit.ErrClosed)", err)
	}
	if err := ws.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// crashLoop calls req on a single worker until a call fails with
// ErrCrashLoop, and then for d more. It returns the restarts made before
// the first ErrCrashLoop and during d, the errors seen, by kind, and the
// last ErrCrashLoop. How long the deaths take to reach the loop depends
// on how fast the machine starts a child, so that part has a deadline,
// not a window; only the back-off that follows is timed.
func crashLoop(t *testing.T, ws *Workers, req string, d time.Duration) (before, during, died, looping int, last error) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	var end time.Time // zero until the first ErrCrashLoop
	for end.IsZero() || time.Now().Before(end) {
		if end.IsZero() && time.Now().After(deadline) {
			t.Fatalf("call %q: no ErrCrashLoop in %v; %d restarts, %d ErrWorkerDied", req, waitDeadline, ws.Restarts(), died)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := ws.Call(ctx, []byte(req))
		cancel()
		switch {
		case errors.Is(err, ErrCrashLoop):
			if end.IsZero() {
				before = ws.Restarts()
				end = time.Now().Add(d)
			}
			looping++
			last = err
			time.Sleep(time.Millisecond) // a caller that retries at once
		case errors.Is(err, ErrWorkerDied):
			died++
		default:
			t.Fatalf("call %q: %v, want ErrWorkerDied or ErrCrashLoop", req, err)
		}
	}
	return before, ws.Restarts() - before, died, looping, last
}

// A worker command that exits before it serves, and a handler that
// panics on every call, cost a few starts with a growing back-off, not
// one fork/exec per call; then calls fail at once with an error that says
// the worker keeps dying.
func TestWorkersCrashLoop(t *testing.T) {
	needProcesses(t)
	watchdog(t, 3*time.Minute)
	// Five deaths in a row (four restarts), then ErrCrashLoop, and
	// restarts 80, 160, 320 and 640 ms apart: four in the 1.5 s after the
	// first ErrCrashLoop, fewer on a slow machine. One per call would be
	// hundreds.
	const window, maxRestarts = 1500 * time.Millisecond, 6
	check := func(t *testing.T, ws *Workers, req string) error {
		before, during, died, looping, last := crashLoop(t, ws, req, window)
		t.Logf("%d restarts to the first ErrCrashLoop, %d in the %v after; %d ErrWorkerDied, %d ErrCrashLoop; last: %v",
			before, during, window, died, looping, last)
		if before != crashLimit-1 {
			t.Errorf("%d restarts before the first ErrCrashLoop, want %d", before, crashLimit-1)
		}
		if during > maxRestarts {
			t.Errorf("%d restarts in the %v after the first ErrCrashLoop, want at most %d", during, window, maxRestarts)
		}
		return last
	}
	t.Run("command exits at once", func(t *testing.T) {
		ws, err := StartWorkers(WorkerConfig{
			Workers:  1,
			Capacity: 1 << 12,
			Command:  func() *exec.Cmd { return selfCommand(childEnv + "=exit-at-once") },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		watchdog(t, 90*time.Second, func() string { return fmt.Sprintf("%d restarts", ws.Restarts()) })
		if last := check(t, ws, "x"); !strings.Contains(last.Error(), "exit status 3") {
			t.Errorf("ErrCrashLoop does not name the exit status: %v", last)
		}
	})
	t.Run("handler panics", func(t *testing.T) {
		ws := startWorkers(t, 1)
		watchdog(t, 90*time.Second, func() string { return fmt.Sprintf("%d restarts", ws.Restarts()) })
		check(t, ws, "panic")
		// Once the back-off ends, a restart that answers ends the loop.
		deadline := time.Now().Add(waitDeadline)
		for {
			out, err := ws.Call(context.Background(), []byte("ok"))
			if err == nil {
				if string(out) != "ko" {
					t.Fatalf("after the loop: %q", out)
				}
				break
			}
			if !errors.Is(err, ErrCrashLoop) || time.Now().After(deadline) {
				t.Fatalf("after the loop: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("deaths between answers", func(t *testing.T) {
		// A poison request now and then: each death costs one restart, at
		// once, and never counts towards a loop.
		ws := startWorkers(t, 1)
		for i := range crashLimit + 3 {
			if _, err := ws.Call(context.Background(), []byte("panic")); !errors.Is(err, ErrWorkerDied) {
				t.Fatalf("poison call %d: %v, want ErrWorkerDied", i, err)
			}
			if out, err := ws.Call(context.Background(), []byte("ab")); err != nil || string(out) != "ba" {
				t.Fatalf("call %d after a death: %q, %v", i, out, err)
			}
		}
		if ws.Restarts() != crashLimit+3 {
			t.Errorf("%d restarts, want %d", ws.Restarts(), crashLimit+3)
		}
	})
}

// A call whose worker dies is woken by the reaper: it does not sleep out
// a park slice before it notices.
func TestWorkersReaperWakesCall(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	ws := startWorkers(t, 1)
	// A slice can run out on a loaded machine for other reasons (the
	// child descheduled between its exit and the reaper); the old
	// behaviour, which always sleeps one out, fails every try.
	for try := range 3 {
		if _, err := ws.Call(context.Background(), []byte("up?")); err != nil {
			t.Fatal(err)
		}
		s0 := statTimeouts.Load()
		t0 := time.Now()
		_, err := ws.Call(context.Background(), []byte("exit"))
		if !errors.Is(err, ErrWorkerDied) || !strings.Contains(err.Error(), "exit status 7") {
			t.Fatalf("call to a worker that exits: %v, want ErrWorkerDied with its status", err)
		}
		slept := statTimeouts.Load() - s0
		t.Logf("try %d: %v after %v, %d slices slept out", try, err, time.Since(t0), slept)
		if slept == 0 {
			return
		}
	}
	t.Error("every call slept out a park slice before it noticed its worker had died")
}

// WorkerConfig.Park reaches both ends of every ring: the parent's, and
// the child's through the worker variable, resolved once (a budget that
// resolves to no spin goes to the child as knit.NoSpin, not as a zero
// the child would resolve again). Backend is ignored.
func TestWorkersPark(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	for _, tc := range []struct {
		park    knit.Park
		workers int
	}{
		{knit.Park{Spin: 3 * time.Microsecond, Backend: knit.BackendFutex}, 1},
		{knit.Park{Spin: knit.NoSpin}, 1},
		{knit.Park{}, 2},
	} {
		ws, err := StartWorkers(WorkerConfig{
			Workers:  tc.workers,
			Capacity: 1 << 12,
			Park:     tc.park,
			Command:  func() *exec.Cmd { return selfCommand(childEnv + "=worker") },
		})
		if err != nil {
			t.Fatal(err)
		}
		want := workersSpin(tc.park.Spin, tc.workers)
		sent := want
		if sent == 0 {
			sent = knit.NoSpin
		}
		for slot := range tc.workers {
			w := ws.current(slot)
			if w.req.spin != want || w.resp.spin != want {
				t.Errorf("%+v, %d workers: the parent's ends spin %v and %v, want %v", tc.park, tc.workers, w.req.spin, w.resp.spin, want)
			}
			if env := w.cmd.Env[len(w.cmd.Env)-1]; !strings.HasSuffix(env, ":"+strconv.FormatInt(int64(sent), 10)) {
				t.Errorf("%+v, %d workers: the child gets %s, want the budget %d", tc.park, tc.workers, env, sent)
			}
		}
		if out, err := ws.Call(context.Background(), []byte("park")); err != nil || string(out) != "krap" {
			t.Errorf("%+v: Call: %q, %v", tc.park, out, err)
		}
		ws.Close()
	}
}

// StartWorkers in a worker process is an error: in a handler, and in a
// program started as a worker that never called ServeIfChild (which
// would otherwise start copies of itself without end).
func TestStartWorkersInWorker(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	ws := startWorkers(t, 1)
	out, err := ws.Call(context.Background(), []byte("start-workers"))
	if err != nil || !strings.Contains(string(out), "worker process") {
		t.Errorf("StartWorkers in a handler: %q, %v; want a refusal", out, err)
	}
	c := startChild(t, "forgot-serve", nil, workerEnv+"=3:640:0")
	stdout, err := c.wait(t, 30*time.Second)
	if err != nil || !strings.Contains(stdout, "refused") {
		t.Errorf("StartWorkers in a worker that forgot ServeIfChild: %v; stdout %q", err, stdout)
	}
}

// forgotServe is a worker child whose program starts workers without
// calling ServeIfChild first. A depth guard stops the chain if
// StartWorkers lets it start (it must not).
func forgotServe() error {
	depth := envInt("KNIT_SHM_TEST_DEPTH", 1)
	if depth > 2 {
		return nil
	}
	ws, err := StartWorkers(WorkerConfig{Workers: 1, Capacity: 1 << 12, Command: func() *exec.Cmd {
		return selfCommand(childEnv+"=forgot-serve", "KNIT_SHM_TEST_DEPTH="+strconv.Itoa(depth+1))
	}})
	if err != nil {
		fmt.Println("refused:", err)
		return nil
	}
	ws.Close()
	fmt.Println("started")
	return nil
}

// A worker's stdout reaches the parent's, as its stderr does.
func TestWorkersStdout(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	c := startChild(t, "workers-print", nil)
	out, err := c.wait(t, 30*time.Second)
	if err != nil || !strings.Contains(out, "hello from the worker") {
		t.Errorf("child: %v; stdout %q, want the worker's line", err, out)
	}
}

// workersPrint starts a worker whose handler prints to its stdout.
func workersPrint() error {
	ws, err := StartWorkers(WorkerConfig{Workers: 1, Capacity: 1 << 12, Command: func() *exec.Cmd {
		return selfCommand(childEnv + "=worker")
	}})
	if err != nil {
		return err
	}
	defer ws.Close()
	_, err = ws.Call(context.Background(), []byte("print:hello from the worker"))
	return err
}

func TestWorkersNilCommand(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("StartWorkers panicked: %v", r)
		}
	}()
	ws, err := StartWorkers(WorkerConfig{Command: func() *exec.Cmd { return nil }})
	if err == nil {
		ws.Close()
		t.Fatal("a Command returning nil was accepted")
	}
	if !strings.Contains(err.Error(), "Command") {
		t.Errorf("error %q does not name WorkerConfig.Command", err)
	}
}

// WorkerConfig.Workers reads as pool.Config.Workers: 0 is GOMAXPROCS
// workers, a negative count an error.
func TestWorkersZeroIsGOMAXPROCS(t *testing.T) {
	if _, err := StartWorkers(WorkerConfig{Workers: -1}); err == nil || !strings.Contains(err.Error(), "Workers") {
		t.Fatalf("Workers -1: %v, want an error naming Workers", err)
	}
	needProcesses(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	ws, err := StartWorkers(WorkerConfig{Capacity: 1 << 12, Command: func() *exec.Cmd { return selfCommand(childEnv + "=worker") }})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if n := len(ws.Pids()); n != 2 {
		t.Fatalf("Workers 0 at GOMAXPROCS 2 started %d workers, want 2", n)
	}
}
