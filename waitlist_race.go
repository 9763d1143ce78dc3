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

// raceBuild keeps wait-list nodes off gopark: its unlockf runs on the
// system stack, where the race detector's instrumented atomics must not.
const raceBuild = true
