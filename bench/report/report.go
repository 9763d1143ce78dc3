// Package report turns suite results into what a reader keeps: a verdict
// by use case, markdown tables side by side with an interval on every
// median, a JSON file with every raw sample and the run's provenance,
// the same samples in the Go benchmark format (for benchstat), one plot
// per suite, and the comparison of two runs; all headed by a description
// of the machine they came from.
package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/knit-go/knit/bench/harness"
)

// SchemaVersion is results.json's format. 2: schema_version, provenance
// (knit's revision, kernel, governor), every time in ns (cpu_ns_per_op
// replaced cpu_us_per_op), intervals, noise flags, kinds, the references
// used and the verdict. ReadJSON reads version 1 too.
const SchemaVersion = 2

// Report is one knitbench run.
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Subject names what the verdict and the plots' KindKnit colour
	// stand for: "knit" in knitbench, the implementation under test in
	// a suite of one's own ("" reads as knit).
	Subject  string                `json:"subject,omitempty"`
	Machine  Machine               `json:"machine"`
	Run      RunInfo               `json:"run"`
	Verdicts []Verdict             `json:"verdict,omitempty"`
	Suites   []harness.SuiteResult `json:"suites"`
}

// RunInfo is what the run was asked for and what it ran.
type RunInfo struct {
	Started  time.Time     `json:"started"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Args     []string      `json:"args"`
	Scale    string        `json:"scale"`
	Rounds   int           `json:"rounds"`
	Duration time.Duration `json:"duration_ns"` // per row per round
	Pin      bool          `json:"pin"`
	// Pinned and PinFailed count the threads -pin bound to a CPU and
	// those it could only lock (PinError says why).
	Pinned    int    `json:"pinned_threads,omitempty"`
	PinFailed int    `json:"pin_failed_threads,omitempty"`
	PinError  string `json:"pin_error,omitempty"`
	// Code is the revision of what was measured and of the harness.
	Code Provenance `json:"code"`
	// Counters are the counters the run read (cfg.Counters), available
	// or not.
	Counters []harness.CounterInfo `json:"counters,omitempty"`
	// Warnings are what the command warned about (a short window, a pin
	// that failed), kept beside the figures they qualify.
	Warnings []string `json:"warnings,omitempty"`
}

// NewRunInfo describes cfg; Started is now, without the monotonic reading
// so it survives a JSON round trip unchanged.
func NewRunInfo(cfg harness.Config, args []string) RunInfo {
	return RunInfo{
		Started:  time.Now().UTC().Round(0),
		Args:     args,
		Scale:    cfg.Scale.String(),
		Rounds:   cfg.Rounds,
		Duration: cfg.Duration,
		Pin:      cfg.Pin,
		Code:     ReadProvenance(),
		Counters: cfg.Counters.Info(),
	}
}

// New is a report of the machine as it is now and of a run of cfg.
func New(cfg harness.Config, args []string) Report {
	return Report{SchemaVersion: SchemaVersion, Machine: DescribeMachine(), Run: NewRunInfo(cfg, args)}
}

// PrepareDir makes dir ready for one run's results before anything is
// measured: it creates it (and its parents) when missing, refuses one
// that already holds files (each run writes its own directory, so no
// earlier run's plots sit beside this one's), and checks a file can be
// written there. The errors say which of these failed.
func PrepareDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) > 0:
		return fmt.Errorf("%s is not empty (an earlier run?): each run writes its own directory; name a new one or leave -out out", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	probe, err := os.CreateTemp(dir, ".knitbench-probe-*")
	if err != nil {
		return fmt.Errorf("%s is not writable: %w", dir, err)
	}
	name := probe.Name()
	probe.Close()
	return os.Remove(name)
}

// Formats of the plots WriteDir writes.
const (
	SVG = "svg"
	PNG = "png"
)

// WriteDir writes results.md, results.json, results.txt (the Go
// benchmark format) and, for every format in plots ("svg", "png"), one
// plot per suite into dir, creating it. It returns the paths written.
func WriteDir(dir string, r Report, plots ...string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	write := func(name string, data []byte) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	}
	if err := write("results.md", []byte(Markdown(r))); err != nil {
		return paths, err
	}
	js, err := EncodeJSON(r)
	if err != nil {
		return paths, err
	}
	if err := write("results.json", js); err != nil {
		return paths, err
	}
	if err := write("results.txt", []byte(GoBench(r))); err != nil {
		return paths, err
	}
	for _, s := range r.Suites {
		for _, format := range plots {
			img, err := PlotSubject(s, format, r.Subject)
			if err != nil {
				return paths, fmt.Errorf("plot %s: %w", s.Name, err)
			}
			if img == nil {
				continue
			}
			if err := write(s.Name+"."+format, img); err != nil {
				return paths, err
			}
		}
	}
	return paths, nil
}

// Checkpoint writes results.json alone into dir: the suites done so far,
// so that a run stopped halfway keeps what it measured.
func Checkpoint(dir string, r Report) error {
	js, err := EncodeJSON(r)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".results.json.tmp")
	if err := os.WriteFile(tmp, js, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "results.json"))
}
