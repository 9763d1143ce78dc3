//go:build knit_nolinkname

package pool

import "runtime"

// goyield is runtime.Gosched where the runtime's local-queue yield is not
// linked: the goroutine goes to the global run queue.
func goyield() { runtime.Gosched() }

// yieldLinked is false: a worker parks without a yield first, since a
// Gosched would send it to the global queue, where another P may take
// it (see worker.loop).
const yieldLinked = false
