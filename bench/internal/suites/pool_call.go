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
// the two floors in the same rounds: the atomic ping-pong (no handoff
// between threads beats it) and the futex ping-pong (no wake of a parked
// thread beats it). A parked worker pays a wake per call, so its floor is
// the futex row; a spinning worker's is the atomic row.
var poolCallSuite = harness.Suite{
	Name: "pool-call",
	Description: "One Call+Wait round trip (task: x*x+1) to a one-worker knit pool, by timer policy " +
		"(default; spinning 50 µs; parked at once), against a worker goroutine answering on a channel, " +
		"with the atomic and futex floors.",
	Unit: "round trip",
	Ref:  refChanRR,
	Rows: func(cfg harness.Config) []harness.Row {
		rows := []harness.Row{
			{Name: refChanRR, Start: startChanRR},
			{Name: "knit Call+Wait, default policy", Start: startKnitRR(pool.Config{})},
			{Name: "knit Call+Wait, spinning worker (50µs)", Start: startKnitRR(pool.Config{Park: knit.Park{Spin: 50 * time.Microsecond}})},
			{Name: "knit Call+Wait, parked worker", Start: startKnitRR(pool.Config{Park: knit.Park{Spin: knit.NoSpin}})},
			{Name: refAtomic, Start: func(cfg harness.Config) (harness.Bench, error) {
				return startAtomicPingPong(cfg, 1), nil
			}},
		}
		return append(rows, futexRows()...)
	},
}

const refChanRR = "chan request/response worker"

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
