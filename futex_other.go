//go:build !(linux || darwin) || knit_futex_fallback

package knit

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The portable futex: what FutexWait and FutexWake are where knit has no
// kernel futex (Windows, the BSDs, ...), and on Linux and darwin when built
// with -tags knit_futex_fallback so the tests can run this file too.
//
// Sleepers are queued in a fixed table of buckets hashed by address, each
// a mutex and a FIFO list; a sleeper waits on its own channel, so it parks
// in the Go scheduler and holds neither an OS thread nor a P. The futex
// contract holds because the value check and the enqueue happen under the
// bucket lock, and FutexWake takes the same lock: a waker that changed the
// word before FutexWake either finds the sleeper queued, or the sleeper
// takes the lock after the waker released it and sees the new value.
//
// The shared variants have no way to reach a sleeper in another process:
// FutexWaitShared returns an error wrapping errors.ErrUnsupported, and
// FutexWakeShared wakes only sleepers of this process (of which there are
// none, since they could not wait).

// futexBuckets is a power of two; 64 locks make two unrelated words
// collide rarely, and the table is 8-16 KiB with its padding.
const (
	futexBucketBits = 6
	futexBuckets    = 1 << futexBucketBits
)

type futexBucket struct {
	mu sync.Mutex
	q  waitList // sleepers on every address hashing here; guarded by mu
	_  [CacheLineSize]byte
}

var futexTable [futexBuckets]futexBucket

func futexBucketOf(addr *atomic.Uint32) *futexBucket {
	// Fibonacci hashing of the word's address (dropping the low bits,
	// which are zero for aligned words).
	h := uint64(uintptr(unsafe.Pointer(addr))>>2) * 0x9E3779B97F4A7C15
	return &futexTable[h>>(64-futexBucketBits)]
}

// FutexWait sleeps while *addr == val, until FutexWake on addr or the
// timeout (timeout <= 0: none). The check and the sleep are atomic with
// respect to FutexWake, so a waker that changes the word and then wakes
// is never slept through. It returns nil when woken, when *addr != val on
// entry, or spuriously (re-check in a loop), and ErrTimeout once the
// timeout passes. It blocks the OS thread, so it suits goroutines locked
// to their threads; others should wait on an Event.
func FutexWait(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	b := futexBucketOf(addr)
	b.mu.Lock()
	if addr.Load() != val {
		b.mu.Unlock()
		return nil
	}
	// The waiter keeps addr, a pointer rather than a uintptr, so the word
	// stays where it is (on the heap) while anyone sleeps on it.
	w := getWaiter(addr)
	b.q.push(w)
	b.mu.Unlock()

	if timeout <= 0 {
		<-w.ch
		w.put()
		return nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	if !sleepUntil(w, &b.mu, &b.q, t.C) {
		return ErrTimeout
	}
	return nil
}

// FutexWake wakes up to n goroutines sleeping in FutexWait on addr, oldest
// first, and returns how many it woke.
func FutexWake(addr *atomic.Uint32, n int) int {
	if n <= 0 {
		return 0
	}
	b := futexBucketOf(addr)
	b.mu.Lock()
	chain, k := b.q.take(n, addr)
	b.mu.Unlock()
	wakeAll(chain)
	return k
}

// errSharedUnsupported is what FutexWaitShared returns here.
var errSharedUnsupported = fmt.Errorf("knit: process-shared futex needs the linux or darwin kernel futex: %w", errors.ErrUnsupported)

// FutexWaitShared returns an error wrapping errors.ErrUnsupported: a
// sleeper in this table cannot be reached from another process.
func FutexWaitShared(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	return errSharedUnsupported
}

// FutexWakeShared returns 0: FutexWaitShared never sleeps here, so there
// is nobody to wake.
func FutexWakeShared(addr *atomic.Uint32, n int) int {
	return 0
}
