package knit

// The test seam: every knob the tests and benchmarks turn inside this
// package, in one place.
//
// Why a nil pointer, and not build tags or constants. Plain `go test`
// must run the tests that use these knobs, and a _test.go file can set a
// library variable but cannot change library code; a constant the
// compiler would fold away needs a build tag that `go test` does not
// set, which would leave the hooked tests out of every ordinary run. So
// the library keeps one variable, hooks, that is nil in every program
// but a test binary: only the package's _test.go files set it
// (hooks_test.go's setHooks, and its init). Each hook site is a load of
// hooks, a word no program writes after init outside the tests and so
// stays in every core's cache, and a branch that is never taken: the
// cost the separate flags and func variables it replaces had, with the
// whole surface the tests reach in one type. The hot paths that take no
// hook at all (Notify and Handoff with nobody registered, Prepare,
// Cancel, the rings' Try calls) read nothing new.
//
// hooks is a plain pointer, not an atomic.Pointer (an acquire load on
// arm64 at every site): a test installs or restores it only while no
// Event, Slot or ring is in use, and the race detector reports a test
// that does otherwise.
var hooks *testHooks

// testHooks is what a test may change. The zero value is the library's
// own behaviour.
type testHooks struct {
	// eventGap and slotGap, when set, are called at the points of the
	// Event's and the Slot's solo word protocols where another
	// goroutine's step could slip in (between a count and the check it
	// guards, a claim and its re-check), to widen those windows from
	// nanoseconds to a reschedule.
	eventGap, slotGap func()

	// countWakes makes Events count the wakes they issue (Event.wakes).
	countWakes bool

	// noSema sends every runtime sleeper to the wait list, as a
	// knit_nolinkname build does.
	noSema bool

	// noHandoff turns off the deferred handoff (readied.go).
	noHandoff bool

	// slotNotify makes Put wake a sleeping taker with Notify rather than
	// by slotHandoff's rule, to compare.
	slotNotify bool

	// noSeqBackoff makes a lost CAS on a seqRing index retry at once
	// (casLost), so that BenchmarkRingContended can measure what the
	// backoff buys.
	noSeqBackoff bool
}

func eventRaceHook() {
	if h := hooks; h != nil && h.eventGap != nil {
		h.eventGap()
	}
}

func slotRaceHook() {
	if h := hooks; h != nil && h.slotGap != nil {
		h.slotGap()
	}
}

func countingWakes() bool { h := hooks; return h != nil && h.countWakes }

func waitListOnly() bool { h := hooks; return h != nil && h.noSema }

func deferredHandoff() bool { h := hooks; return h == nil || !h.noHandoff }

func slotNotifies() bool { h := hooks; return h != nil && h.slotNotify }

func seqBackoff() bool { h := hooks; return h == nil || !h.noSeqBackoff }
