package suites

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The spin suite measures knit's spin layer: the cost of one Pause hint
// for every hint this CPU and build offer, and a handoff round trip
// between two locked threads waiting through SpinUntil with each hint,
// beside the bare atomic load loop (the limit) and a runtime.Gosched
// loop. The reference is the pure-Go hint ("loop"), in both groups:
// assembly stays only where it beats the pure-Go path in the same run.
//
// knit.SetHint is process-wide. Each row sets its hint in Start and puts
// back the hint that was in force in Close; the harness runs rows one at
// a time, so no other row sees the change.
var spinSuite = harness.Suite{
	Name: "spin",
	Description: "knit's spin hints: ns per Pause hint for each available hint (knit.Hint), and a round trip between " +
		"two locked threads waiting with SpinUntil (50 µs budget, then runtime.Gosched) per hint, beside the " +
		"bare atomic load loop (the limit) and a runtime.Gosched loop. Reference: the pure-Go hint, \"loop\".",
	Unit: "hint (Pause group); round trip (handoff group)",
	Ref:  spinRef,
	Rows: spinRows,
}

// spinRef is the pure-Go hint's row name in both groups.
const spinRef = "loop (pure Go)"

// spinUntilBudget is how long a waiter spins in one SpinUntil call before
// it yields once and spins again.
const spinUntilBudget = 50 * time.Microsecond

// hints are the hints this CPU and build can use, pure Go first.
func hints() []knit.Hint {
	var hs []knit.Hint
	for _, h := range []knit.Hint{knit.HintLoop, knit.HintPause, knit.HintTPause, knit.HintMWaitX,
		knit.HintISB, knit.HintYield, knit.HintWFE} {
		if h.Available() {
			hs = append(hs, h)
		}
	}
	return hs
}

func hintLabel(k knit.Hint) string {
	if k == knit.HintLoop {
		return spinRef
	}
	return k.String()
}

// spinRows: every hint row is knit's (knit.Pause, knit.SpinUntil), pure
// Go included, so its Kind is set: the names ("pause", "loop (pure Go)")
// say nothing of knit and would read as Go's own.
func spinRows(harness.Config) []harness.Row {
	const pause, handoff = "Pause: ns per hint", "SpinUntil handoff round trip (locked threads)"
	var rows []harness.Row
	for _, k := range hints() {
		rows = append(rows, harness.Row{Group: pause, Name: hintLabel(k), Kind: harness.KindKnit, Start: func(harness.Config) (harness.Bench, error) {
			restore, err := useHint(k)
			if err != nil {
				return nil, err
			}
			return &hintBench{restore: restore}, nil
		}})
	}
	rows = append(rows, harness.Row{Group: handoff, Name: refAtomic, Start: func(cfg harness.Config) (harness.Bench, error) {
		return startAtomicPingPong(cfg, 1), nil
	}})
	for _, k := range hints() {
		rows = append(rows, harness.Row{Group: handoff, Name: hintLabel(k), Kind: harness.KindKnit, Start: func(cfg harness.Config) (harness.Bench, error) {
			restore, err := useHint(k)
			if err != nil {
				return nil, err
			}
			return startSpinPingPong(cfg, spinUntilWait, restore), nil
		}})
	}
	return append(rows, harness.Row{Group: handoff, Name: "runtime.Gosched loop", Start: func(cfg harness.Config) (harness.Bench, error) {
		return startSpinPingPong(cfg, goschedWait, nil), nil
	}})
}

// useHint makes k the process's spin hint and returns the func that puts
// back the hint in force before.
func useHint(k knit.Hint) (restore func(), err error) {
	prev := knit.CPU().Hint
	if err := knit.SetHint(k); err != nil {
		knit.SetHint(prev)
		return nil, err
	}
	return func() { knit.SetHint(prev) }, nil
}

// hintBench runs n hints: Pause splits them into short assembly calls, so
// the figure is the hint's own cost plus a call per thousand hints.
type hintBench struct{ restore func() }

func (h *hintBench) Run(n int) error {
	knit.Pause(n)
	return nil
}

func (h *hintBench) Close() error {
	h.restore()
	return nil
}

// spinPP is atomicPingPong on a 32-bit word (SpinUntil's unit) with a
// pluggable wait: the caller makes the word odd, the partner makes it
// even again.
type spinPP struct {
	_       line
	w       atomic.Uint32
	_       line
	stop    atomic.Bool
	wait    func(w *atomic.Uint32, old uint32)
	cfg     harness.Config
	restore func()
	done    chan struct{}
}

func startSpinPingPong(cfg harness.Config, wait func(*atomic.Uint32, uint32), restore func()) *spinPP {
	p := &spinPP{wait: wait, cfg: cfg, restore: restore, done: make(chan struct{})}
	ready := make(chan struct{})
	go p.partner(ready)
	<-ready
	return p
}

func (p *spinPP) partner(ready chan<- struct{}) {
	defer close(p.done)
	release := p.cfg.LockThread(1)
	defer release()
	close(ready)
	var seen uint32
	for {
		p.wait(&p.w, seen)
		if p.stop.Load() {
			return
		}
		seen = p.w.Load() + 1
		p.w.Store(seen)
	}
}

func (p *spinPP) Run(n int) error {
	release := p.cfg.LockThread(0)
	defer release()
	for range n {
		v := p.w.Load() + 1
		p.w.Store(v)
		p.wait(&p.w, v)
	}
	return nil
}

func (p *spinPP) Close() error {
	p.stop.Store(true)
	p.w.Add(1)
	<-p.done
	if p.restore != nil {
		p.restore()
	}
	return nil
}

// spinUntilWait spins through SpinUntil for up to spinUntilBudget at a
// time, yielding once between calls.
func spinUntilWait(w *atomic.Uint32, old uint32) {
	for !knit.SpinUntil(w, old, spinUntilBudget) {
		runtime.Gosched()
	}
}

func goschedWait(w *atomic.Uint32, old uint32) {
	for w.Load() == old {
		runtime.Gosched()
	}
}
