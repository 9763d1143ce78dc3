package shm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// Process workers: a parent starts N copies of a program as children and
// calls a handler in them over shared-memory rings, one request ring and
// one response ring per child, in a region of its own passed as fd 3 (or
// the next free ExtraFiles slot). The child finds the region through an
// environment variable and serves requests one at a time.
//
// Each message starts with an 8-byte call id: a child answers with the
// id of the request, so the parent can drop a late answer to a call whose
// context ended. A child that dies fails its in-flight call with
// ErrWorkerDied (the reaper wakes the call as soon as it has the exit
// status) and is restarted by the next call that picks its slot, after a
// back-off that grows with each death in a row.

// workerEnv carries "fd:respOffset:spinNs" to a child.
const workerEnv = "KNIT_SHM_WORKER"

// callHeader is the call id in front of every request and response; the
// top bit of a response's id marks an error text in place of a result.
const (
	callHeader = 8
	errBit     = 1 << 63
)

// Errors of Workers.
var (
	// ErrWorkerDied: the child process serving a call exited before it
	// answered. The child is restarted at its next use.
	ErrWorkerDied = errors.New("shm: worker process died")
	// ErrCrashLoop: a worker died five times in a row without answering
	// a call, so calls that pick it fail at once, without starting a
	// child, until its back-off (doubling up to 2 s) ends; then one
	// restart is tried. The error names the last exit status.
	ErrCrashLoop = errors.New("shm: worker keeps dying")
	// ErrOutcomeUnknown: a call's ctx ended after its request was sent,
	// so the handler may have run, may be running, or may yet run; its
	// answer is dropped. Call's error matches it and the ctx's error
	// (context.Canceled or context.DeadlineExceeded) both. A ctx error
	// without it means the request was never sent.
	ErrOutcomeUnknown = errors.New("shm: request sent, outcome unknown")
)

// Restart policy: the first restart after a death is immediate (one
// crash, such as a handler that panics on one request, costs one
// fork/exec); each further death in a row doubles the wait, from
// restartBackoffMin up to restartBackoffMax, and from the crashLimit-th
// the calls that pick the slot fail with ErrCrashLoop instead of waiting.
// A call answered resets the count. A command that exits at once
// therefore costs crashLimit starts and then about one every
// restartBackoffMax, not one per call.
const (
	crashLimit        = 5
	restartBackoffMin = 10 * time.Millisecond
	restartBackoffMax = 2 * time.Second
)

// restartBackoff is the wait before the restart that follows the
// deaths-th death in a row.
func restartBackoff(deaths int) time.Duration {
	if deaths <= 1 {
		return 0
	}
	d := restartBackoffMin << min(deaths-2, 20)
	return min(d, restartBackoffMax)
}

// serving is set while ServeIfChild serves: StartWorkers refuses to run
// inside a worker.
var serving atomic.Bool

// WorkerConfig configures StartWorkers. The zero value is
// runtime.GOMAXPROCS(0) workers with 1 MiB rings, re-executing this
// program, as pool.Config's zero value is GOMAXPROCS worker goroutines.
type WorkerConfig struct {
	// Workers is the number of child processes: 0 means
	// runtime.GOMAXPROCS(0) at StartWorkers, as pool.Config.Workers
	// does; a negative number is an error. Each child is a process with
	// its own Go runtime, started before StartWorkers returns: ask for 1
	// where one is enough.
	Workers int
	// Capacity is each ring's data size in bytes, a power of two; 0
	// means 1 MiB. Requests and responses may be up to Capacity-16 bytes.
	Capacity int
	// Park says how parent and children wait on the rings. Its Spin
	// reads as every knit budget (see knit.DefaultSpin), with
	// Knitting's policy (github.com/mimiMonads/knitting) for zero:
	// knit.DefaultWorkerSpin with one worker (the call's critical path),
	// where a default spins at all, and no spin with two or more (a peer
	// is awake); knit.NoSpin never spins, a positive Spin spins that
	// long. Backend is ignored: the rings sleep on a process-shared
	// futex (see CreateRing).
	Park knit.Park
	// Command builds the command that starts one child, a program that
	// calls ServeIfChild first thing; returning nil is an error. nil
	// re-executes this program (os.Executable) with os.Args[1:].
	// StartWorkers appends the region to ExtraFiles and the worker
	// variable to Env (os.Environ() when nil), and sets Stdout and
	// Stderr to this process's when nil.
	Command func() *exec.Cmd
}

