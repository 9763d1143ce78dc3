//go:build (amd64 || arm64) && !purego

package pool

import "github.com/knit-go/knit/internal/goid"

// curg identifies the calling goroutine: the address of its runtime g,
// unique among live goroutines (a g is reused only after its goroutine
// has exited, and a worker clears its record before it exits).
func curg() uintptr { return goid.Curg() }

// curgCheap says curg costs next to nothing, so Future.Wait may ask
// whether its caller is a worker every time it is about to park.
const curgCheap = goid.Cheap
