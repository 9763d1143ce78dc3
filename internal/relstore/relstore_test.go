package relstore

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStore: each store leaves the word a later Load reads, the top bit
// included.
func TestStore(t *testing.T) {
	for _, st := range []struct {
		name  string
		store func(*atomic.Uint64, uint64)
	}{{"Store", Store}, {"Hint", Hint}} {
		var w atomic.Uint64
		for _, v := range []uint64{42, 1<<63 | 7} {
			st.store(&w, v)
			if got := w.Load(); got != v {
				t.Fatalf("Load after %s(%#x) = %#x", st.name, v, got)
			}
		}
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
