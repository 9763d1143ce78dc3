//go:build !(amd64 || arm64) || purego

package pool

// curg identifies the calling goroutine (see curgSpawn); since that costs
// microseconds, the pool asks only when a wait is about to park and a
// worker is running a task (see Pool.self).
func curg() uintptr { return curgSpawn() }

// curgCheap is false: see curg.
const curgCheap = false
