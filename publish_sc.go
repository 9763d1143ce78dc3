//go:build !amd64 || purego || race

package knit

import "sync/atomic"

// relaxedPublish is false: storeRel is sync/atomic's Store, which no later
// load passes (STLR before LDAR on arm64, XCHG on amd64), so the doorbell
// needs no bell modes. Under the race detector this also gives it the
// happens-before edges it needs to check the rings.
const relaxedPublish = false

// storeRel publishes v at p. On arm64 sync/atomic's Store is the STLR
// release store itself, inlined; an assembly routine would be the same
// instruction behind a call.
func storeRel(p *atomic.Uint64, v uint64) { p.Store(v) }

func publishRelaxed(p *atomic.Uint64, v uint64, _ *atomic.Uint32) { p.Store(v) }

func storeLoadFence() {}

func startAsymBarrier() {}

func asymBarrierReady() bool { return false }

func asymBarrier() { panic("knit: asymmetric barrier used in a build without relaxed publication") }
