package shm

// The test seam: the points where the tests reach inside this package.
// As in the root package (its testhooks.go has the argument in full):
// plain `go test` must run the hooked tests, so no build tag can remove
// the sites; hooks stays nil outside a test binary, only _test.go files
// set it (hooks_test.go's setHooks), and each site costs a load of a word
// nobody writes and a branch never taken. Unlike the root package's, it
// is a plain pointer: it holds nothing set at init, so only the test
// that swaps it reads it, and that test swaps it only while no Region or
// Ring is in use.
var hooks *testHooks

// testHooks is what a test may change; the zero value is the package's
// own behaviour.
type testHooks struct {
	// file, on unix, is called with the directory and file of a
	// file-backed region after the file is sized and before both are
	// removed.
	file func(dir, path string)

	// parkDelay runs where a wrong park protocol would lose a wakeup
	// (after each re-check's loads, and just before the sleep), to widen
	// those windows from nanoseconds to the peer's turn.
	parkDelay func()
}

func parkHook() {
	if h := hooks; h != nil && h.parkDelay != nil {
		h.parkDelay()
	}
}
