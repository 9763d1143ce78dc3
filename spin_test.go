package knit

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// withHint runs f with hint k in force and restores the automatic choice.
func withHint(t *testing.T, k Hint, f func()) {
	t.Helper()
	if err := SetHint(k); err != nil {
		t.Fatalf("SetHint(%s): %v", k, err)
	}
	defer SetHint(HintAuto)
	f()
}

func availableHints() []Hint {
	var ks []Hint
	for k := Hint(0); k < numHints; k++ {
		if k.Available() {
			ks = append(ks, k)
		}
	}
	return ks
}

func TestParseHint(t *testing.T) {
	for k := Hint(0); k < numHints; k++ {
		got, err := ParseHint(" " + strings.ToUpper(k.String()) + " ")
		if err != nil || got != k {
			t.Errorf("ParseHint(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	if got, err := ParseHint(""); err != nil || got != HintAuto {
		t.Errorf(`ParseHint("") = %v, %v; want auto`, got, err)
	}
	for _, bad := range []string{"spin", "pause2", "mwait", "-"} {
		if _, err := ParseHint(bad); !errors.Is(err, ErrHintUnsupported) || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseHint(%q) error = %v; want ErrHintUnsupported naming the value", bad, err)
		}
	}
	if s := Hint(200).String(); s != "Hint(200)" {
		t.Errorf("String of an out-of-range hint = %q, want Hint(200)", s)
	}
}

func TestCPUReport(t *testing.T) {
	c := CPU()
	t.Log(c)
	if c.Arch != runtime.GOARCH {
		t.Errorf("Arch = %q, want %q", c.Arch, runtime.GOARCH)
	}
	if c.Asm != haveAsm {
		t.Errorf("Asm = %v, want %v", c.Asm, haveAsm)
	}
	if c.CounterHz <= 0 {
		t.Errorf("CounterHz = %d", c.CounterHz)
	}
	if c.Hint == HintAuto || !c.Hint.Available() {
		t.Errorf("Hint = %v: the resolved hint must be concrete and available", c.Hint)
	}
	if c.Hint != HintNone && !(c.HintNs > 0) {
		t.Errorf("HintNs = %v", c.HintNs)
	}
	if c.CacheLine <= 0 {
		t.Errorf("CacheLine = %d", c.CacheLine)
	}
	if haveAsm && c.Hint == HintLoop {
		t.Errorf("asm build chose the pure-Go loop")
	}
	if !haveAsm && c.Hint != HintLoop {
		t.Errorf("pure-Go build chose %v", c.Hint)
	}
}

// TestSetHintEveryKind forces each hint: the available ones take effect
// and work; the others leave the automatic choice in force with a warning.
func TestSetHintEveryKind(t *testing.T) {
	auto := CPU().Hint
	for k := Hint(0); k < numHints; k++ {
		err := SetHint(k)
		c := CPU()
		switch {
		case k == HintAuto:
			if err != nil || c.Hint != auto {
				t.Errorf("SetHint(auto) = %v, spin %v; want nil, %v", err, c.Hint, auto)
			}
		case k.Available():
			if err != nil || c.Hint != k || c.Warning != loadClock().warning {
				t.Errorf("SetHint(%v) = %v, spin %v, warning %q", k, err, c.Hint, c.Warning)
			}
			checkSpinUntilFlip(t, k)
		default:
			if !errors.Is(err, ErrHintUnsupported) {
				t.Errorf("SetHint(%v) error = %v; want ErrHintUnsupported", k, err)
			}
			if c.Hint != auto || !strings.Contains(c.Warning, k.String()) {
				t.Errorf("after unsupported SetHint(%v): spin %v warning %q; want %v and a warning naming it", k, c.Hint, c.Warning, auto)
			}
		}
	}
	if err := SetHint(numHints); !errors.Is(err, ErrHintUnsupported) {
		t.Errorf("SetHint(out of range) = %v", err)
	}
	SetHint(HintAuto)
	if c := CPU(); c.Hint != auto || c.Warning != loadClock().warning {
		t.Errorf("SetHint(auto) did not clear the warning: %+v", c)
	}
}

// checkSpinUntilFlip: SpinUntil sees a store from another goroutine and
// returns long before its budget.
func checkSpinUntilFlip(t *testing.T, k Hint) {
	t.Helper()
	// The store must come while SpinUntil runs: one that came before it
	// was called would make it return at once, having seen nothing. So
	// the word is looked at just before the call, and a store already
	// there sends the test round again, with the storer waiting longer.
	var w *atomic.Uint32
	for attempt := 1; ; attempt++ {
		w = new(atomic.Uint32)
		go func(w *atomic.Uint32, d time.Duration) {
			time.Sleep(d)
			w.Store(1)
		}(w, time.Duration(attempt)*2*time.Millisecond)
		if w.Load() == 0 {
			break
		}
		if attempt == 20 {
			t.Fatalf("%v: the store came before SpinUntil was called in 20 tries", k)
		}
	}
	start := time.Now()
	ok := SpinUntil(w, 0, 20*time.Second)
	el := time.Since(start)
	if k == HintNone {
		if ok && w.Load() == 0 {
			t.Errorf("%v: SpinUntil reported a change that did not happen", k)
		}
		return
	}
	if !ok {
		t.Errorf("%v: SpinUntil missed the store", k)
	}
	if el > 10*time.Second {
		t.Errorf("%v: SpinUntil took %v to see the store", k, el)
	}
}

func TestSpinUntilBudget(t *testing.T) {
	for _, k := range availableHints() {
		t.Run(k.String(), func(t *testing.T) {
			withHint(t, k, func() {
				var w atomic.Uint32
				const budget = 3 * time.Millisecond
				start := time.Now()
				if SpinUntil(&w, 0, budget) {
					t.Fatal("SpinUntil reported a change on an untouched word")
				}
				el := time.Since(start)
				if k == HintNone {
					return
				}
				// Loose bounds: the budget is honoured, not exceeded by
				// orders of magnitude (a descheduled VM can add a lot).
				if el < budget/2 || el > 2*time.Second {
					t.Errorf("budget %v: SpinUntil returned after %v", budget, el)
				}
			})
		})
	}
}

func TestSpinUntilImmediate(t *testing.T) {
	var w atomic.Uint32
	w.Store(5)
	if !SpinUntil(&w, 4, 0) {
		t.Error("SpinUntil(changed word, budget 0) = false")
	}
	if SpinUntil(&w, 5, 0) || SpinUntil(&w, 5, -time.Second) {
		t.Error("SpinUntil(unchanged word, budget <= 0) = true")
	}
	withHint(t, HintNone, func() {
		start := time.Now()
		if SpinUntil(&w, 5, time.Hour) {
			t.Error("HintNone: SpinUntil = true on an unchanged word")
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("HintNone: SpinUntil spun for %v", el)
		}
		if !SpinUntil(&w, 0, time.Hour) {
			t.Error("HintNone: SpinUntil missed a word that had changed")
		}
	})
}

// TestSpinUntilHandoff ping-pongs a word between two goroutines through
// SpinUntil with every available hint, counting every turn.
func TestSpinUntilHandoff(t *testing.T) {
	rounds := 2000
	if testing.Short() || raceEnabled {
		rounds = 200
	}
	for _, k := range availableHints() {
		t.Run(k.String(), func(t *testing.T) {
			withHint(t, k, func() {
				var w atomic.Uint32 // odd: ping's turn done; even: pong's
				var wg sync.WaitGroup
				wait := func(old uint32) {
					for !SpinUntil(&w, old, 50*time.Microsecond) {
						runtime.Gosched()
					}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range rounds {
						wait(uint32(2*i + 0))
						w.Add(1)
					}
				}()
				done := make(chan struct{})
				go func() {
					for i := range rounds {
						w.Add(1)
						wait(uint32(2*i + 1))
					}
					close(done)
				}()
				select {
				case <-done:
				case <-time.After(60 * time.Second):
					t.Fatalf("handoff stalled at %d", w.Load())
				}
				wg.Wait()
				if got := w.Load(); got != uint32(2*rounds) {
					t.Fatalf("word = %d, want %d", got, 2*rounds)
				}
			})
		})
	}
}

// TestPause: Pause(n) spends at least a fraction of n calibrated hints
// (a lower bound, which noise can only help), returns at once for n <= 0
// and under HintNone, and splits long runs into preemptible batches.
func TestPause(t *testing.T) {
	const n = 3 * maxPauseBatch / 2
	for _, k := range availableHints() {
		withHint(t, k, func() {
			Pause(0)
			Pause(-3)
			ns := CPU().HintNs
			start := time.Now()
			Pause(n)
			el := time.Since(start)
			if k != HintNone && el < time.Duration(ns*n/4) {
				t.Errorf("%v: Pause(%d) took %v, less than a quarter of %d hints at %.1f ns", k, n, el, n, ns)
			}
		})
	}
	withHint(t, HintNone, func() {
		start := time.Now()
		Pause(1 << 30)
		if el := time.Since(start); el > time.Second {
			t.Errorf("HintNone: Pause(1<<30) spun for %v", el)
		}
	})
}

func TestBackoffSteps(t *testing.T) {
	var b Backoff
	n := 0
	for !b.IsCompleted() {
		b.Snooze()
		n++
		if n > 100 {
			t.Fatal("zero Backoff never completed")
		}
	}
	if n != backoffYieldLimit+1 {
		t.Errorf("zero Backoff completed after %d snoozes, want %d", n, backoffYieldLimit+1)
	}
	b.Reset()
	if b.IsCompleted() {
		t.Error("Reset Backoff is completed")
	}
	for range 50 {
		b.Spin() // Spin never yields nor overflows its shift
	}
}

func TestBackoffBudget(t *testing.T) {
	b := Backoff{Budget: 20 * time.Millisecond}
	if b.IsCompleted() {
		t.Fatal("completed before it started")
	}
	start := time.Now()
	for !b.IsCompleted() {
		b.Snooze()
		if time.Since(start) > 10*time.Second {
			t.Fatal("budgeted Backoff never completed")
		}
	}
	if el := time.Since(start); el < 10*time.Millisecond {
		t.Errorf("20ms Backoff completed after %v", el)
	}
	b.Reset()
	if b.IsCompleted() || b.Budget != 20*time.Millisecond {
		t.Errorf("Reset lost the budget or left it completed: %+v", b)
	}
}

// TestHintNoneZeroesBudgets: under HintNone every spin budget reads zero,
// so whoever waits parks at once: Backoff completes before its first step,
// whatever its budget, and the budgets of the other packages resolve to 0.
func TestHintNoneZeroesBudgets(t *testing.T) {
	withHint(t, HintNone, func() {
		for _, budget := range []time.Duration{0, 2 * time.Millisecond, time.Hour} {
			b := Backoff{Budget: budget}
			n := 0
			for !b.IsCompleted() {
				b.Spin()
				if n++; n > 1000 {
					t.Fatalf("Backoff{Budget: %v} under none: still not completed after %d Spins", budget, n)
				}
			}
			if n != 0 {
				t.Errorf("Backoff{Budget: %v} under none: %d Spins before IsCompleted, want 0", budget, n)
			}
		}
		for _, d := range []time.Duration{time.Millisecond, 0, NoSpin} {
			if got := spinpolicy.Resolve(d, 50*time.Microsecond); got != 0 {
				t.Errorf("spinpolicy.Resolve(%v) under none = %v, want 0", d, got)
			}
			if got := (Park{Spin: d}).spin(); got != 0 {
				t.Errorf("Park{Spin: %v}.spin() under none = %v, want 0", d, got)
			}
		}
	})
	if got := spinpolicy.Resolve(time.Millisecond, 0); got != time.Millisecond {
		t.Errorf("after SetHint(auto), Resolve(1ms) = %v", got)
	}
}

// TestHintEnv re-executes the test binary with KNIT_HINT set: bad or
// unsupported values never crash, fall back to auto and carry a warning.
func TestHintEnv(t *testing.T) {
	if os.Getenv("KNIT_TEST_PRINT_CPU") == "1" {
		// The budget first: the pool's and shm's budgets must read the
		// environment's choice before anything in knit resolved it.
		budget := spinpolicy.Resolve(time.Millisecond, 0)
		c := CPU()
		os.Stdout.WriteString("HINT=" + c.Hint.String() + "\nWARN=" + c.Warning + "\nBUDGET=" + budget.String() + "\n")
		return
	}
	auto := CPU().Hint
	type envCase struct {
		env, wantHint string
		wantWarn      bool
	}
	cases := []envCase{
		{"bogus", auto.String(), true},
		{"none", "none", false},
		{"loop", "loop", false},
		{"", auto.String(), false},
	}
	for k := HintPause; k < numHints; k++ {
		if k.Available() {
			cases = append(cases, envCase{k.String(), k.String(), false})
		} else {
			cases = append(cases, envCase{k.String(), auto.String(), true})
		}
	}
	for _, c := range cases {
		cmd := selfCommand("-test.run=^TestHintEnv$")
		cmd.Env = append(os.Environ(), "KNIT_TEST_PRINT_CPU=1", "KNIT_HINT="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("KNIT_HINT=%q: child failed: %v\n%s", c.env, err, out)
		}
		s := string(out)
		if !strings.Contains(s, "HINT="+c.wantHint+"\n") {
			t.Errorf("KNIT_HINT=%q: want hint %s, child said:\n%s", c.env, c.wantHint, s)
		}
		wantBudget := time.Millisecond
		if c.wantHint == "none" {
			wantBudget = 0
		}
		if !strings.Contains(s, "BUDGET="+wantBudget.String()+"\n") {
			t.Errorf("KNIT_HINT=%q: want a 1ms budget to read %v, child said:\n%s", c.env, wantBudget, s)
		}
		warned := !strings.Contains(s, "WARN="+loadClock().warning+"\n")
		if warned != c.wantWarn {
			t.Errorf("KNIT_HINT=%q: warning present = %v, want %v:\n%s", c.env, warned, c.wantWarn, s)
		}
	}
}

// TestSpinLazyInit: importing knit calibrates nothing. In a fresh
// process (the test binary re-executed, running only this test) the
// spin choice and the cycle counter are still unresolved when the first
// test starts; the first budgeted SpinUntil resolves both, and CPU()
// then reports the calibrated figures.
func TestSpinLazyInit(t *testing.T) {
	if os.Getenv("KNIT_TEST_LAZY") == "1" {
		if spinConf.Load() != nil || clockConf.Load() != nil {
			os.Stdout.WriteString("EAGER: calibrated before first use\n")
			return
		}
		var w atomic.Uint32
		SpinUntil(&w, 0, time.Microsecond)
		if spinConf.Load() == nil || clockConf.Load() == nil {
			os.Stdout.WriteString("UNRESOLVED: SpinUntil did not calibrate\n")
			return
		}
		if c := CPU(); c.CounterHz <= 0 || (c.Hint != HintNone && !(c.HintNs > 0)) {
			os.Stdout.WriteString("UNCALIBRATED: " + c.String() + "\n")
			return
		}
		os.Stdout.WriteString("LAZY OK\n")
		return
	}
	cmd := selfCommand("-test.run=^TestSpinLazyInit$")
	cmd.Env = append(os.Environ(), "KNIT_TEST_LAZY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "LAZY OK\n") {
		t.Errorf("child said:\n%s", out)
	}
}
