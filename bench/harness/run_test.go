package harness

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit/bench/internal/perfcount"
)

// tinyConfig keeps harness tests to milliseconds, also under -race.
func tinyConfig() Config {
	return Config{Scale: Tiny, Rounds: 2, Duration: time.Millisecond}
}

func TestRunInterleavesAndSummarizes(t *testing.T) {
	var order []string
	var starts, closes atomic.Int32
	row := func(name string, spin int) Row {
		return Row{Name: name, Start: func(Config) (Bench, error) {
			starts.Add(1)
			return &countBench{name: name, spin: spin, order: &order, closes: &closes}, nil
		}}
	}
	s := Suite{
		Name: "t", Ref: "a",
		Rows: func(Config) []Row { return []Row{row("a", 10), row("b", 40)} },
	}
	res := Run(s, tinyConfig())
	if starts.Load() != closes.Load() {
		t.Errorf("%d instances started, %d closed", starts.Load(), closes.Load())
	}
	// Calibration visits a then b; then each round visits a then b.
	got := strings.Join(dedupe(order), " ")
	if got != "a b a b a b" {
		t.Errorf("visit order %q, want %q", got, "a b a b a b")
	}
	for _, r := range res.Rows {
		if r.Error != "" {
			t.Fatalf("row %s: %s", r.Name, r.Error)
		}
		if len(r.Samples) != 2 {
			t.Errorf("row %s: %d samples, want 2", r.Name, len(r.Samples))
		}
		if !(r.MedianNs > 0) || math.IsInf(r.MedianNs, 0) {
			t.Errorf("row %s: median %v", r.Name, r.MedianNs)
		}
	}
	// The reference is a unless a was unstable and b steadier (a loaded
	// machine); whichever it is reads 1.
	for _, r := range res.Rows {
		if r.Name == res.RefOf("") && r.Ratio != 1 {
			t.Errorf("reference %s: ratio = %v, want 1", r.Name, r.Ratio)
		}
	}
}

func TestRunRecordsErrors(t *testing.T) {
	boom := errors.New("boom")
	s := Suite{Name: "t", Ref: "ok", Rows: func(Config) []Row {
		return []Row{
			{Name: "ok", Start: func(Config) (Bench, error) { return Func(func(int) error { return nil }), nil }},
			{Name: "bad", Start: func(Config) (Bench, error) { return nil, boom }},
		}
	}}
	res := Run(s, tinyConfig())
	if res.Rows[0].Error != "" || !strings.Contains(res.Rows[1].Error, "boom") {
		t.Errorf("errors = %q, %q", res.Rows[0].Error, res.Rows[1].Error)
	}
}

func TestCalibrateRespectsLimit(t *testing.T) {
	n, err := calibrate(Func(func(int) error { return nil }), time.Second, 1000)
	if err != nil || n != 1000 {
		t.Errorf("calibrate = %d, %v; want 1000, nil", n, err)
	}
}

// TestMeasureIdleBlocked: a goroutine blocked on a channel costs no CPU.
// The bound is loose on purpose: this box is shared and noisy.
func TestMeasureIdleBlocked(t *testing.T) {
	idle, err := MeasureIdle(func() (func(), error) {
		ch := make(chan struct{})
		done := make(chan struct{})
		go func() { <-ch; close(done) }()
		return func() { close(ch); <-done }, nil
	}, 10*time.Millisecond, 200*time.Millisecond)
	if err != nil {
		t.Skip(err)
	}
	if idle.Cores < 0 || idle.Cores > 0.5 {
		t.Errorf("a blocked goroutine reads %.3f cores, want < 0.5", idle.Cores)
	}
}

// TestMeasureIdleSeesSpinner checks the measurer is not blind: a spinning
// goroutine must read above zero. The bound is far below one core because
// a spinner on a box loaded ten deep gets a small share of a CPU.
func TestMeasureIdleSeesSpinner(t *testing.T) {
	idle, err := MeasureIdle(func() (func(), error) {
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			for !stop.Load() {
			}
			close(done)
		}()
		return func() { stop.Store(true); <-done }, nil
	}, 10*time.Millisecond, 200*time.Millisecond)
	if err != nil {
		t.Skip(err)
	}
	if idle.Cores < 0.01 {
		t.Errorf("a spinning goroutine reads %.3f cores, want > 0.01", idle.Cores)
	}
}

// TestRunReadsCounters: with counters, every sample carries their
// window's counts and the summary their median per op; a row whose op
// is a sleep switches context at least once an op. Where no counter is
// available, the samples carry none (so no table can show a zero).
func TestRunReadsCounters(t *testing.T) {
	cfg := tinyConfig()
	cfg.Counters = perfcount.Open(perfcount.All...)
	defer cfg.Counters.Close()
	s := Suite{Name: "t", Ref: "sleep", Rows: func(Config) []Row {
		return []Row{{Name: "sleep", Start: func(Config) (Bench, error) {
			return Func(func(n int) error {
				for range n {
					time.Sleep(50 * time.Microsecond)
				}
				return nil
			}), nil
		}}}
	}}
	res := Run(s, cfg)
	if len(res.Counters) != len(perfcount.All) {
		t.Fatalf("suite lists %d counters, want %d", len(res.Counters), len(perfcount.All))
	}
	r := res.Rows[0]
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	for _, in := range res.Counters {
		for _, smp := range r.Samples {
			if _, ok := smp.Counters[in.Name]; ok != in.Available {
				t.Errorf("%s: available %v, in the sample %v", in.Name, in.Available, ok)
			}
		}
		if _, ok := r.CountersPerOp[in.Name]; ok != in.Available {
			t.Errorf("%s: available %v, in the summary %v", in.Name, in.Available, ok)
		}
	}
	if cs, ok := r.CountersPerOp[perfcount.ContextSwitches.String()]; ok && cs < 0.5 {
		t.Errorf("a 50 µs sleep per op switched context %.3f times per op", cs)
	}
}

type countBench struct {
	name   string
	spin   int
	order  *[]string
	closes *atomic.Int32
	sink   int
}

func (b *countBench) Run(n int) error {
	*b.order = append(*b.order, b.name)
	for i := 0; i < n*b.spin; i++ {
		b.sink += i
	}
	return nil
}

func (b *countBench) Close() error { b.closes.Add(1); return nil }

// dedupe collapses consecutive repeats (calibration runs a row many times).
func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// TestObserve: the runner reports a calibration per row, a window per
// row per round, and the suite's end, in that order.
func TestObserve(t *testing.T) {
	var events []Event
	cfg := tinyConfig()
	cfg.Observe = func(e Event) { events = append(events, e) }
	s := Suite{Name: "t", Ref: "a", Rows: func(Config) []Row {
		ok := func(Config) (Bench, error) { return Func(func(int) error { return nil }), nil }
		return []Row{{Name: "a", Start: ok}, {Group: "g", Name: "b", Start: ok}}
	}}
	Run(s, cfg)
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%d:%d:%d:%s", e.Phase, e.Row, e.Round, e.Name))
	}
	want := "0:0:0:a 0:1:0:g / b 1:0:1:a 1:1:1:g / b 1:0:2:a 1:1:2:g / b 2:0:0:"
	if strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(got, " "), want)
	}
	if e := events[2]; e.Suite != "t" || e.Rows != 2 || e.Rounds != 2 {
		t.Errorf("event %+v lacks the suite, its rows or its rounds", e)
	}
}
