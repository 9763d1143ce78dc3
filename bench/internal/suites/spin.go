package suites

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The spin suite measures knit's spin layer: the cost of one Pause hint
// for every spin kind this CPU and build offer, and a handoff round trip
// between two locked threads waiting through SpinUntil with each kind,
// beside the bare atomic load loop (the limit) and a runtime.Gosched
// loop. The reference is the pure-Go kind ("loop"), in both groups:
// assembly stays only where it beats the pure-Go path in the same run.
//
// knit.SetSpin is process-wide. Each row sets its kind in Start and puts
// back the kind that was in force in Close; the harness runs rows one at
// a time, so no other row sees the change.
var spinSuite = harness.Suite{
	Name: "spin",
	Description: "knit's spin hints: ns per Pause hint for each available spin kind, and a round trip between " +
		"two locked threads waiting with SpinUntil (50 µs budget, then runtime.Gosched) per kind, beside the " +
		"bare atomic load loop (the limit) and a runtime.Gosched loop. Reference: the pure-Go kind, \"loop\".",
	Unit: "hint (Pause group); round trip (handoff group)",
	Ref:  spinRef,
	Rows: spinRows,
}

// spinRef is the pure-Go kind's row name in both groups.
const spinRef = "loop (pure Go)"

// spinUntilBudget is how long a waiter spins in one SpinUntil call before
// it yields once and spins again.
const spinUntilBudget = 50 * time.Microsecond

// spinKinds are the kinds this CPU and build can use, pure Go first.
func spinKinds() []knit.SpinKind {
	var ks []knit.SpinKind
	for _, k := range []knit.SpinKind{knit.SpinLoop, knit.SpinPause, knit.SpinTPause, knit.SpinMWaitX,
		knit.SpinISB, knit.SpinYield, knit.SpinWFE} {
		if k.Available() {
			ks = append(ks, k)
		}
	}
	return ks
}

func spinLabel(k knit.SpinKind) string {
	if k == knit.SpinLoop {
		return spinRef
	}
	return k.String()
}

func spinRows(harness.Config) []harness.Row {
	const hints, handoff = "Pause: ns per hint", "SpinUntil handoff round trip (locked threads)"
	var rows []harness.Row
	for _, k := range spinKinds() {
		rows = append(rows, harness.Row{Group: hints, Name: spinLabel(k), Start: func(harness.Config) (harness.Bench, error) {
			restore, err := useSpin(k)
			if err != nil {
				return nil, err
			}
			return &hintBench{restore: restore}, nil
		}})
	}
	rows = append(rows, harness.Row{Group: handoff, Name: refAtomic, Start: func(cfg harness.Config) (harness.Bench, error) {
		return startAtomicPingPong(cfg, 1), nil
	}})
	for _, k := range spinKinds() {
		rows = append(rows, harness.Row{Group: handoff, Name: spinLabel(k), Start: func(cfg harness.Config) (harness.Bench, error) {
			restore, err := useSpin(k)
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

// useSpin makes k the process's spin kind and returns the func that puts
// back the kind in force before.
func useSpin(k knit.SpinKind) (restore func(), err error) {
	prev := knit.CPU().Spin
	if err := knit.SetSpin(k); err != nil {
		knit.SetSpin(prev)
		return nil, err
	}
	return func() { knit.SetSpin(prev) }, nil
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
