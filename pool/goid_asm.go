//go:build (amd64 || arm64) && !purego

package pool

// curg identifies the calling goroutine: the address of its runtime g,
// unique among live goroutines (a g is reused only after its goroutine
// has exited, and a worker clears its record before it exits). One
// instruction; see the assembly beside this file.
func curg() uintptr

// curgCheap says curg costs next to nothing, so Future.Wait may ask
// whether its caller is a worker every time it is about to park.
const curgCheap = true
