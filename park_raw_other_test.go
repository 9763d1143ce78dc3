//go:build !linux

package knit

import "sync/atomic"

// The limit for a parked wake where there is no futex(2): the OS's own
// primitive as FutexWait wraps it (ulock on darwin).

func rawFutexWait(addr *atomic.Uint32, val uint32) { FutexWait(addr, val, 0) }

func rawFutexWake(addr *atomic.Uint32) { FutexWake(addr, 1) }
