package knit

import (
	"testing"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestSpinPolicyAgrees: a ring's default budget and a zero Park's resolve
// alike, by the one rule of internal/spinpolicy, on machines of every
// shape: with GOMAXPROCS 8 on two CPUs neither spins. pool and shm have
// the same test for their defaults.
func TestSpinPolicyAgrees(t *testing.T) {
	spinpolicy.EachShape(func(cpus, procs int, spins bool) {
		if want := cpus >= 4 && procs >= 4 && !spinpolicy.Off(); spins != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: DefaultSpins %v", cpus, procs, spins)
		}
		ring := NewMPMC[int](4, Park{}).bells.park.Spin
		park := Park{}.spin()
		wait := Park{}.spinEachWait() // Event.Wait's and Select's
		if spins {
			if ring != DefaultSpin || park != DefaultSpin || wait != DefaultSpin {
				t.Errorf("%d CPUs, GOMAXPROCS %d: ring %v, Park %v, each wait %v; want %v", cpus, procs, ring, park, wait, DefaultSpin)
			}
		} else if ring != NoSpin || park != 0 || wait != 0 {
			t.Errorf("%d CPUs, GOMAXPROCS %d: ring %v, Park %v, each wait %v; want no spin", cpus, procs, ring, park, wait)
		}
		if got := NewMPMC[int](4, Park{Spin: NoSpin}).bells.park.Spin; got != NoSpin {
			t.Errorf("Park{Spin: NoSpin} resolved to %v", got)
		}
	})
}
