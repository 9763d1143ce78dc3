package shm

import (
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestSpinPolicyAgrees: a ring end's default spin, and SetSpin's budgets,
// follow the one rule of internal/spinpolicy, as the rings, Park and the
// pool do: with GOMAXPROCS 8 on two CPUs the default does not spin.
func TestSpinPolicyAgrees(t *testing.T) {
	spinpolicy.EachShape(func(cpus, procs int, spins bool) {
		want := DefaultSpin
		if !spins {
			want = 0
		}
		region, p, c, err := regionPair(64)
		if err != nil {
			t.Fatal(err)
		}
		defer region.Close()
		if p.spin != want || c.spin != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: ends spin %v and %v, want %v", cpus, procs, p.spin, c.spin, want)
		}
		if c.SetSpin(0); c.spin != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: SetSpin(0) spins %v, want %v", cpus, procs, c.spin, want)
		}
		if c.SetSpin(knit.NoSpin); c.spin != 0 {
			t.Errorf("SetSpin(NoSpin) spins %v", c.spin)
		}
		if c.SetSpin(time.Microsecond); c.spin != time.Microsecond && !spinpolicy.Off() {
			t.Errorf("SetSpin(1µs) spins %v", c.spin)
		}
	})
}
