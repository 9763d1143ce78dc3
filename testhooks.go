package knit

import "sync/atomic"

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
// hooks, a word no program writes outside the tests and so stays in
// every core's cache, and a branch that is never taken: the cost the
// separate flags and func variables it replaces had, with the whole
// surface the tests reach in one type. Every site is on a path that is
// about to sleep, wake a sleeper or retry a lost CAS; the hot paths
// (Notify and Handoff with nobody registered, Prepare, Cancel, the
// rings' Try calls) read nothing new.
//
// hooks is an atomic.Pointer, whose load is a MOV on amd64 and an LDAR
// on arm64, rather than a plain pointer: one word holds both what the
// tests set at init (countWakes) and what a test swaps for its run, and
// a goroutine an earlier test left behind (a ctx's AfterFunc that kicks
// a futex sleeper) may still read it during the swap. A test swaps it
// only while its own Events, Slots and rings are idle.
var hooks atomic.Pointer[testHooks]

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

// eventRaceHook and slotRaceHook stay small enough to inline: the
// load and the branch; the rest, out of line, runs only in the tests.
func eventRaceHook() {
	if hooks.Load() != nil {
		callGap(false)
	}
}

func slotRaceHook() {
	if hooks.Load() != nil {
		callGap(true)
	}
}

func callGap(slot bool) {
	h := hooks.Load()
	if h == nil {
		return
	}
	g := h.eventGap
	if slot {
		g = h.slotGap
	}
	if g != nil {
		g()
	}
}

func countingWakes() bool { h := hooks.Load(); return h != nil && h.countWakes }

func waitListOnly() bool { h := hooks.Load(); return h != nil && h.noSema }

func deferredHandoff() bool { h := hooks.Load(); return h == nil || !h.noHandoff }

func slotNotifies() bool { h := hooks.Load(); return h != nil && h.slotNotify }

func seqBackoff() bool { h := hooks.Load(); return h == nil || !h.noSeqBackoff }
