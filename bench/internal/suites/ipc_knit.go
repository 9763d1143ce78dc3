package suites

import (
	"context"
	"runtime"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The knit pool's rows in ipc-peers: one worker, like Knitting's default
// of one thread and like the ants and pond rows. An op is the group's
// batch: the caller hands every message over (the task answers v+1),
// then waits for every future in order.
//
// A batch goes out with CallBatch and comes back with WaitAll, as
// Knitting sends the calls of one tick together and awaits them all: one
// queue entry, one doorbell ring, the calls run back to back, and their
// slots go back in bulk. A batch of one is a Call and a Wait. Three timer
// policies, one row each:
//
//	default   pool.Config{}: Knitting's policy as the pool adjusted it
//	          (the single worker spins knit.DefaultWorkerSpin only where
//	          a default spins at all, see knit.DefaultSpin, so on a
//	          2-CPU box it is the parked row)
//	spin 50µs the worker polls 50 µs before it parks, at any GOMAXPROCS
//	parked    Park.Spin < 0: the worker parks at once, every call pays a wake
//
// and, for batches of more than one message, the default policy with a
// Call and a Wait per message: what a caller that does not batch pays,
// on one worker and on a worker per P (beside chan workers of that
// count).
func ipcKnitRows(cfg harness.Config) []harness.Row {
	var rows []harness.Row
	rows = append(rows, ipcRows("knit pool (1 worker, CallBatch)", cfg, startKnitIPC(pool.Config{}, true))...)
	rows = append(rows, ipcRows("knit pool (1 worker, CallBatch, spin 50µs)", cfg,
		startKnitIPC(pool.Config{Park: knit.Park{Spin: 50 * time.Microsecond}}, true))...)
	rows = append(rows, ipcRows("knit pool (1 worker, CallBatch, parked)", cfg, startKnitIPC(pool.Config{Park: knit.Park{Spin: knit.NoSpin}}, true))...)
	for _, r := range ipcRows("knit pool (1 worker, Call per message)", cfg, startKnitIPC(pool.Config{}, false)) {
		if r.Group != ipcGroup(1) { // a batch of one is a Call
			rows = append(rows, r)
		}
	}
	for _, r := range ipcRows(knitIPCWorkersRow, cfg, startKnitIPCPerP(pool.Config{})) {
		if r.Group != ipcGroup(1) {
			rows = append(rows, r)
		}
	}
	return rows
}

// knitIPCWorkersRow is the pool with a worker per P, beside the channel
// workers of the same count (chanWorkersRow): the same calls, shared by
// several workers.
const knitIPCWorkersRow = "knit pool (GOMAXPROCS workers, Call per message)"

type knitIPC struct {
	p     *pool.Pool
	t     *pool.Task[int64, int64]
	fs    []pool.Future[int64]
	batch bool
}

// startKnitIPC starts a one-worker pool under pc; startKnitIPCPerP one
// of GOMAXPROCS workers (read when the row starts), Call per message.
func startKnitIPC(pc pool.Config, batch bool) func(harness.Config, int) (ipcTransport, error) {
	return startKnitIPCWorkers(pc, batch, func() int { return 1 })
}

func startKnitIPCPerP(pc pool.Config) func(harness.Config, int) (ipcTransport, error) {
	return startKnitIPCWorkers(pc, false, func() int { return runtime.GOMAXPROCS(0) })
}

func startKnitIPCWorkers(pc pool.Config, batch bool, workers func() int) func(harness.Config, int) (ipcTransport, error) {
	return func(_ harness.Config, maxBatch int) (ipcTransport, error) {
		pc.Workers = workers()
		pc.QueueSize = max(pc.QueueSize, maxBatch) // a batch never waits for room
		p := pool.New(pc)
		return &knitIPC{
			p:     p,
			t:     pool.NewTask(p, func(v int64) int64 { return v + 1 }),
			fs:    make([]pool.Future[int64], maxBatch),
			batch: batch,
		}, nil
	}
}

func (k *knitIPC) roundTrip(msgs, replies []int64) error {
	fs := k.fs[:len(msgs)]
	ctx := context.Background()
	if k.batch && len(msgs) > 1 {
		k.t.CallBatch(msgs, fs)
		_, err := pool.WaitAll(ctx, fs, replies)
		return err
	}
	for i, m := range msgs {
		fs[i] = k.t.Call(m)
	}
	for i := range fs {
		v, err := fs[i].Wait(ctx)
		if err != nil {
			return err
		}
		replies[i] = v
	}
	return nil
}

func (k *knitIPC) close() error {
	k.p.Close()
	return nil
}
