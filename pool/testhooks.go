package pool

// The test seam: the knobs the benchmarks turn inside this package. As
// in the root package (its testhooks.go has the argument in full): plain
// `go test` must run them, so no build tag can remove the sites; hooks
// stays nil outside a test binary, only _test.go files set it
// (hooks_test.go's setHooks), and each site costs a load of a word
// nobody writes and a branch never taken. Unlike the root package's, it
// is a plain pointer: it holds nothing set at init, so only the
// benchmark that swaps it reads it, and that benchmark swaps it only
// while no pool is in use.
var hooks *testHooks

// testHooks is what a test may change; the zero value is the package's
// own behaviour.
type testHooks struct {
	grains int64 // packetGrains in its place, when not 0
}

// grains is packetGrains, or the count a benchmark set.
func grains() int64 {
	if h := hooks; h != nil && h.grains != 0 {
		return h.grains
	}
	return packetGrains
}
