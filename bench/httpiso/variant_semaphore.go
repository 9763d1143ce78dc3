package httpiso

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// semExec bounds how many handlers run heavy work at once, in the handler
// goroutine itself. It is the idiomatic Go way to keep expensive routes
// from taking every P: no handoff, no second goroutine, just a queue of
// parked handlers in front of the work.
type semExec struct {
	sem *semaphore.Weighted
}

func newSemaphore(n int) *semExec { return &semExec{sem: semaphore.NewWeighted(int64(n))} }

func (s *semExec) Bind(w Work) Runner {
	return func(ctx context.Context, body []byte) (Reply, error) {
		if err := s.sem.Acquire(ctx, 1); err != nil {
			return Reply{}, err
		}
		defer s.sem.Release(1)
		return w(body), nil
	}
}

func (s *semExec) Close(context.Context) error { return nil }
