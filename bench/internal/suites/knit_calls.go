package suites

import (
	"context"
	"fmt"

	"github.com/knit-go/knit/pool"
)

// knitCalls is the knit pool as a worker the suites' transports can
// drive: a pool, one typed task on it, and the futures of the calls in
// flight, waited for in the order they were made. It is the typeEcho
// (In == Out) and the payloadWorker (Out == uint64) of the knit rows.
//
// The pool is the caller's to choose (worker count, timer policy); the
// task's function is the worker's side of the transport.
type knitCalls[In, Out any] struct {
	p          *pool.Pool
	t          *pool.Task[In, Out]
	fs         []pool.Future[Out]
	head, tail int // calls made, calls waited for, since the last drain
}

// startKnitCalls starts a pool under cfg with a task running fn, able to
// hold inflight calls outstanding.
func startKnitCalls[In, Out any](cfg pool.Config, inflight int, fn func(In) Out) *knitCalls[In, Out] {
	p := pool.New(cfg)
	return &knitCalls[In, Out]{p: p, t: pool.NewTask(p, fn), fs: make([]pool.Future[Out], inflight)}
}

func (k *knitCalls[In, Out]) send(v In) error {
	if k.head == len(k.fs) {
		return fmt.Errorf("knit calls: more than %d calls in flight", len(k.fs))
	}
	k.fs[k.head] = k.t.Call(v)
	k.head++
	return nil
}

func (k *knitCalls[In, Out]) recv() (Out, error) {
	if k.tail == k.head {
		var zero Out
		return zero, fmt.Errorf("knit calls: recv with no call in flight")
	}
	v, err := k.fs[k.tail].Wait(context.Background())
	k.fs[k.tail] = pool.Future[Out]{}
	k.tail++
	if k.tail == k.head {
		k.head, k.tail = 0, 0
	}
	return v, err
}

func (k *knitCalls[In, Out]) close() error {
	k.p.Close()
	return nil
}

// knitWorkers names a worker count: "1 worker", "4 workers".
func knitWorkers(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}
