//go:build knit_nolinkname

package sched

import "runtime"

// Linked is false: built with -tags knit_nolinkname, nothing is linked
// from the runtime.
const Linked = false

// Yield is runtime.Gosched: the goroutine goes to the global run queue,
// where another P may take it.
func Yield() { runtime.Gosched() }
