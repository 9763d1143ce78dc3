package goid

import (
	"testing"

	"github.com/knit-go/knit/internal/testutil"
)

// TestIdentity: Curg and Stack are stable within a goroutine, non-zero,
// and differ between goroutines alive at once.
func TestIdentity(t *testing.T) {
	testutil.CheckGoroutineIDs(t, "Curg", Curg)
	testutil.CheckGoroutineIDs(t, "Stack", Stack)
}
