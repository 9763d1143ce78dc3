package pool

import (
	"testing"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestSpinPolicyAgrees: a single worker's default spin follows the one
// rule of internal/spinpolicy (as the rings and Park do): with
// GOMAXPROCS 8 on two CPUs it does not spin; a larger pool never does.
func TestSpinPolicyAgrees(t *testing.T) {
	spinpolicy.EachShape(func(cpus, procs int, spins bool) {
		var cfg Config
		want := knit.DefaultWorkerSpin
		if !spins {
			want = 0
		}
		if got := cfg.spinFor(1); got != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: one worker spins %v, want %v", cpus, procs, got, want)
		}
		if got := cfg.spinFor(2); got != 0 {
			t.Errorf("%d CPUs, GOMAXPROCS %d: two workers spin %v", cpus, procs, got)
		}
	})
}
