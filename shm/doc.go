// Package shm moves byte messages between processes through shared
// memory: a mapped region passed to a child as an inherited file
// descriptor, single-producer single-consumer rings of variable-length
// records inside it, process-shared futex doorbells that ring only when
// the other side sleeps, peer-death detection, and a small process-worker
// pool on top. It is knit's answer to Knitting's process workers.
//
// # Pieces
//
//	region*.go    Create / OpenFile / OpenFD: the mapping (memfd on Linux,
//	              an unlinked 0600 file on macOS, ErrUnsupported elsewhere)
//	layout.go     the ring header: fields, offsets, checksum, validation
//	ring.go       CreateRing / AttachRing and the record format
//	ring_ops.go   Send, Recv, Reserve/Commit, Peek/Release, Close
//	park.go       spin, then sleep on a shared futex; peer-death polling
//	liveness*.go  is the peer process alive (pidfd, kqueue)
//	workers.go    StartWorkers / ServeIfChild: N child processes, one
//	              pair of rings each
//
// # Trust
//
// The peer is another process and is not trusted: a corrupt or hostile
// peer can make calls fail (ErrCorrupt, ErrClosed, a stall until the
// caller's context ends) but cannot make this side panic, read or write
// outside the ring, or loop without bound. Every index and length read
// from shared memory is loaded once into a local, checked, and only then
// used. On Linux a region is a memfd sealed against shrinking, so the peer
// cannot truncate it under the mapping (which would raise SIGBUS); macOS
// has no seals, and there a peer holding the descriptor could truncate the
// file: the checks above cover the contents of the region, not its size.
//
// # Blocking and the Go scheduler
//
// A blocking call spins for the ring's spin budget (SetSpin; none by
// default on machines with fewer than 4 CPUs, where a spinner holds the
// core its peer needs), then sleeps in the kernel on a futex word in the
// region (knit.FutexWaitShared): the only wait another process can end.
// Like any blocking system call, the sleeping goroutine holds its OS
// thread, and its P until the runtime's sysmon hands it off. Sleeps are
// cut into slices of at most 50 ms; between slices the peer's liveness is
// checked, so a blocked call returns ErrPeerDead within about one slice of
// the peer's death. Builds without a process-shared futex
// (knit_futex_fallback) poll instead, sleeping 50 µs to 1 ms at a time.
//
// # Platforms
//
// Linux and macOS (amd64, arm64, and on Linux any GOARCH). Elsewhere
// Create, OpenFile and OpenFD return an error wrapping
// errors.ErrUnsupported; the package still builds.
package shm