// Workers is a set of child processes serving calls. Call may be used by
// any number of goroutines; each child serves one call at a time. A child
// that dies is restarted by the next call that picks it: at once after a
// single death, then after a wait that doubles from 10 ms with each
// further death in a row; an answered call resets the count.
type Workers struct {
	cfg      WorkerConfig
	spin     time.Duration // the rings' resolved spin budget (0: none)
	maxReq   int
	idle     chan *worker // holds every worker not in a call; capacity Workers
	done     chan struct{}
	restarts atomic.Int64

	mu  sync.Mutex // guards all and serialises (re)starts against Close
	all []*worker  // the current worker of each slot

	closeOnce sync.Once
	closeErr  error
}

type worker struct {
	slot      int
	region    *Region
	req, resp *Ring // parent ends: producer of req, consumer of resp
	cmd       *exec.Cmd
	pid       int
	exited    chan struct{} // closed once the child is reaped; waitErr is then set
	waitErr   error
	nextID    uint64 // last call id sent
	broken    bool   // died or broke protocol: restart before use

	// The slot's restart history, carried to each replacement: deaths
	// in a row without an answered call, when the last was seen, and
	// what it was.
	deaths    int
	diedAt    time.Time
	lastDeath error
}

// StartWorkers starts cfg.Workers children and returns once all are
// started (not necessarily attached: calls queue in the rings meanwhile).
// In a worker process it returns an error: a program that started workers
// before calling ServeIfChild would otherwise start copies of itself
// without end.
func StartWorkers(cfg WorkerConfig) (*Workers, error) {
	if serving.Load() || os.Getenv(workerEnv) != "" {
		// Without this a program that forgot ServeIfChild would start N
		// copies of itself per level, each starting N more.
		return nil, errors.New("shm: StartWorkers called in a worker process: call ServeIfChild first thing in main, and start workers only in the parent")
	}
	switch {
	case cfg.Workers == 0:
		cfg.Workers = runtime.GOMAXPROCS(0)
	case cfg.Workers < 0:
		return nil, fmt.Errorf("shm: StartWorkers: Workers is %d; want 0 (GOMAXPROCS) or more", cfg.Workers)
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 1 << 20
	}
	if cfg.Capacity < 2*MinCapacity || cfg.Capacity > MaxCapacity || cfg.Capacity&(cfg.Capacity-1) != 0 {
		return nil, fmt.Errorf("shm: StartWorkers: capacity %d is not a power of two in [%d, %d]", cfg.Capacity, 2*MinCapacity, MaxCapacity)
	}
	ws := &Workers{
		cfg:    cfg,
		spin:   workersSpin(cfg.Park.Spin, cfg.Workers),
		maxReq: cfg.Capacity - recordHeader - callHeader,
		idle:   make(chan *worker, cfg.Workers),
		done:   make(chan struct{}),
		all:    make([]*worker, cfg.Workers),
	}
	for i := range cfg.Workers {
		w, err := ws.spawn(i)
		if err != nil {
			ws.Close()
			return nil, err
		}
		ws.all[i] = w
		ws.idle <- w
	}
	return ws, nil
}

// workersSpin resolves WorkerConfig.Park.Spin for a set of workers:
// Knitting's policy, a zero budget spins (knit.DefaultWorkerSpin, where
// a default spins at all) only for a single worker.
func workersSpin(spin time.Duration, workers int) time.Duration {
	if spin == 0 && workers > 1 {
		return 0 // a peer is awake: sleep at once, as Knitting's pools do
	}
	return spinpolicy.Resolve(spin, knit.DefaultWorkerSpin)
}

func (ws *Workers) command() (*exec.Cmd, error) {
	if ws.cfg.Command != nil {
		cmd := ws.cfg.Command()
		if cmd == nil {
			return nil, errors.New("shm: WorkerConfig.Command returned a nil *exec.Cmd")
		}
		return cmd, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, os.Args[1:]...), nil
}

