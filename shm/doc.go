// Package shm moves byte messages between processes through shared
// memory, and runs a handler in child processes over it.
//
// Two levels:
//
//   - Workers: StartWorkers starts N copies of this program (or another)
//     as children, and Workers.Call runs a request through the handler
//     the children passed to ServeIfChild, which must be the first call in
//     main. A child that dies fails its call with ErrWorkerDied and is
//     restarted, with a back-off when it keeps dying (ErrCrashLoop). The
//     repository's examples/shmworkers is a complete program.
//   - Regions and rings: Create maps a region of memory backed by a
//     descriptor that a child inherits through exec.Cmd.ExtraFiles and maps
//     with OpenFD or OpenFile. CreateRing lays out a single-producer
//     single-consumer ring of messages in it, and AttachRing, usually in
//     the other process, takes the other end. Send and Recv copy a message
//     in and out; Reserve/Commit and Peek/Release work in place, without a
//     copy.
//
// # Trust
//
// The peer is another process and is not trusted: a corrupt or hostile
// peer can make calls fail (ErrCorrupt, ErrClosed, a stall until the
// caller's context ends) but cannot make this side panic, read or write
// outside the ring, or loop without bound. Every index and length read
// from shared memory is checked before it is used. On Linux a region is a
// memfd sealed against shrinking, so the peer cannot truncate it under the
// mapping (which would raise SIGBUS); macOS has no seals, and there a peer
// holding the descriptor could truncate the file.
//
// # Blocking
//
// A blocking call spins for its end's spin budget, then sleeps in the
// kernel on a futex word in the region: the only wait another process
// can end. The other side wakes it only when it is asleep, so a busy ring
// makes no system calls. Like any blocking system call, the sleep holds
// its OS thread. A sleeping call checks the peer's process every 50 ms,
// so it returns ErrPeerDead within about that long of the peer's death
// (at once for Workers, which reap their children). Builds with the
// knit_futex_fallback tag poll instead, sleeping 50 µs to 1 ms at a time.
//
// The budget is the Spin of the knit.Park given to CreateRing or
// AttachRing, or WorkerConfig.Park for Workers, read as every knit budget
// is (see knit.DefaultSpin): zero is knit.DefaultWorkerSpin where a
// default spins at all (for Workers, only with one worker), knit.NoSpin
// never spins. Park.Backend, which picks where a goroutine sleeps within
// one process, has no meaning across processes and is ignored.
//
// A call whose context is already done does nothing and returns
// ctx.Err(), even when it would not have had to wait: Send sends nothing,
// Recv and Peek take nothing, Reserve reserves nothing, and Workers.Call
// sends no request.
//
// Closing a Region while other goroutines are inside ring calls on it is
// safe: they return errors matching ErrClosed, and the memory is unmapped
// after the last has left.
//
// # Platforms
//
// Linux and macOS (amd64, arm64, and on Linux any GOARCH). Elsewhere
// Create, OpenFile and OpenFD return an error wrapping
// errors.ErrUnsupported; the package still builds.
package shm
