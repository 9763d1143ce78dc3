package pool

import (
	"runtime"
	"testing"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestSpinPolicyAgrees: a single worker's default spin follows the one
// rule of internal/spinpolicy (as the rings and Park do): with
// GOMAXPROCS 8 on two CPUs it does not spin; a larger pool never does.
func TestSpinPolicyAgrees(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cpus := range []int{2, 8} {
		for _, procs := range []int{1, 2, 4, 8} {
			restore := spinpolicy.SetCPUs(cpus)
			runtime.GOMAXPROCS(procs)
			var cfg Config
			want := DefaultSpin
			if cpus < spinpolicy.MinProcs || procs < spinpolicy.MinProcs || spinpolicy.Off() {
				want = 0
			}
			if got := cfg.spinFor(1); got != want {
				t.Errorf("%d CPUs, GOMAXPROCS %d: one worker spins %v, want %v", cpus, procs, got, want)
			}
			if got := cfg.spinFor(2); got != 0 {
				t.Errorf("%d CPUs, GOMAXPROCS %d: two workers spin %v", cpus, procs, got)
			}
			restore()
		}
	}
}
