package spinpolicy

import "runtime"

// The test seam. The tests of the packages that take a budget (knit,
// pool, shm) must see machines of other sizes, and a _test.go file of
// theirs cannot reach into this package, so unlike the root package's
// seam (its testhooks.go) this one is exported: SetCPUs, EachShape and
// ForgetGOMAXPROCS, which only tests call (internal/ keeps them from
// knit's users, and a program that never calls them links none of
// them). What they change is one unexported pointer, nil outside the
// tests, so DefaultSpins pays a load of a word nobody writes and a
// branch never taken where it used to make an indirect call. Set it only
// while nothing reads a budget: it is read without synchronisation.
var hooks *testHooks

// testHooks is what a test may change.
type testHooks struct {
	cpus int // the CPU count the policy sees
}

// numCPU is runtime.NumCPU, or the count a test set.
func numCPU() int {
	if h := hooks; h != nil {
		return h.cpus
	}
	return runtime.NumCPU()
}

// SetCPUs makes the policy see n CPUs until restore is called: a test's
// stand-in for a machine of another size.
func SetCPUs(n int) (restore func()) {
	old := hooks
	hooks = &testHooks{cpus: n}
	return func() { hooks = old }
}

// ForgetGOMAXPROCS drops DefaultSpinsCached's reading, so the next call
// reads GOMAXPROCS: for the tests, which change it and look at once.
func ForgetGOMAXPROCS() { procsRead.at.Store(0) }

// EachShape runs f on every machine shape the places that take a budget
// are tested on (GOMAXPROCS 1, 2, 4 and 8, on two and on eight CPUs),
// with the policy seeing that shape; spins says whether a default spins
// there. It restores GOMAXPROCS and the CPU count. For tests.
func EachShape(f func(cpus, procs int, spins bool)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cpus := range []int{2, 8} {
		for _, procs := range []int{1, 2, 4, 8} {
			restore := SetCPUs(cpus)
			runtime.GOMAXPROCS(procs)
			ForgetGOMAXPROCS()
			f(cpus, procs, DefaultSpins())
			restore()
		}
	}
}