// spawn starts one child with a fresh region. Called with ws.mu held or
// before ws is shared.
func (ws *Workers) spawn(slot int) (*worker, error) {
	c := ws.cfg.Capacity
	region, err := Create("worker-"+strconv.Itoa(slot), 2*RingSize(c))
	if err != nil {
		return nil, err
	}
	// ws.spin is resolved: pass 0 on as NoSpin, not as "the default",
	// which the rings and the child would resolve again.
	spin := ws.spin
	if spin == 0 {
		spin = knit.NoSpin
	}
	park := knit.Park{Spin: spin}
	w := &worker{slot: slot, region: region, exited: make(chan struct{})}
	if w.req, err = CreateRing(region, 0, c, RoleProducer, park); err == nil {
		w.resp, err = CreateRing(region, RingSize(c), c, RoleConsumer, park)
	}
	if err == nil {
		w.cmd, err = ws.command()
	}
	if err != nil {
		region.Close()
		return nil, err
	}
	cmd := w.cmd
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, region.File())
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d:%d:%d", workerEnv, fd, RingSize(c), int64(spin)))
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		region.Close()
		return nil, fmt.Errorf("shm: starting worker: %w", err)
	}
	w.pid = cmd.Process.Pid
	// Watch the pid we started, so a child that dies before it attaches
	// (and writes its pid in the header) is noticed too.
	w.req.setPeer(w.pid)
	w.resp.setPeer(w.pid)
	go func() {
		w.waitErr = cmd.Wait()
		// Wake a call sleeping on the child now: it would otherwise
		// notice only when its sleep slice runs out and it polls.
		w.req.peerExited()
		w.resp.peerExited()
		close(w.exited)
	}()
	return w, nil
}

func (w *worker) hasExited() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// retire stops w's child (SIGKILL if it has not exited within grace),
// reaps it and unmaps its region.
func (w *worker) retire(grace time.Duration) {
	w.req.Close()
	w.resp.Close()
	t := time.NewTimer(grace)
	select {
	case <-w.exited:
	case <-t.C:
		w.cmd.Process.Kill()
		<-w.exited
	}
	t.Stop()
	w.region.Close()
}

// respawn replaces the worker in w's slot with a new child, after the
// slot's back-off: it fails with ErrCrashLoop while a slot that keeps
// dying backs off, and with ctx.Err() if ctx ends first.
func (ws *Workers) respawn(ctx context.Context, w *worker) (*worker, error) {
	if w.diedAt.IsZero() {
		w.died(w.exitErr())
	}
	wait := time.Until(w.diedAt.Add(restartBackoff(w.deaths)))
	if w.deaths >= crashLimit && wait > 0 {
		return w, fmt.Errorf("%w: worker %d died %d times in a row without answering a call (last: %v); next restart in %v",
			ErrCrashLoop, w.slot, w.deaths, w.lastDeath, wait.Round(time.Millisecond))
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return w, ctx.Err()
		case <-ws.done:
			return w, ErrClosed
		}
	}
	w.retire(0)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	select {
	case <-ws.done:
		return w, ErrClosed
	default:
	}
	nw, err := ws.spawn(w.slot)
	if err != nil {
		// A start that fails counts as a death: a command that cannot
		// start backs off like one that exits at once.
		w.died(err)
		return w, err
	}
	nw.deaths, nw.lastDeath = w.deaths, w.lastDeath
	ws.all[w.slot] = nw
	ws.restarts.Add(1)
	return nw, nil
}

// exitErr describes how w's child ended, once it has been reaped.
func (w *worker) exitErr() error {
	if !w.hasExited() {
		return fmt.Errorf("pid %d broke the protocol", w.pid)
	}
	if w.waitErr == nil {
		return fmt.Errorf("pid %d exited with status 0", w.pid)
	}
	return fmt.Errorf("pid %d: %w", w.pid, w.waitErr)
}

