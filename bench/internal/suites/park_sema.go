package suites

import (
	"sync/atomic"
	_ "unsafe" // for go:linkname

	"github.com/knit-go/knit/bench/internal/harness"
)

// The runtime's semaphore, as sync.Mutex and knit's runtime backend use
// it. The runtime pushes both symbols to package sync and marks them "Do
// not remove or change the type signature" (go.dev/issue/67401).

//go:linkname semacquire sync.runtime_Semacquire
func semacquire(addr *uint32)

//go:linkname semrelease sync.runtime_Semrelease
func semrelease(addr *uint32, handoff bool, skipframes int)

// semaPP passes the turn through two semaphores, releasing with handoff:
// the releaser yields its P to the goroutine it woke, which runs at once.
// It is the floor for knit's runtime backend, which adds the Event's
// bookkeeping on top.
type semaPP struct {
	req, resp uint32
	stop      atomic.Bool
	done      chan struct{}
}

func startSemaPingPong(harness.Config) (harness.Bench, error) {
	p := &semaPP{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			semacquire(&p.req)
			if p.stop.Load() {
				return
			}
			semrelease(&p.resp, true, 0)
		}
	}()
	return p, nil
}

func (p *semaPP) Run(n int) error {
	for range n {
		semrelease(&p.req, true, 0)
		semacquire(&p.resp)
	}
	return nil
}

func (p *semaPP) Close() error {
	p.stop.Store(true)
	semrelease(&p.req, false, 0)
	<-p.done
	return nil
}
