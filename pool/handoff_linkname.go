//go:build !knit_nolinkname

package pool

import _ "unsafe" // for go:linkname

// goyield puts the calling goroutine at the back of its P's run queue and
// runs the scheduler: runtime.Gosched onto the local queue rather than
// the global one, so that the goroutine stays on its P, behind whatever
// that P has runnable. The runtime marks it "Do not remove or change the
// type signature" (go.dev/issue/67401), as knit's Event relies on too.
//
//go:linkname goyield runtime.goyield
func goyield()

// yieldLinked reports that goyield is the runtime's: a worker yields
// before it parks (see worker.loop) only where the yield keeps it on its
// P.
const yieldLinked = true
