package spinpolicy

import (
	"runtime"
	"testing"
	"time"
)

// cases: a default spins only on MinProcs Ps with MinProcs CPUs behind
// them.
var cases = []struct{ cpus, procs int }{
	{2, 1}, {2, 2}, {2, 4}, {2, 8}, {8, 1}, {8, 2}, {8, 4}, {8, 8},
}

func TestResolve(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const def = 7 * time.Microsecond
	for _, c := range cases {
		restore := SetCPUs(c.cpus)
		runtime.GOMAXPROCS(c.procs)
		want := time.Duration(0)
		if c.cpus >= MinProcs && c.procs >= MinProcs {
			want = def
		}
		if got := Resolve(0, def); got != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: Resolve(0) = %v, want %v", c.cpus, c.procs, got, want)
		}
		if got := DefaultSpins(); got != (want != 0) {
			t.Errorf("%d CPUs, GOMAXPROCS %d: DefaultSpins %v", c.cpus, c.procs, got)
		}
		if got := Resolve(3*time.Microsecond, def); got != 3*time.Microsecond {
			t.Errorf("an explicit budget resolved to %v", got)
		}
		if got := Resolve(-1, def); got != 0 {
			t.Errorf("a negative budget resolved to %v", got)
		}
		restore()
	}
}
