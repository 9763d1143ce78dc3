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
	mu         sync.Mutex
	head, tail *futexSleeper // FIFO of sleepers on every address hashing here; guarded by mu
	_          [CacheLineSize]byte
}

var futexTable [futexBuckets]futexBucket

// futexSleeper is one goroutine in FutexWait. It is linked into its
// bucket's list while queued; a waker unlinks it, sets queued to false
// (both under the bucket lock) and then sends on ch, so a sleeper that
// finds itself unlinked knows a token is, or will be, in ch.
type futexSleeper struct {
	addr       *atomic.Uint32 // a pointer, not a uintptr: it keeps the word on the heap, where addresses are stable
	next, prev *futexSleeper
	queued     bool
	ch         chan struct{} // buffered 1: the waker never blocks
}

var futexSleeperPool = sync.Pool{New: func() any {
	return &futexSleeper{ch: make(chan struct{}, 1)}
}}

func futexBucketOf(addr *atomic.Uint32) *futexBucket {
	// Fibonacci hashing of the word's address (dropping the low bits,
	// which are zero for aligned words).
	h := uint64(uintptr(unsafe.Pointer(addr))>>2) * 0x9E3779B97F4A7C15
	return &futexTable[h>>(64-futexBucketBits)]
}

// FutexWait sleeps while *addr == val, until FutexWake on addr, the
// timeout (timeout <= 0: none), or a spurious wake; see the contract in
// futex.go.
func FutexWait(addr *atomic.Uint32, val uint32, timeout time.Duration) error {
	b := futexBucketOf(addr)
	b.mu.Lock()
	if addr.Load() != val {
		b.mu.Unlock()
		return nil
	}
	s := futexSleeperPool.Get().(*futexSleeper)
	s.addr = addr
	b.push(s)
	b.mu.Unlock()

	if timeout <= 0 {
		<-s.ch
		s.release()
		return nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.ch:
		s.release()
		return nil
	case <-t.C:
	}
	b.mu.Lock()
	if s.queued {
		b.remove(s)
		b.mu.Unlock()
		s.release()
		return ErrTimeout
	}
	b.mu.Unlock()
	// A waker unlinked us before the lock: its token is on the way, and
	// the wake counts (returning ErrTimeout would swallow it).
	<-s.ch
	s.release()
	return nil
}

// FutexWake wakes up to n goroutines sleeping in FutexWait on addr, oldest
// first, and returns how many it woke.
func FutexWake(addr *atomic.Uint32, n int) int {
	if n <= 0 {
		return 0
	}
	b := futexBucketOf(addr)
	var woken *futexSleeper // chained through next, sent to after unlock
	count := 0
	b.mu.Lock()
	for s := b.head; s != nil && count < n; {
		next := s.next
		if s.addr == addr {
			b.remove(s)
			s.next = woken
			woken = s
			count++
		}
		s = next
	}
	b.mu.Unlock()
	for s := woken; s != nil; {
		// Read next before the send: once woken, the sleeper recycles s.
		next := s.next
		s.ch <- struct{}{}
		s = next
	}
	return count
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

// push appends s; b.mu must be held.
func (b *futexBucket) push(s *futexSleeper) {
	s.queued = true
	s.next = nil
	s.prev = b.tail
	if b.tail != nil {
		b.tail.next = s
	} else {
		b.head = s
	}
	b.tail = s
}

// remove unlinks s; b.mu must be held.
func (b *futexBucket) remove(s *futexSleeper) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		b.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		b.tail = s.prev
	}
	s.next, s.prev, s.queued = nil, nil, false
}

// release recycles s; its channel is empty (every token sent was received).
func (s *futexSleeper) release() {
	s.addr = nil
	futexSleeperPool.Put(s)
}
