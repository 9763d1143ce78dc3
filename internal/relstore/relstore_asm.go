//go:build amd64 && !purego && !race

package relstore

import "sync/atomic"

// Relaxed says that a later load may pass Store (x86-TSO's store buffer):
// a caller that needs store-then-load order must fence, or argue it with
// internal/asym.
const Relaxed = true

// Store stores v at p with a plain MOV: a release store under x86-TSO.
//
//go:noescape
func Store(p *atomic.Uint64, v uint64)
