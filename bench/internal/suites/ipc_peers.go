package suites

import (
	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"

	"github.com/knit-go/knit/bench/internal/harness"
)

// Peer pools run at one worker, like Knitting's default of one thread:
// the question is the cost of a handoff, not parallel speedup. Each task
// is a closure that answers on a reply channel, which is how these pools
// are used; the closure's allocation is part of what they cost.

type antsIPC struct {
	p    *ants.Pool
	resp chan int64
}

func startAntsIPC(_ harness.Config, max int) (ipcTransport, error) {
	p, err := ants.NewPool(1)
	if err != nil {
		return nil, err
	}
	return &antsIPC{p: p, resp: make(chan int64, max)}, nil
}

func (a *antsIPC) roundTrip(msgs, replies []int64) error {
	for _, m := range msgs {
		if err := a.p.Submit(func() { a.resp <- m + 1 }); err != nil {
			return err
		}
	}
	for j := range replies {
		replies[j] = <-a.resp
	}
	return nil
}

func (a *antsIPC) close() error {
	a.p.Release()
	return nil
}

type pondIPC struct {
	p    pond.Pool
	resp chan int64
}

func startPondIPC(_ harness.Config, max int) (ipcTransport, error) {
	return &pondIPC{p: pond.NewPool(1), resp: make(chan int64, max)}, nil
}

func (p *pondIPC) roundTrip(msgs, replies []int64) error {
	for _, m := range msgs {
		if err := p.p.Go(func() { p.resp <- m + 1 }); err != nil {
			return err
		}
	}
	for j := range replies {
		replies[j] = <-p.resp
	}
	return nil
}

func (p *pondIPC) close() error {
	p.p.StopAndWait()
	return nil
}
