//go:build amd64 && !purego && !race

package relstore

import "sync/atomic"

// Store stores v at p with a plain MOV: a release store under x86-TSO.
//
//go:noescape
func Store(p *atomic.Uint64, v uint64)

// Fence orders every earlier store of the caller, a Store's MOV included,
// before every later load: a locked instruction, which drains the store
// buffer.
func Fence()