// Call sends req to an idle child, waits for the handler's response and
// returns a copy of it. It fails with ErrWorkerDied if the child dies
// (ErrCorrupt if it breaks the protocol; either way it is restarted at
// its next use), ErrCrashLoop while a child that keeps dying backs off,
// ErrTooLarge for a request over Capacity-16 bytes or a response too
// large for the ring, and ErrClosed after Close.
//
// When ctx ends, the error says whether the request was sent:
//   - ctx.Err() alone: it was not. A ctx already done when Call starts
//     does nothing and returns ctx.Err(); so does one that ends while
//     the call waits for an idle child or for room in the ring.
//   - an error matching both ErrOutcomeUnknown and ctx.Err(): it was,
//     and the handler may or may not run to completion. The child
//     stays in service and its late answer is dropped.
func (ws *Workers) Call(ctx context.Context, req []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req) > ws.maxReq {
		return nil, fmt.Errorf("%w: %d-byte request, at most %d", ErrTooLarge, len(req), ws.maxReq)
	}
	var w *worker
	select {
	case w = <-ws.idle:
	case <-ws.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { ws.idle <- w }()
	select {
	case <-ws.done:
		return nil, ErrClosed
	default:
	}
	// The select picks at random among ready cases: a ctx that ended
	// while a worker was idle may have lost to it.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if w.broken || w.hasExited() {
		var err error
		if w, err = ws.respawn(ctx, w); err != nil {
			if errors.Is(err, ErrCrashLoop) || errors.Is(err, ctx.Err()) || errors.Is(err, ErrClosed) {
				return nil, err
			}
			return nil, fmt.Errorf("shm: restarting worker: %w", err)
		}
	}
	out, err := w.call(ctx, req)
	if err == nil {
		w.deaths = 0
		return out, nil
	}
	if errors.Is(err, ctx.Err()) || errors.Is(err, ErrTooLarge) {
		return out, err
	}
	return nil, ws.lost(w, err)
}

// lost takes w out of service after its call failed with err, for
// anything but the call's ctx or a response too large: the child died
// or broke the protocol, and is restarted at its next use. It counts
// the death and returns the call's error (ErrClosed once Close has
// begun, whatever err was).
func (ws *Workers) lost(w *worker, err error) error {
	select {
	case <-ws.done:
		return ErrClosed
	default:
	}
	w.broken = true
	if errors.Is(err, ErrCorrupt) {
		w.died(fmt.Errorf("pid %d: %w", w.pid, err))
		return fmt.Errorf("shm: worker pid %d: %w", w.pid, err)
	}
	// ErrPeerDead, or ErrClosed from a child on its way out: give the
	// reaper a moment for the exit status.
	t := time.NewTimer(time.Second)
	select {
	case <-w.exited:
	case <-t.C:
	}
	t.Stop()
	w.died(w.exitErr())
	if w.hasExited() {
		return fmt.Errorf("%w: pid %d: %v", ErrWorkerDied, w.pid, w.waitErr)
	}
	return fmt.Errorf("%w: pid %d: %v", ErrWorkerDied, w.pid, err)
}

// died counts a death of the slot's child (or a failed start) in its
// restart history, with cause as the last one.
func (w *worker) died(cause error) {
	w.deaths++
	w.diedAt = time.Now()
	w.lastDeath = cause
}

func (w *worker) call(ctx context.Context, req []byte) ([]byte, error) {
	w.nextID++
	id := w.nextID
	buf, err := w.req.Reserve(ctx, callHeader+len(req))
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint64(buf, id)
	copy(buf[callHeader:], req)
	if err := w.req.Commit(len(buf)); err != nil {
		return nil, err
	}
	// Sent: from here on, a ctx that ends leaves the outcome unknown.
	for {
		msg, err := w.resp.Peek(ctx)
		if err != nil {
			return nil, sentErr(ctx, err)
		}
		if len(msg) < callHeader {
			return nil, fmt.Errorf("%w: %d-byte response", ErrCorrupt, len(msg))
		}
		h := binary.LittleEndian.Uint64(msg)
		got := h &^ errBit
		if got < id {
			// The answer to an earlier call whose context ended.
			if err := w.resp.Release(); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, sentErr(ctx, err)
			}
			continue
		}
		if got != id {
			return nil, fmt.Errorf("%w: response to call %d, expected %d", ErrCorrupt, got, id)
		}
		out := make([]byte, len(msg)-callHeader)
		copy(out, msg[callHeader:])
		if err := w.resp.Release(); err != nil {
			return nil, err
		}
		if h&errBit != 0 {
			return nil, fmt.Errorf("%w: worker pid %d: %s", ErrTooLarge, w.pid, out)
		}
		return out, nil
	}
}

