package pool

import (
	"sync"
	"testing"
)

// TestCurg: both goroutine identities are stable within a goroutine,
// non-zero, and differ between goroutines alive at once.
func TestCurg(t *testing.T) {
	for name, id := range map[string]func() uintptr{"curg": curg, "curgStack": curgStack} {
		a := id()
		if a == 0 || id() != a {
			t.Fatalf("%s: %d, then %d", name, a, id())
		}
		const n = 8
		ids := make([]uintptr, n)
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(1)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids[i] = id()
				started.Done()
				done.Wait() // all alive at once
			}()
		}
		started.Wait()
		done.Done()
		wg.Wait()
		seen := map[uintptr]bool{a: true}
		for _, g := range ids {
			if g == 0 || seen[g] {
				t.Fatalf("%s: ids %v (caller %d) not distinct", name, ids, a)
			}
			seen[g] = true
		}
	}
}

// BenchmarkCurg is the cost of asking which goroutine is running: the
// g register or slot read in assembly (curg on amd64 and arm64 without
// purego), against parsing the stack trace's header (the portable way).
func BenchmarkCurg(b *testing.B) {
	b.Run("curg", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			curg()
		}
	})
	b.Run("stack-header", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			curgStack()
		}
	})
}
