package goid

import (
	"sync"
	"testing"

	"github.com/knit-go/knit/internal/testutil"
)

// TestIdentity: Curg, Stack and ID are stable within a goroutine,
// non-zero, and differ between goroutines alive at once.
func TestIdentity(t *testing.T) {
	testutil.CheckGoroutineIDs(t, "Curg", Curg)
	testutil.CheckGoroutineIDs(t, "Stack", Stack)
	testutil.CheckGoroutineIDs(t, "ID", func() uintptr { return uintptr(ID()) })
}

// TestIDNotReused: goroutines started one after another's exit, which
// the runtime starts on the same g (so Curg repeats), each have an ID of
// their own, and it is the number in their stack trace.
func TestIDNotReused(t *testing.T) {
	const n = 200
	type sample struct {
		curg      uintptr
		id, stack uint64
	}
	seen := map[uint64]bool{ID(): true}
	curgs := map[uintptr]bool{}
	reused := 0
	for range n {
		var s sample
		var wg sync.WaitGroup
		wg.Go(func() { s = sample{Curg(), ID(), uint64(Stack())} })
		wg.Wait()
		if s.id == 0 || s.id != s.stack {
			t.Fatalf("ID %d, the stack trace's id %d", s.id, s.stack)
		}
		if seen[s.id] {
			t.Fatalf("ID %d given to a second goroutine", s.id)
		}
		seen[s.id] = true
		if curgs[s.curg] {
			reused++
		}
		curgs[s.curg] = true
	}
	t.Logf("%d of %d goroutines ran on a reused g", reused, n)
}
