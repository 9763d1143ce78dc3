//go:build !knit_nolinkname

package knit

import "unsafe" // for go:linkname

// The runtime's own park and ready, the pinning of a goroutine to its P,
// and its semaphore. The runtime marks each of these "Do not remove or
// change the type signature" (go.dev/issue/67401), so the linker's
// linkname check lets them through. Build with -tags knit_nolinkname
// where a toolchain refuses them: the runtime backend then sleeps on
// channels throughout.

// haveLinkname reports that the runtime's symbols below are linked.
const haveLinkname = true

// gopark puts the calling goroutine to sleep and, on the scheduler's
// stack, calls unlockf(g, lock) with the goroutine already marked
// waiting: if unlockf reports false the goroutine runs on at once, else
// it sleeps until goready(g). reason and traceReason are the runtime's
// enums for stack dumps and the execution tracer; knit passes 0 for
// both ("[waiting]" in a dump), the one value of each that every Go
// version gives the same meaning. unlockf runs on the system stack and
// must not grow it or allocate.
//
//go:linkname gopark runtime.gopark
func gopark(unlockf func(gp, lock unsafe.Pointer) bool, lock unsafe.Pointer, reason, traceReason uint8, traceskip int)

// goready makes a goroutine parked by gopark runnable, as the next to
// run on the caller's P: the ready a channel send gives the receiver it
// finds waiting.
//
//go:linkname goready runtime.goready
func goready(gp unsafe.Pointer, traceskip int)

// semacquire waits until *addr > 0, then decrements it. Under the race
// detector wait-list nodes sleep on it (see raceBuild); the benchmarks'
// floor rows use it bare.
//
//go:linkname semacquire sync.runtime_Semacquire
func semacquire(addr *uint32)

// semrelease increments *addr and readies one goroutine waiting in
// semacquire on it, if any. With handoff it passes the count straight to
// that goroutine and yields the caller's P to it.
//
//go:linkname semrelease sync.runtime_Semrelease
func semrelease(addr *uint32, handoff bool, skipframes int)

// procPin returns the id of the caller's P and keeps the goroutine on
// it until procUnpin.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// curP is the id of the P the caller runs on; it may have moved by the
// time the caller looks, which costs a readied hint its aim, no more.
func curP() int {
	p := procPin()
	procUnpin()
	return p
}
