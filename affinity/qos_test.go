package affinity

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
)

// setQoSOnThrowawayThread calls SetQoS on a goroutine that stays locked to
// its thread and exits, so the thread, with its changed class, ends with
// it instead of running other goroutines.
func setQoSOnThrowawayThread(class QoSClass) error {
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked, on purpose
		errc <- SetQoS(class)
	}()
	return <-errc
}

func TestSetQoS(t *testing.T) {
	err := setQoSOnThrowawayThread(QoSUtility)
	if runtime.GOOS != "darwin" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("SetQoS on %s: %v, want errors.ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("SetQoS(QoSUtility): %v", err)
	}
	if err := setQoSOnThrowawayThread(QoSClass(7)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("SetQoS(7): %v, want EINVAL", err)
	}
}
