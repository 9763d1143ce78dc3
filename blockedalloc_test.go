package knit

import (
	"context"
	"testing"
	"time"
)

// TestBlockedCallsDoNotAllocate: a Push or Pop that has to wait hands
// its item to and from the shared wait code (await) without a copy on
// the heap, for a large item too: a partner goroutine answers each call
// only once the call is registered on the ring's bell, so that every call
// takes the slow path and sleeps.
func TestBlockedCallsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	type big [512]byte
	const runs = 50
	ctx := context.Background()
	waitFor := func(b *ringBell) bool {
		deadline := time.Now().Add(10 * time.Second)
		for b.Waiters() == 0 {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(20 * time.Microsecond)
		}
		return true
	}

	r := NewMPMC[big](4, Park{Spin: NoSpin})
	done := make(chan bool)
	go func() {
		ok := true
		for range runs + 1 {
			if ok = ok && waitFor(&r.bells.notEmpty); ok {
				for r.TryPush(big{1}) != nil {
				}
			}
		}
		done <- ok
	}()
	pops := testing.AllocsPerRun(runs, func() {
		if v, err := r.Pop(ctx); err != nil || v[0] != 1 {
			t.Errorf("Pop: %v, %v", v[0], err)
		}
	})
	if !<-done {
		t.Fatal("a Pop never registered")
	}

	for r.TryPush(big{}) == nil {
	}
	go func() {
		ok := true
		for range runs + 1 {
			if ok = ok && waitFor(&r.bells.notFull); ok {
				for {
					if _, err := r.TryPop(); err == nil {
						break
					}
				}
			}
		}
		done <- ok
	}()
	pushes := testing.AllocsPerRun(runs, func() {
		if err := r.Push(ctx, big{2}); err != nil {
			t.Errorf("Push: %v", err)
		}
	})
	if !<-done {
		t.Fatal("a Push never registered")
	}
	if pops != 0 || pushes != 0 {
		t.Errorf("allocations per blocked call: Pop %v, Push %v", pops, pushes)
	}
}
