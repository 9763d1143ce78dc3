//go:build (amd64 || arm64) && !purego

package goid

import (
	"sync/atomic"
	"testing"
)

// TestIDOffsetFound: on the toolchain under test ID reads goid from the
// g, not from the stack trace (a fallback that works but costs
// microseconds a call).
func TestIDOffsetFound(t *testing.T) {
	ID()
	if atomic.LoadUintptr(&idOffset) == 0 {
		t.Fatal("no offset in the g holds goid; ID reads the stack trace")
	}
	t.Logf("goid at byte %d of g", atomic.LoadUintptr(&idOffset))
}

func BenchmarkID(b *testing.B) {
	for b.Loop() {
		ID()
	}
}

func BenchmarkCurg(b *testing.B) {
	for b.Loop() {
		Curg()
	}
}
