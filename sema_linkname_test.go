//go:build !knit_nolinkname

package knit

import (
	"sync/atomic"
	"testing"
)

// semaPingPong is the runtime's semaphore bare: the floor for a sleep in
// the scheduler. It needs the linkname; without it the row is skipped.
func semaPingPong(b *testing.B, handoff, locked bool) {
	var req, resp uint32
	var stop atomic.Bool
	serve := func() {
		for {
			semacquire(&req)
			if stop.Load() {
				return
			}
			semrelease(&resp, handoff, 0)
		}
	}
	call := func(uint32) {
		semrelease(&req, handoff, 0)
		semacquire(&resp)
	}
	quit := func() {
		stop.Store(true)
		semrelease(&req, false, 0)
	}
	parkPair(b, locked, serve, call, quit)
}
