//go:build amd64 && !purego && !race

package relstore

import (
	"sync/atomic"
	"unsafe"
)

// Store stores v at p with a plain MOV: a release store under x86-TSO.
//
//go:noescape
func Store(p *atomic.Uint64, v uint64)

// Fence orders every earlier store of the caller, a Store's MOV included,
// before every later load: a locked instruction, which drains the store
// buffer.
func Fence()

// Hint stores v at p with a plain MOV, as Store does, but written in Go,
// so that it is inlined into its caller instead of costing a call.
func Hint(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
