package knit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
)

// serve is what a pool library writes once for any knit ring: n workers
// that run the jobs of whatever Consumer its caller hands it (an MPMC, an
// MPSC for one worker, a Mailbox when submitters must never wait, a
// Subscription, or a double of the caller's own), until the ring is
// closed and drained or ctx ends.
func serve(ctx context.Context, jobs knit.Consumer[func()], n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for job := range knit.All(ctx, jobs) {
				job()
			}
		})
	}
	return &wg
}

// submit is the library's other half: it takes any Producer, and tells a
// full ring (try again later, or wait) from a closed one (stop).
func submit(q knit.Producer[func()], job func()) error {
	err := q.TryPush(job)
	if err == knit.ErrFull {
		return q.Push(context.Background(), job)
	}
	return err
}

// A library that accepts "any knit ring" takes the side it uses, Producer
// or Consumer, or a Queue for both.
func ExampleQueue() {
	var q knit.Queue[func()] = knit.NewMPMC[func()](4, knit.Park{}) // or NewMPSC, NewSPMC, NewMailbox
	var sum atomic.Int64
	done := serve(context.Background(), q, 3)
	for i := range 10 {
		if err := submit(q, func() { sum.Add(int64(i)) }); err != nil {
			fmt.Println(err)
		}
	}
	q.Close() // the workers drain what is queued, then their ranges end
	done.Wait()
	fmt.Println(sum.Load(), submit(q, func() {}))
	// Output: 45 knit: closed
}
