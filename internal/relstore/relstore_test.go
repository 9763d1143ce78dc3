package relstore

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestStore(t *testing.T) {
	var w atomic.Uint64
	Store(&w, 42)
	if got := w.Load(); got != 42 {
		t.Fatalf("Load after Store(42) = %d", got)
	}
	Store(&w, 1<<63|7)
	if got := w.Load(); got != 1<<63|7 {
		t.Fatalf("Load after Store(1<<63|7) = %#x", got)
	}
}

func TestHint(t *testing.T) {
	var w atomic.Uint64
	Hint(&w, 42)
	if got := w.Load(); got != 42 {
		t.Fatalf("Load after Hint(42) = %d", got)
	}
	Hint(&w, 1<<63|7)
	if got := w.Load(); got != 1<<63|7 {
		t.Fatalf("Load after Hint(1<<63|7) = %#x", got)
	}
}

// TestStorePublishes is message passing: a payload written with a plain
// store before the release store of a flag is seen by a reader that
// loads the flag. The reader acknowledges each round, so the writer
// never overwrites a payload not yet checked.
func TestStorePublishes(t *testing.T) {
	const n = 20000
	var flag, ack atomic.Uint64
	payload := make([]uint64, 8)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(1); i <= n; i++ {
			for ack.Load() != i-1 {
				runtime.Gosched()
			}
			for k := range payload {
				payload[k] = i
			}
			Store(&flag, i)
		}
	}()
	for i := uint64(1); i <= n; i++ {
		for flag.Load() != i {
			runtime.Gosched()
		}
		for k, p := range payload {
			if p != i {
				t.Fatalf("round %d: payload[%d] = %d after the flag", i, k, p)
			}
		}
		ack.Store(i)
	}
	wg.Wait()
}
