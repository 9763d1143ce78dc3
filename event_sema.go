//go:build !knit_nolinkname

package knit

import _ "unsafe" // for go:linkname

// The runtime's semaphore, the sleep and wake that sync.Mutex and
// sync.WaitGroup are built on: a goroutine parked on a count, woken by
// a release. The runtime pushes both symbols to package sync for this
// use and marks them "Do not remove or change the type signature"
// (go.dev/issue/67401), so the linker's linkname check lets them
// through. Build with -tags knit_nolinkname where a toolchain refuses
// them: the runtime backend then sleeps on channels throughout.

// haveSema reports that the semaphore is linked.
const haveSema = true

// semacquire waits until *addr > 0, then decrements it.
//
//go:linkname semacquire sync.runtime_Semacquire
func semacquire(addr *uint32)

// semrelease increments *addr and readies one goroutine waiting in
// semacquire on it, if any. With handoff it passes the count straight to
// that goroutine and yields the caller's P to it.
//
//go:linkname semrelease sync.runtime_Semrelease
func semrelease(addr *uint32, handoff bool, skipframes int)

// goyield puts the calling goroutine at the back of its P's run queue
// and runs the scheduler: runtime.Gosched, but onto the local queue
// rather than the global one, so the goroutine stays on its P and other
// Ps do not take it.
//
//go:linkname goyield runtime.goyield
func goyield()

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
