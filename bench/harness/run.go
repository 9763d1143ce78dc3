package harness

import (
	"fmt"
	"runtime"
	"time"
)

// maxOps bounds calibration so a row whose op is nearly free still ends.
const maxOps = 1 << 30

// Run measures every row of s: one calibration pass per row, then
// cfg.Rounds rounds that each visit every row in order (A B C, A B C, ...)
// and time it for about cfg.Duration. Interleaving spreads slow drift of
// a noisy machine (a neighbour's build, frequency changes) over all rows
// instead of landing on one.
//
// Each visit starts a fresh instance, runs a GC so the window does not pay
// for an earlier row's garbage, then times Run with the process's CPU
// time, allocation count and counters (cfg.Counters) read on both sides
// of the window. A row that
// fails keeps its error and is skipped for the remaining rounds.
func Run(s Suite, cfg Config) SuiteResult {
	begin := time.Now()
	if cfg.Rounds < 1 {
		cfg.Rounds = 1
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 100 * time.Millisecond
	}
	// The runner's own goroutine is not locked or pinned: a locked caller
	// would make every channel handoff switch threads and charge rows
	// that never asked for a thread of their own. Rows that want locked,
	// pinned ends (the limits) call cfg.LockThread in their instances.

	rows := s.Rows(cfg)
	res := SuiteResult{
		Name: s.Name, Description: s.Description, Reproduces: s.Reproduces,
		Unit: s.Unit, Ref: s.Ref, Speedup: s.Speedup, PlotRowsOnX: s.PlotRowsOnX,
		Rows: make([]RowResult, len(rows)), Counters: cfg.Counters.Info(),
	}
	ev := Event{Suite: s.Name, Rows: len(rows), Rounds: cfg.Rounds}
	observe := func(phase Phase, i, round int) {
		if cfg.Observe != nil {
			e := ev
			e.Phase, e.Row, e.Round = phase, i, round
			if phase != SuiteDone {
				e.Name = rowLabel(rows[i])
			}
			cfg.Observe(e)
		}
	}
	ops := make([]int, len(rows))
	outside := make([]bool, len(rows))
	for i, row := range rows {
		rr := &res.Rows[i]
		rr.Group, rr.Name, rr.Bytes, rr.Versus = row.Group, row.Name, row.Bytes, row.Versus
		rr.Kind = KindOf(row.Kind, row.Name)
		observe(Calibrating, i, 0)
		cfg.progress("%s: calibrate %s", s.Name, rowLabel(row))
		n, holds, err := calibrateRow(row, cfg)
		if err != nil {
			rr.Error = err.Error()
			cfg.progress("%s: %s: %v", s.Name, rowLabel(row), err)
			continue
		}
		ops[i], outside[i] = n, holds
		rr.AllocsWithSetup = holds
	}
	for round := 1; round <= cfg.Rounds; round++ {
		for i, row := range rows {
			rr := &res.Rows[i]
			if rr.Error != "" {
				continue
			}
			observe(Measuring, i, round)
			cfg.progress("%s: round %d/%d: %s (%d ops)", s.Name, round, cfg.Rounds, rowLabel(row), ops[i])
			smp, err := measure(row, cfg, ops[i], outside[i])
			if err != nil {
				rr.Error = fmt.Sprintf("round %d: %v", round, err)
				cfg.progress("%s: %s: %v", s.Name, rowLabel(row), err)
				continue
			}
			smp.Round = round
			rr.Samples = append(rr.Samples, smp)
		}
	}
	res.Summarize()
	res.Elapsed = time.Since(begin)
	observe(SuiteDone, 0, 0)
	return res
}

func rowLabel(r Row) string {
	if r.Group == "" {
		return r.Name
	}
	return r.Group + " / " + r.Name
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "knitbench: "+format+"\n", args...)
	}
}

// calibrateRow picks the op count for one window: it runs n = 1, 2, ...
// growing by the observed rate until a run lasts a quarter of the target,
// then scales n to the whole target. It doubles as the row's warm-up.
//
// It also finds out whether the row's goroutines hold off a
// stop-the-world: one runtime.ReadMemStats with the instance running,
// timed. A row that spins where the scheduler cannot preempt it (an
// assembly loop) makes that read wait until the loop yields, seconds on
// a loaded machine; such a row's windows read the allocation count
// outside the instance's life instead (see measure).
func calibrateRow(row Row, cfg Config) (n int, holdsSTW bool, err error) {
	b, err := row.Start(cfg)
	if err != nil {
		return 0, false, fmt.Errorf("start: %w", err)
	}
	n, err = calibrate(b, cfg.Duration, maxOps)
	// Timed once the instance is in full swing, as a window would read.
	var ms runtime.MemStats
	t0 := time.Now()
	runtime.ReadMemStats(&ms)
	holdsSTW = time.Since(t0) > stwStall
	if cerr := b.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return n, holdsSTW, err
}

// stwStall is how long a ReadMemStats may take before the row is taken
// to hold off stopping the world: a normal one takes microseconds, tens
// on a loaded VM.
const stwStall = 20 * time.Millisecond

func calibrate(b Bench, target time.Duration, limit int) (int, error) {
	n := 1
	for {
		t0 := time.Now()
		if err := b.Run(n); err != nil {
			return 0, err
		}
		el := max(time.Since(t0), 1)
		if el >= target/4 || n >= limit {
			per := float64(el) / float64(n)
			return clamp(int(float64(target)/per+0.5), 1, limit), nil
		}
		next := int(float64(n) * float64(target/4) / float64(el) * 1.2)
		n = clamp(next, n+1, min(100*n, limit))
	}
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

// measure starts one instance and times ops on it for about
// cfg.Duration: it runs chunks of a tenth of the calibrated count until
// the window is over. A noisy machine can make ops ten times slower than
// they were at calibration (a neighbour's build, a worker woken on
// another CPU instead of this one); stopping on time keeps a run's length
// what the flags say, and the sample records the ops actually done.
//
// The GC that keeps an earlier row's garbage out of the window runs
// before the instance starts. Allocations are runtime.MemStats.Mallocs
// on both sides of the window, exact; for a row that holds off a
// stop-the-world (outside, true: see calibrateRow) they are read before
// Start and after Close instead, so the row's setup is counted with its
// window, and no read waits seconds for a loop to yield.
func measure(row Row, cfg Config, n int, outside bool) (Sample, error) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	if outside {
		runtime.ReadMemStats(&m0)
	}
	b, err := row.Start(cfg)
	if err != nil {
		return Sample{}, fmt.Errorf("start: %w", err)
	}
	chunk := max(1, n/10)
	done := 0
	if !outside {
		runtime.ReadMemStats(&m0)
	}
	k0 := cfg.Counters.Read()
	c0, okc0 := processCPU()
	t0 := time.Now()
	for err == nil && (done == 0 || time.Since(t0) < cfg.Duration) {
		err = b.Run(chunk)
		done += chunk
	}
	wall := time.Since(t0)
	c1, okc1 := processCPU()
	k1 := cfg.Counters.Read()
	if !outside {
		runtime.ReadMemStats(&m1)
	}
	if cerr := b.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if outside {
		runtime.ReadMemStats(&m1)
	}
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Ops: done, Wall: max(wall, 1), Mallocs: m1.Mallocs - m0.Mallocs, Counters: k1.Sub(k0)}
	if okc0 && okc1 {
		s.CPU = c1 - c0
	}
	return s, nil
}
