package goid

import (
	"sync"
	"testing"
)

// TestIdentity: Curg and Stack are stable within a goroutine, non-zero,
// and differ between goroutines alive at once.
func TestIdentity(t *testing.T) {
	for name, id := range map[string]func() uintptr{"Curg": Curg, "Stack": Stack} {
		a := id()
		if a == 0 || id() != a {
			t.Fatalf("%s: %d, then %d", name, a, id())
		}
		const n = 8
		ids := make([]uintptr, n)
		var started, wg sync.WaitGroup
		release := make(chan struct{})
		started.Add(n)
		for i := range n {
			wg.Go(func() {
				ids[i] = id()
				started.Done()
				<-release // all alive at once
			})
		}
		started.Wait()
		close(release)
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
