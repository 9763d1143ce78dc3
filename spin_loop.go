package knit

import "sync/atomic"

// The pure-Go spin: the only path under purego and on GOARCHes without
// assembly, and HintLoop everywhere. Go has no portable spin hint, so the
// "hint" is an atomic load of a line nobody writes: it cannot be optimised
// away, is cheap (BENCHMARKS.md, "Spin layer"), and leaves the watched
// line alone.

var loopSink atomic.Uint32

func loopPause(n uint32) {
	for range n {
		loopSink.Load()
	}
}

// loopWait is waitSpin in Go. It reads the counter every 16 loads, since
// the counter (the monotonic clock) costs many loads (BENCHMARKS.md,
// "Spin layer").
func loopWait(addr *uint32, old uint32, deadline uint64) bool {
	for {
		for range 16 {
			if atomic.LoadUint32(addr) != old {
				return true
			}
			loopSink.Load()
		}
		if archCycles() >= deadline {
			return atomic.LoadUint32(addr) != old
		}
	}
}
