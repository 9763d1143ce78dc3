//go:build race

package knit

import (
	"runtime"
	"unsafe"
)

// raceBuild keeps runtime sleepers off park words: gopark's unlockf runs
// on the system stack, where the race detector's instrumented atomics
// must not. Under -race a wait-list node sleeps on its runtime semaphore
// instead (or its channel where the ctx can be cancelled), as every node
// did before park words; the channel alone measured slower there, where
// each synchronisation costs the detector time in the number of
// goroutines.
const raceBuild = true

// The race detector sees no happens-before edge through the runtime's
// semaphore (sync.Mutex annotates its own use of it the same way), so a
// semaphore node's release and acquire are annotated here.

func raceReleaseNode(w *waiter) { runtime.RaceRelease(unsafe.Pointer(w)) }
func raceAcquireNode(w *waiter) { runtime.RaceAcquire(unsafe.Pointer(w)) }
