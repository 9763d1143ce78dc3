package knit

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestParkWord races one sleeper against one waker on a park word, round
// after round, with the sleeper sometimes giving the word up unslept and
// either side sometimes yielding to widen the windows: every round must
// end with exactly one of "the sleeper slept and was woken", "the
// sleeper gave up before the waker came" (the waker then takes nothing)
// and "the waker took the word before the sleeper gave it up" (the
// sleeper then owns the wake), and the word free again. A lost wake
// hangs the sleeper, which the watchdog reports.
func TestParkWord(t *testing.T) {
	if !parkLinked() {
		t.Skip("park words are not used in this build")
	}
	rounds := parkScale(200000)
	var p parkWord
	var round atomic.Int64
	stop := parkWatchdog(t, parkWatchdogTime, func() string {
		return fmt.Sprintf("round %d word %#x", round.Load(), p.v.Load())
	})
	defer stop()
	claimed := make(chan bool, 1)
	taken := make(chan bool)
	var slept, gaveUp, handed int
	go func() {
		for i := range rounds {
			<-claimed // the sleeper has claimed the word
			if i%7 == 0 {
				runtime.Gosched()
			}
			g, took := p.take()
			if took {
				ready(g)
			}
			taken <- took
		}
	}()
	for i := range rounds {
		round.Store(int64(i))
		if !p.claim() {
			t.Fatalf("round %d: word %#x not free", i, p.v.Load())
		}
		giveUp := i%3 == 0
		claimed <- true
		if i%5 == 0 {
			runtime.Gosched()
		}
		// wantTake: the waker must have taken the word this round.
		wantTake := true
		switch {
		case giveUp && p.unclaim():
			gaveUp++
			wantTake = false
		case giveUp:
			handed++
			p.release()
		default:
			p.sleep()
			p.release()
			slept++
		}
		if took := <-taken; took != wantTake {
			t.Fatalf("round %d (give up %v): waker took %v, want %v", i, giveUp, took, wantTake)
		}
		if v := p.v.Load(); v != wordFree {
			t.Fatalf("round %d: word %#x after the round, want free", i, v)
		}
	}
	if slept+gaveUp+handed != rounds {
		t.Fatalf("%d slept + %d gave up + %d handed != %d rounds", slept, gaveUp, handed, rounds)
	}
	t.Logf("%d slept, %d gave up, %d handed the wake", slept, gaveUp, handed)
}