// sentErr is err, from a call whose request was sent, marked
// ErrOutcomeUnknown if it is ctx's error.
func sentErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return err
}

// Pids returns the process ids of the current children, by slot.
func (ws *Workers) Pids() []int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	pids := make([]int, len(ws.all))
	for i, w := range ws.all {
		if w != nil {
			pids[i] = w.pid
		}
	}
	return pids
}

// Restarts is how many children have been replaced after dying.
func (ws *Workers) Restarts() int { return int(ws.restarts.Load()) }

// Close stops intake (Call returns ErrClosed), fails calls in flight with
// ErrClosed, closes the rings so each child's serve loop ends, waits up
// to 5 s for the children to exit (then kills them), and unmaps the
// regions. It is idempotent.
func (ws *Workers) Close() error {
	ws.closeOnce.Do(func() {
		close(ws.done)
		ws.mu.Lock()
		n := 0
		for _, w := range ws.all {
			if w != nil {
				w.req.Close()
				w.resp.Close()
				n++
			}
		}
		ws.mu.Unlock()
		var wg sync.WaitGroup
		for range n {
			w := <-ws.idle
			wg.Go(func() { w.retire(5 * time.Second) })
		}
		wg.Wait()
	})
	return ws.closeErr
}

// ServeIfChild returns at once unless this process was started by
// StartWorkers; in a worker it serves calls with handler until the parent
// closes the Workers (exit status 0) or dies (exit status 1), and never
// returns. Call it first thing in main (or TestMain). handler gets the
// request in a buffer reused for the next call, and its result is copied
// out before the next call, so neither may be kept. A panic in handler
// kills the worker, as it would any Go program; the parent's call fails
// with ErrWorkerDied.
func ServeIfChild(handler func(req []byte) []byte) {
	spec, ok := os.LookupEnv(workerEnv)
	if !ok {
		return
	}
	os.Unsetenv(workerEnv) // not for the handler's own children
	serving.Store(true)
	if err := serveChild(spec, handler); err != nil {
		fmt.Fprintf(os.Stderr, "shm worker %d: %v\n", os.Getpid(), err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveChild(spec string, handler func([]byte) []byte) error {
	f := strings.Split(spec, ":")
	if len(f) != 3 {
		return fmt.Errorf("bad %s=%q", workerEnv, spec)
	}
	fd, err1 := strconv.ParseUint(f[0], 10, 31)
	off, err2 := strconv.ParseUint(f[1], 10, 31)
	spin, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("bad %s=%q: %w", workerEnv, spec, err)
	}
	region, err := OpenFD(uintptr(fd))
	if err != nil {
		return err
	}
	defer region.Close()
	park := knit.Park{Spin: time.Duration(spin)}
	req, err := AttachRing(region, 0, RoleConsumer, park)
	if err != nil {
		return err
	}
	defer req.Close()
	resp, err := AttachRing(region, int(off), RoleProducer, park)
	if err != nil {
		return err
	}
	defer resp.Close()
	buf := make([]byte, req.MaxMessage())
	ctx := context.Background()
	for {
		n, err := req.Recv(ctx, buf)
		if errors.Is(err, ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		if n < callHeader {
			return fmt.Errorf("%w: %d-byte request", ErrCorrupt, n)
		}
		id := binary.LittleEndian.Uint64(buf)
		out := handler(buf[callHeader:n:n])
		if len(out) > resp.MaxMessage()-callHeader {
			id |= errBit
			out = fmt.Appendf(nil, "%d-byte response, at most %d", len(out), resp.MaxMessage()-callHeader)
		}
		dst, err := resp.Reserve(ctx, callHeader+len(out))
		if errors.Is(err, ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(dst, id)
		copy(dst[callHeader:], out)
		if err := resp.Commit(len(dst)); err != nil {
			return err
		}
	}
}
