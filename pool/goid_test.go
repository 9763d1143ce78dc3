package pool

import (
	"fmt"
	"testing"

	"github.com/knit-go/knit/internal/testutil"
)

// TestCurg: every goroutine identity the pool uses is stable within a
// goroutine, non-zero, and differs between goroutines alive at once.
func TestCurg(t *testing.T) {
	testutil.CheckGoroutineIDs(t, "curg", curg)
	testutil.CheckGoroutineIDs(t, "curgStack", curgStack)
	testutil.CheckGoroutineIDs(t, "curgSpawn", curgSpawn)
}

// TestCurgSpawnAgrees: the two portable identities name the same
// goroutine (the pool records a worker with one build's curg and compares
// callers with the same), at any depth, and curgSpawn allocates nothing.
func TestCurgSpawnAgrees(t *testing.T) {
	for _, depth := range []int{0, 10, 200} {
		atDepth(depth, func() {
			if a, b := curgStack(), curgSpawn(); a != b || a == 0 {
				t.Errorf("depth %d: curgStack %d, curgSpawn %d", depth, a, b)
			}
		})
	}
	if raceEnabled {
		return // the race detector allocates
	}
	curgSpawn() // warm the pool of asks
	if a := testing.AllocsPerRun(100, func() { curgSpawn() }); a != 0 {
		t.Errorf("curgSpawn: %v allocs", a)
	}
}

// TestCreatorID: the created-by line is read only when whole, and only
// the goroutine's own (the first).
func TestCreatorID(t *testing.T) {
	for _, c := range []struct {
		trace string
		want  uintptr
	}{
		{"goroutine 9 [running]:\npkg.f()\n\t/a/b.go:3 +0x1\ncreated by pkg.g in goroutine 42\n\t/a/b.go:7 +0x2\n", 42},
		{"goroutine 9 [running]:\npkg.f()\n\t/a/b.go:3 +0x1\ncreated by pkg.g[...] in goroutine 7\n\t/a/b.go:7\n" +
			"[originating from goroutine 7]:\npkg.h()\n\t/a/b.go:9\ncreated by pkg.k in goroutine 1\n\t/a/b.go:11\n", 7},
		{"goroutine 9 [running]:\npkg.f()\n\t/a/b.go:3 +0x1\ncreated by pkg.g in goroutine 42", 0}, // cut short
		{"goroutine 9 [running]:\npkg.f()\n\t/a/b.go:3 +0x1\ncreated by pkg.g in goroutine \n", 0},
		{"goroutine 9 [running]:\npkg.f()\n\t/a/b.go:3 +0x1\ncreated by pkg.g\n\t/a/b.go:7\n", 0},
		{"goroutine 9 [running]:\npkg.f()\n\t/a/b.go:3 +0x1\n", 0},
		{"", 0},
	} {
		if got := creatorID([]byte(c.trace)); got != c.want {
			t.Errorf("creatorID(%q) = %d, want %d", c.trace, got, c.want)
		}
	}
}

// atDepth calls f depth frames below the caller.
//
//go:noinline
func atDepth(depth int, f func()) {
	if depth == 0 {
		f()
		return
	}
	atDepth(depth-1, f)
}

// BenchmarkCurg is the cost of asking which goroutine is running: the
// g register or slot read in assembly (curg on amd64 and arm64 without
// purego), against parsing the stack trace's header (the portable way
// once), against reading the creator's id from a started goroutine's
// trace (the portable way now), from the benchmark's frames and deeper,
// as a task waiting on its own pool inside other tasks is.
func BenchmarkCurg(b *testing.B) {
	b.Run("curg", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			curg()
		}
	})
	for _, depth := range []int{0, 40, 150} {
		b.Run(fmt.Sprintf("stack-header/depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			atDepth(depth, func() {
				for range b.N {
					curgStack()
				}
			})
		})
		b.Run(fmt.Sprintf("spawn/depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			atDepth(depth, func() {
				for range b.N {
					curgSpawn()
				}
			})
		})
	}
}
