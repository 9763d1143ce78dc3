package suites

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The pool-call suite is one Call+Wait round trip to a one-worker pool,
// by timer policy, against a channel request/response worker and with
// the floors in the same rounds: the runtime's own two ways to hand a
// parked goroutine something with nothing else (gopark and goready on a
// word; the semaphore released with handoff), the floors of a worker that
// parks between requests; the atomic ping-pong, no handoff between
// threads beats it, the floor of a spinning worker; and the futex
// ping-pong, no wake of a parked thread beats it.
var poolCallSuite = harness.Suite{
	Name: "pool-call",
	Description: "One Call+Wait round trip (task: x*x+1) to a one-worker knit pool, by timer policy " +
		"(default; spinning 50 µs; parked at once), against a worker goroutine answering on a channel, " +
		"with the floors: a worker goroutine answering through two one-word cells, each side parked and readied by " +
		"the runtime's own gopark and goready with nothing else; the same through two runtime semaphores released " +
		"with handoff; the atomic ping-pong; the futex ping-pong.",
	Unit: "round trip",
	Ref:  refChanRR,
	Rows: func(cfg harness.Config) []harness.Row {
		rows := []harness.Row{
			{Name: refChanRR, Start: startChanRR},
			{Name: "knit Call+Wait, default policy", Start: startKnitRR(pool.Config{})},
			{Name: "knit Call+Wait, spinning worker (50µs)", Start: startKnitRR(pool.Config{Park: knit.Park{Spin: 50 * time.Microsecond}})},
			{Name: "knit Call+Wait, parked worker", Start: startKnitRR(pool.Config{Park: knit.Park{Spin: knit.NoSpin}})},
			{Name: limitParkRR, Start: startParkRR},
			{Name: limitSemaRR, Start: startSemaRR},
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
	limitSemaRR = "limit: runtime semaphore with handoff, request and reply"
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

// parkRR is the request/response worker on two parkCells: each side
// parks once and is readied once per round trip.
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

// semaRR is the request/response worker on two runtime semaphores, each
// released with handoff: the releaser gives its P to the side it wakes.
// The values go through atomics, which the race detector sees.
type semaRR struct {
	x, v      atomic.Int64
	req, resp uint32
	done      chan struct{}
}

func startSemaRR(harness.Config) (harness.Bench, error) {
	c := &semaRR{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			semacquire(&c.req)
			x := int(c.x.Load())
			if x == parkRRStop {
				return
			}
			c.v.Store(int64(rrTask(x)))
			semrelease(&c.resp, true, 0)
		}
	}()
	return c, nil
}

func (c *semaRR) Run(n int) error {
	for i := range n {
		x := i & 0xffff
		c.x.Store(int64(x))
		semrelease(&c.req, true, 0)
		semacquire(&c.resp)
		if v := int(c.v.Load()); v != rrTask(x) {
			return fmt.Errorf("semaphore worker: %d, want %d", v, rrTask(x))
		}
	}
	return nil
}

func (c *semaRR) Close() error {
	c.x.Store(parkRRStop)
	semrelease(&c.req, false, 0)
	<-c.done
	return nil
}
