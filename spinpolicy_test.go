package knit

import (
	"runtime"
	"testing"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestSpinPolicyAgrees: a ring's default budget and a zero Park's resolve
// alike, by the one rule of internal/spinpolicy, on machines of every
// shape: with GOMAXPROCS 8 on two CPUs neither spins. pool and shm have
// the same test for their defaults.
func TestSpinPolicyAgrees(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cpus := range []int{2, 8} {
		for _, procs := range []int{1, 2, 4, 8} {
			restore := spinpolicy.SetCPUs(cpus)
			runtime.GOMAXPROCS(procs)
			spins := cpus >= spinpolicy.MinProcs && procs >= spinpolicy.MinProcs && !spinpolicy.Off()
			ring := NewMPMC[int](4).r.bells.park.Spin
			park := Park{}.spin()
			if spins {
				if ring != DefaultRingSpin || park != DefaultRingSpin {
					t.Errorf("%d CPUs, GOMAXPROCS %d: ring %v, Park %v; want %v", cpus, procs, ring, park, DefaultRingSpin)
				}
			} else if ring != NoSpin || park != 0 {
				t.Errorf("%d CPUs, GOMAXPROCS %d: ring %v, Park %v; want no spin", cpus, procs, ring, park)
			}
			if got := ringPark([]Option{WithSpin(NoSpin)}).Spin; got != NoSpin {
				t.Errorf("WithSpin(NoSpin) resolved to %v", got)
			}
			restore()
		}
	}
}
