package httpiso

import (
	"context"
	"sync"

	"github.com/panjf2000/ants/v2"
)

// antsExec submits heavy work to an ants pool of N goroutines and waits
// for it: the most used Go goroutine pool, as the peer for knit. Submit
// blocks while all N are busy, so like the semaphore it bounds the heavy
// work to N Ps, but with a handoff to another goroutine in each direction.
type antsExec struct {
	p     *ants.Pool
	calls sync.Pool // *antsCall, so a call costs no channel allocation
}

type antsCall struct {
	body []byte
	out  Reply
	done chan struct{}
}

func newAnts(n int) (*antsExec, error) {
	p, err := ants.NewPool(n)
	if err != nil {
		return nil, err
	}
	a := &antsExec{p: p}
	a.calls.New = func() any { return &antsCall{done: make(chan struct{}, 1)} }
	return a, nil
}

func (a *antsExec) Bind(w Work) Runner {
	return func(ctx context.Context, body []byte) (Reply, error) {
		c := a.calls.Get().(*antsCall)
		c.body = body
		err := a.p.Submit(func() {
			c.out = w(c.body)
			c.done <- struct{}{}
		})
		if err != nil {
			a.calls.Put(c)
			return Reply{}, err
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			// The task still owns c: leave it to the collector.
			return Reply{}, ctx.Err()
		}
		out := c.out
		c.body, c.out = nil, Reply{}
		a.calls.Put(c)
		return out, nil
	}
}

func (a *antsExec) Close(ctx context.Context) error { return a.p.ReleaseContext(ctx) }
