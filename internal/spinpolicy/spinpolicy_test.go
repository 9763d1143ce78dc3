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

// TestDefaultSpinsCached: the cached reading agrees with DefaultSpins on
// every shape once its window has passed, keeps its reading within the
// window, and reads the CPU count every time.
func TestDefaultSpinsCached(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var clock uint64 = 1
	now := func() uint64 { return clock }
	const window = 100
	for _, c := range cases {
		restore := SetCPUs(c.cpus)
		runtime.GOMAXPROCS(c.procs)
		clock += window
		if got, want := DefaultSpinsCached(now, window), DefaultSpins(); got != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: DefaultSpinsCached %v, DefaultSpins %v", c.cpus, c.procs, got, want)
		}
		const def = 7 * time.Microsecond
		if got, want := ResolveCached(0, def, now, window), Resolve(0, def); got != want {
			t.Errorf("%d CPUs, GOMAXPROCS %d: ResolveCached(0) = %v, Resolve(0) = %v", c.cpus, c.procs, got, want)
		}
		for _, d := range []time.Duration{3 * time.Microsecond, -1} {
			if got, want := ResolveCached(d, def, now, window), Resolve(d, def); got != want {
				t.Errorf("ResolveCached(%v) = %v, Resolve = %v", d, got, want)
			}
		}
		restore()
	}

	restore := SetCPUs(8)
	defer restore()
	runtime.GOMAXPROCS(MinProcs)
	clock += window
	if !DefaultSpinsCached(now, window) {
		t.Fatal("8 CPUs, GOMAXPROCS 4: no spin")
	}
	runtime.GOMAXPROCS(1)
	clock += window / 2
	if !DefaultSpinsCached(now, window) {
		t.Error("a reading within its window was not kept")
	}
	clock += window / 2
	if DefaultSpinsCached(now, window) {
		t.Error("GOMAXPROCS 1 not seen once the window passed")
	}
	runtime.GOMAXPROCS(MinProcs)
	clock += window
	if !DefaultSpinsCached(now, window) {
		t.Fatal("GOMAXPROCS 4 not seen once the window passed")
	}
	two := SetCPUs(2)
	if DefaultSpinsCached(now, window) {
		t.Error("2 CPUs: the CPU count is not read every time")
	}
	two()
	saved := off
	defer func() { off = saved }()
	off = func() bool { return true }
	if DefaultSpinsCached(now, window) || ResolveCached(5*time.Microsecond, 0, now, window) != 0 {
		t.Error("spinning off: a budget still spins")
	}
	off = saved

	// A clock that goes back reads as a window passed.
	runtime.GOMAXPROCS(1)
	clock -= window / 2
	if DefaultSpinsCached(now, window) {
		t.Error("a clock gone back kept the old reading")
	}
	runtime.GOMAXPROCS(MinProcs)
	ForgetGOMAXPROCS()
	if !DefaultSpinsCached(now, window) {
		t.Error("ForgetGOMAXPROCS: the next call did not read GOMAXPROCS")
	}
}
