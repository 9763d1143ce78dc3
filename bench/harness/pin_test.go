package harness

import (
	"errors"
	"slices"
	"testing"

	"github.com/knit-go/knit/affinity"
)

// TestLockThreadPins: with Pin set, slot k runs on the k-th allowed CPU
// (mod their count), and release hands the thread back with the process's
// mask.
func TestLockThreadPins(t *testing.T) {
	set, err := affinity.Available()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no thread affinity on this OS")
	}
	if err != nil {
		t.Fatal(err)
	}
	cpus := slices.Collect(set.All())
	for slot := -1; slot <= len(cpus); slot++ {
		release := Config{Pin: true}.LockThread(slot)
		got, err := affinity.Current()
		release()
		if err != nil {
			t.Fatal(err)
		}
		if want := cpus[nth(slot, len(cpus))]; got != want {
			t.Errorf("LockThread(%d) runs on CPU %d, want %d", slot, got, want)
		}
	}
	if after, err := affinity.Available(); err != nil || after.String() != set.String() {
		t.Errorf("after release the allowed set is %v (%v), want %v", after, err, set)
	}
}
