// Package pool is a minimal worker pool: a fixed set of worker goroutines
// running typed, allocation-free tasks from bounded per-worker queues, in
// the shape of the Knitting worker-pool library.
//
//	p := pool.New(pool.Config{Workers: 1}) // the zero Config is valid
//	defer p.Close()
//	sq := pool.NewTask(p, func(x int) int { return x * x })
//	v, err := sq.Call(3).Wait(ctx)         // 9, nil
//	err = p.Go(func() { ... })             // fire and forget
//
// # Queues and doorbells
//
// Each worker has its own bounded queue (a knit.MPMC ring, so that its
// owner and thieves can both pop). Submitters pick a queue round-robin,
// push, and ring a doorbell (a knit.Event), which costs one atomic load
// when no worker is parked. A worker that finishes a call completes its
// Future and rings the caller's doorbell, again only if the caller waits.
//
// # Work stealing
//
// A worker takes from its own queue, then steals from the others, then
// parks on a doorbell shared by the pool; every publish rings it once, so
// some parked worker wakes and takes the task wherever it was queued.
// Tasks of very different lengths balance across the workers. With
// Config.NoSteal each worker runs only its own queue and parks on its own
// doorbell, which its submitters ring.
//
// # Timer policy
//
// An idle worker hands its finished result out first, then looks for
// work, then spins or parks: a single worker spins for DefaultSpin before
// it parks, since it is on the request's critical path; larger pools park
// at once. A parked worker sleeps until a doorbell rings, with no polling
// timeout, so a started, unloaded pool uses no CPU. See DefaultSpin for
// the measurements behind the default.
//
// # Panics and shutdown
//
// A task that panics does not take its worker down: a Call's panic comes
// back from Future.Wait as a *PanicError, a Go task's goes to
// Config.PanicHandler. Close stops intake, runs what was accepted, and
// waits for the workers; Shutdown does the same within a context, and on
// expiry abandons what is still queued, failing those futures with
// ErrClosed.
package pool
