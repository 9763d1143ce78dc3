package knit

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPause: ns per hint for each spin instruction this CPU offers.
// "loop" is the pure-Go hint, the purego build's only one.
func BenchmarkPause(b *testing.B) {
	for _, k := range availableHints() {
		if k == HintAuto || k == HintNone {
			continue
		}
		b.Run(k.String(), func(b *testing.B) {
			if err := SetHint(k); err != nil {
				b.Fatal(err)
			}
			defer SetHint(HintAuto)
			b.ResetTimer()
			for b.Loop() {
				Pause(1)
			}
		})
	}
}

// waitFunc waits until *w != old.
type waitFunc func(w *atomic.Uint32, old uint32)

// atomicWait is the limit: a bare load loop. The Gosched every 4096 loads
// only matters when the two threads share a core; on an idle 2-core box
// the partner answers long before.
func atomicWait(w *atomic.Uint32, old uint32) {
	for i := 1; w.Load() == old; i++ {
		if i%4096 == 0 {
			runtime.Gosched()
		}
	}
}

func goschedWait(w *atomic.Uint32, old uint32) {
	for w.Load() == old {
		runtime.Gosched()
	}
}

// spinUntilWait spins 50 µs per SpinUntil call, then yields once.
func spinUntilWait(w *atomic.Uint32, old uint32) {
	for !SpinUntil(w, old, 50*time.Microsecond) {
		runtime.Gosched()
	}
}

// pingPong measures one round trip between two goroutines locked to their
// threads: the benchmark goroutine bumps the word to odd, the partner
// bumps it back to even.
func pingPong(b *testing.B, wait waitFunc) {
	var w atomic.Uint32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		for seq := uint32(0); ; seq += 2 {
			for w.Load() == seq {
				select {
				case <-stop:
					return
				default:
				}
				wait(&w, seq)
			}
			w.Add(1)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	seq := uint32(0)
	b.ResetTimer()
	for b.Loop() {
		w.Add(1)
		wait(&w, seq+1)
		seq += 2
	}
	b.StopTimer()
	close(stop)
	w.Add(1) // release the partner from its wait
	<-done
}

// BenchmarkHandoff: round trip through SpinUntil (each hint, "loop" being
// the pure-Go path in the same binary) against the bare atomic load loop
// (the limit) and a Gosched loop.
func BenchmarkHandoff(b *testing.B) {
	b.Run("limit-atomic", func(b *testing.B) { pingPong(b, atomicWait) })
	for _, k := range availableHints() {
		if k == HintAuto || k == HintNone {
			continue
		}
		b.Run("spinuntil-"+k.String(), func(b *testing.B) {
			if err := SetHint(k); err != nil {
				b.Fatal(err)
			}
			defer SetHint(HintAuto)
			pingPong(b, spinUntilWait)
		})
	}
	b.Run("gosched", func(b *testing.B) { pingPong(b, goschedWait) })
}

// BenchmarkSpinUntil: the calls a wait loop makes when it does not have
// to wait, or gives up at once: the word already changed, and an
// unchanged word with a zero budget; and a Backoff step. These are the
// hot paths that calibration must not slow down.
func BenchmarkSpinUntil(b *testing.B) {
	var w atomic.Uint32
	w.Store(1)
	b.Run("changed", func(b *testing.B) {
		for b.Loop() {
			SpinUntil(&w, 0, time.Microsecond)
		}
	})
	b.Run("budget0", func(b *testing.B) {
		for b.Loop() {
			SpinUntil(&w, 1, 0)
		}
	})
	b.Run("budget-tiny", func(b *testing.B) {
		for b.Loop() {
			SpinUntil(&w, 1, time.Nanosecond)
		}
	})
	b.Run("backoff-spin", func(b *testing.B) {
		var bo Backoff
		for b.Loop() {
			bo.Spin()
			if bo.step > backoffSpinLimit {
				bo.Reset()
			}
		}
	})
}
