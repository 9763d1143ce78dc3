//go:build !knit_nolinkname

// Package sched is the runtime's local-queue yield, shared by knit's
// Event and its pool.
package sched

import _ "unsafe" // for go:linkname

// Linked reports that Yield is the runtime's goyield.
const Linked = true

// Yield puts the calling goroutine at the back of its P's run queue and
// runs the scheduler: runtime.Gosched, but onto the local queue rather
// than the global one, so the goroutine stays on its P, behind whatever
// that P has runnable, and other Ps do not take it. The runtime marks
// goyield "Do not remove or change the type signature"
// (go.dev/issue/67401), so the linker's linkname check lets it through.
//
//go:linkname Yield runtime.goyield
func Yield()
