//go:build !amd64 || purego || race

package relstore

import "sync/atomic"

// Store is sync/atomic's Store: STLR on arm64, which is the release store
// itself, inlined; an assembly routine would be the same instruction
// behind a call.
func Store(p *atomic.Uint64, v uint64) { p.Store(v) }

// Fence does nothing: Store is sync/atomic's, which no later load passes
// (XCHG on amd64, STLR before LDAR on arm64).
func Fence() {}

// Hint is sync/atomic's Store, as Store is.
func Hint(p *atomic.Uint64, v uint64) { p.Store(v) }
