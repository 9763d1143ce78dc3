package suites

import (
	"context"
	"fmt"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The pool-call suite is one Call+Wait round trip to a one-worker pool,
// by timer policy, against a channel request/response worker and with
// the floors in the same rounds: the bare park and ready (no handoff to a
// parked goroutine beats it), the atomic ping-pong (no handoff between
// threads beats it) and the futex ping-pong (no wake of a parked thread
// beats it). A parked worker pays a park and a ready per call, so its
// floor is the park row; a spinning worker's is the atomic row; a worker
// locked to its thread parks in the kernel, on the futex row's path.
var poolCallSuite = harness.Suite{
	Name: "pool-call",
	Description: "One Call+Wait round trip (task: x*x+1) to a one-worker knit pool, by timer policy " +
		"(default; spinning 50 µs; parked at once), against a worker goroutine answering on a channel, " +
		"with the floors: a worker goroutine answering through two one-word cells, each side parked and readied by " +
		"the runtime's own gopark and goready with nothing else; the atomic ping-pong; the futex ping-pong.",
	Unit: "round trip",
	Ref:  refChanRR,
	Rows: func(cfg harness.Config) []harness.Row {
		rows := []harness.Row{
			{Name: refChanRR, Start: startChanRR},
			{Name: "knit Call+Wait, default policy", Start: startKnitRR(pool.Config{})},
			{Name: "knit Call+Wait, spinning worker (50µs)", Start: startKnitRR(pool.Config{Park: knit.Park{Spin: 50 * time.Microsecond}})},
			{Name: "knit Call+Wait, parked worker", Start: startKnitRR(pool.Config{Park: knit.Park{Spin: knit.NoSpin}})},
			{Name: limitParkRR, Start: startParkRR},
			{Name: refAtomic, Start: func(cfg harness.Config) (harness.Bench, error) {
				return startAtomicPingPong(cfg, 1), nil
			}},
		}
		return append(rows, futexRows()...)
	},
}

const (
	refChanRR   = "chan request/response worker"
	limitParkRR = "limit: bare park and ready, two one-word cells"
)

func rrTask(x int) int { return x*x + 1 }

type knitRR struct {
	p *pool.Pool
	t *pool.Task[int, int]
}

func startKnitRR(pc pool.Config) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		pc.Workers = 1
		p := pool.New(pc)
		return &knitRR{p: p, t: pool.NewTask(p, rrTask)}, nil
	}
}

func (k *knitRR) Run(n int) error {
	ctx := context.Background()
	for i := range n {
		x := i & 0xffff
		v, err := k.t.Call(x).Wait(ctx)
		if err != nil {
			return err
		}
		if v != rrTask(x) {
			return fmt.Errorf("call(%d) = %d, want %d", x, v, rrTask(x))
		}
	}
	return nil
}

func (k *knitRR) Close() error {
	k.p.Close()
	return nil
}

// chanRR is the idiomatic request/response worker: a goroutine reading a
// request channel and answering on a response channel.
type chanRR struct{ req, resp chan int }

func startChanRR(harness.Config) (harness.Bench, error) {
	c := &chanRR{req: make(chan int, 1), resp: make(chan int, 1)}
	go func() {
		for x := range c.req {
			c.resp <- rrTask(x)
		}
		close(c.resp)
	}()
	return c, nil
}

func (c *chanRR) Run(n int) error {
	for i := range n {
		x := i & 0xffff
		c.req <- x
		if v := <-c.resp; v != rrTask(x) {
			return fmt.Errorf("chan worker: %d, want %d", v, rrTask(x))
		}
	}
	return nil
}

func (c *chanRR) Close() error {
	close(c.req)
	for range c.resp {
	}
	return nil
}

// parkRR is the request/response worker on two parkCells: the round
// trip's floor for a worker that parks between requests.
type parkRR struct {
	req, resp parkCell[int]
	done      chan struct{}
}

// parkRRStop is the request that ends the worker; real requests are
// masked to 16 bits.
const parkRRStop = -1

func startParkRR(harness.Config) (harness.Bench, error) {
	c := &parkRR{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			x := c.req.take()
			if x == parkRRStop {
				return
			}
			c.resp.put(rrTask(x))
		}
	}()
	return c, nil
}

func (c *parkRR) Run(n int) error {
	for i := range n {
		x := i & 0xffff
		c.req.put(x)
		if v := c.resp.take(); v != rrTask(x) {
			return fmt.Errorf("park worker: %d, want %d", v, rrTask(x))
		}
	}
	return nil
}

func (c *parkRR) Close() error {
	c.req.put(parkRRStop)
	<-c.done
	return nil
}
