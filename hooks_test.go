package knit

// The tests' side of the seam in testhooks.go: the only code that sets
// hooks.

// Every test binary counts an Event's wakes, which the tests check.
func init() { hooks.Store(&testHooks{countWakes: true}) }

// setHooks installs a copy of the current hooks changed by f, until
// restore is called. Call both only while the test's Events, Slots and
// rings are idle: a call in flight may see either.
func setHooks(f func(h *testHooks)) (restore func()) {
	old := hooks.Load()
	h := new(testHooks)
	if old != nil {
		*h = *old
	}
	f(h)
	hooks.Store(h)
	return func() { hooks.Store(old) }
}
