package shm

// setHooks installs a copy of the current hooks (testhooks.go) changed by
// f, until restore is called; only while no Region or Ring is in use.
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
