// Package pool is a worker pool: a set of worker goroutines (Resize grows
// or shrinks it) running tasks from bounded per-worker queues, in the
// shape of Knitting's pool (github.com/mimiMonads/knitting). It serves
// two kinds of caller.
//
// Hot paths reuse one typed function: a Task's Call and its Future's Wait
// allocate nothing in the steady state, and Go runs a func() with no
// result.
//
//	p := pool.New(pool.Config{})           // GOMAXPROCS workers
//	defer p.Close()
//	sq := pool.NewTask(p, func(x int) int { return x * x })
//	v, err := sq.Call(3).Wait(ctx)         // 9, nil
//	f := sq.CallContext(ctx, 3)            // gives up if ctx ends while the queues are full
//	sq.CallBatch(xs, fs)                   // many calls, queued together
//	n, err := pool.WaitAll(ctx, fs, vs)    // and all their results
//	err = p.Go(func() { ... })             // fire and forget
//
// Everything else has closures, errors and contexts:
//
//	f := pool.Submit(ctx, p, func() (Page, error) { return fetch(url) })
//	page, err := f.Wait(ctx)               // or select on f.Done()
//
//	g, gctx := pool.NewGroup(ctx, p)       // errgroup.WithContext's contract
//	g.SetLimit(8)                          // and errgroup's SetLimit (TryGo too)
//	for _, u := range urls {
//		g.Go(func() error { return check(gctx, u) })
//	}
//	err = g.Wait()                         // the first error
//
//	sizes, err := pool.Map(ctx, p, files, statSize) // in input order
//	sizes, err = pool.MapSeq(ctx, p, fileSeq, statSize) // over an iter.Seq
//	for size, err := range pool.MapStream(ctx, p, fileSeq, statSize) { ... } // as they come, in order
//
// NewGroupCollect makes a group that runs every task and returns every
// error, joined. Resize grows or shrinks the workers while tasks run.
//
// Submit costs one allocation at most (the caller's closure): its result
// slot is recycled like a Task's. Group and Map queue their work on the
// pool, so they run on its workers, never on new goroutines, and never
// hold more than the queues do. Errors come back unchanged, a panic as a
// *PanicError with its stack, a refused call as ErrClosed, a call given up
// because its context ended as the context's error.
//
// # Contexts
//
// Every call that takes a ctx (GoContext, Task.CallContext, Submit, a
// Group's tasks through its context, Map, MapSeq and MapStream) follows
// one rule. A ctx already done when the call is made queues nothing and
// returns ctx.Err(). While the queues are full the call waits for room
// only until ctx ends, and then gives up with ctx.Err(). And a task still
// queued when its ctx ends does not run: the worker that reaches it skips
// it, its result (the Future's Wait, the Group's or the Map's error) is
// ctx.Err(), and Stats counts it in SkippedCtx, never in Completed (a
// group's task skipped because the group failed counts in SkippedGroup).
// A task that a worker took before its ctx ended runs to the end; the
// ctx is for the task's own code to watch. Go, Task.Call and CallBatch
// take no ctx: what they queue runs.
//
// # Queues and doorbells
//
// Each worker has its own bounded queue (a knit.MPMC ring, so that its
// owner and thieves can both pop). Submitters pick a queue round-robin,
// push, and ring a doorbell (a knit.Event), which costs one atomic load
// when no worker is parked. A worker that finishes a call completes its
// Future and rings the caller's doorbell, again only if the caller waits.
//
// A Task's calls made one after another travel together, as CallBatch's
// do: Call appends to the task's open stream, which is queued, and a
// doorbell rung, only when it needs a runner, and the runners (one
// worker's, or up to one per worker) run the stream's calls as they
// come, completing each Future as its call returns (see Task.Call).
//
// # Work stealing
//
// A worker takes from its own queue, then steals from the others, then
// parks on its own doorbell; a publish rings one parked worker per task,
// which wakes and takes the task wherever it was queued. Tasks of very
// different lengths balance across the workers. With Config.NoSteal each
// worker runs only its own queue, and a publish rings the worker whose
// queue took the task. A pool of one worker does not steal, except from
// the queues of workers Resize removed, until they have left.
//
// # Timer policy
//
// An idle worker hands its finished result out first, then looks for
// work, then spins or parks: a single worker (Config.Workers == 1, or the
// zero Config at GOMAXPROCS 1) spins for knit.DefaultWorkerSpin before it
// parks, since it is on the request's critical path; larger pools park at
// once. Config.Park changes the budget and where a worker sleeps, and
// knit.DefaultSpin's doc states when a default spins at all. A parked
// worker sleeps until a doorbell rings, with no polling timeout, so a
// started, unloaded pool uses no CPU.
//
// # Tasks that wait on their own pool
//
// A task may wait on the pool it runs on: Future.Wait, Group.Wait, Map, or
// a Go, Call or Submit that finds the queues full. Parking the worker
// there could deadlock the pool (with one worker, always), so the waiting
// worker helps instead: it runs queued tasks, as a work-stealing pool
// does, until what it waits for is done, and parks only when there is
// nothing to run, woken by the result or by new work. Map runs its own
// elements on the waiting worker first. A task run this way sits on the
// waiting task's stack: it must not itself wait for that task to finish.
// Close and Shutdown called from a task would wait for themselves; they
// panic instead.
//
// # Panics and shutdown
//
// A task that panics does not take its worker down: a Call's or Submit's
// panic comes back from Future.Wait as a *PanicError, a group's or Map's
// from their Wait, a Go task's goes to Config.PanicHandler. Close stops
// intake, runs what was accepted, and waits for the workers; Shutdown
// does the same within a context, and on expiry abandons what is still
// queued, failing those calls with ErrClosed.
package pool
