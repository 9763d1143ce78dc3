//go:build race

package knit

import (
	"runtime"
	"unsafe"
)

// The race detector sees no happens-before edge through the runtime's
// semaphore (sync.Mutex annotates its own use of it the same way), so a
// wait-list node's release and acquire are annotated here.

func raceReleaseNode(w *waiter) { runtime.RaceRelease(unsafe.Pointer(w)) }
func raceAcquireNode(w *waiter) { runtime.RaceAcquire(unsafe.Pointer(w)) }
