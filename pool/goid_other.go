//go:build !(amd64 || arm64) || purego

package pool

import "runtime"

// curg identifies the calling goroutine by the id in the first line of
// its stack trace ("goroutine 42 [running]:"). Where the g register or
// slot cannot be read without assembly this is the portable way, at about
// 2 µs and one allocation a call, so the pool asks only when a wait is
// about to park and a worker is running a task (see Pool.self).
func curg() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return 0
	}
	var id uintptr
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}

// curgCheap is false: see curg.
const curgCheap = false
