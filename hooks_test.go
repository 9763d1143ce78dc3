package knit

// The tests' side of the seam in testhooks.go: the only code that sets
// hooks.

// Every test binary counts an Event's wakes, which the tests check.
func init() { hooks = &testHooks{countWakes: true} }

// setHooks installs a copy of the current hooks changed by f, until
// restore is called. Call both only while no Event, Slot or ring is in
// use: the library reads hooks without synchronisation.
func setHooks(f func(h *testHooks)) (restore func()) {
	old := hooks
	h := new(testHooks)
	if old != nil {
		*h = *old
	}
	f(h)
	hooks = h
	return func() { hooks = old }
}
