package inboxpool

import (
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// ChanPool is Pool built on channels: each worker's inbox is a buffered
// chan func(), which the worker ranges over. Closing a channel while
// another goroutine may send on it panics the sender, so every send
// holds a read lock that Close takes for writing before it closes the
// inboxes. The zero ChanPool is not usable; create one with NewChan.
type ChanPool struct {
	inboxes []chan func()
	next    atomic.Uint64
	mu      sync.RWMutex // read-held by every send; written by Close
	closed  bool         // under mu
	done    sync.WaitGroup
}

// NewChan starts workers goroutines, each with an inbox of queue tasks.
// It panics if workers < 1 or queue < 0.
func NewChan(workers, queue int) *ChanPool {
	if workers < 1 {
		panic("inboxpool: NewChan needs at least one worker")
	}
	p := &ChanPool{}
	for range workers {
		in := make(chan func(), queue)
		p.inboxes = append(p.inboxes, in)
		p.done.Go(func() {
			for f := range in {
				f()
			}
		})
	}
	return p
}

// Go runs f on one of the workers, waiting while that worker's inbox is
// full. After Close it returns knit.ErrClosed and f does not run.
func (p *ChanPool) Go(f func()) error {
	in := p.inboxes[p.next.Add(1)%uint64(len(p.inboxes))]
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return knit.ErrClosed
	}
	in <- f // the workers keep draining until Close, so this completes
	return nil
}

// Close stops intake, lets the workers run every task already queued,
// and returns once they have.
func (p *ChanPool) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for _, in := range p.inboxes {
			close(in)
		}
	}
	p.mu.Unlock()
	p.done.Wait()
}
