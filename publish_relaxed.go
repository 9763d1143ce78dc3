//go:build amd64 && !purego && !race

package knit

import (
	"sync/atomic"

	"github.com/knit-go/knit/internal/relstore"
)

// relaxedPublish says that storeRel is a plain store that a later load may
// pass (x86-TSO's store buffer), so the doorbells run their bell modes;
// see "Publication and the doorbell" in bell.go.
const relaxedPublish = true

// storeRel stores v at p with a release store: MOVQ (internal/relstore).
// Under x86-TSO a store is never reordered with earlier loads or stores,
// so every write before it is visible to a reader that loads v; unlike
// sync/atomic's Store (XCHG) it does not wait for the line to be owned
// before the producer moves on.
func storeRel(p *atomic.Uint64, v uint64) { relstore.Store(p, v) }

// publishRelaxed is publish's path for a bell that was relaxed when the
// publisher looked: the release store (MOVQ), the mode again, and a LOCK
// OR on the stack if the bell has left relaxed meanwhile, so that the
// caller's load of the waiter count comes after the store is visible.
//
//go:noescape
func publishRelaxed(p *atomic.Uint64, v uint64, mode *atomic.Uint32)

// storeLoadFence orders every earlier store before every later load
// (relstore.Fence: LOCK OR on the stack).
func storeLoadFence() { relstore.Fence() }
