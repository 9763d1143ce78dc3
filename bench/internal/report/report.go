// Package report turns suite results into what a reader keeps: markdown
// tables side by side, a JSON file with every raw sample, and one plot per
// suite, all headed by a description of the machine they came from.
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/bench/internal/perfcount"
)

// Report is one knitbench run.
type Report struct {
	Machine Machine               `json:"machine"`
	Run     RunInfo               `json:"run"`
	Suites  []harness.SuiteResult `json:"suites"`
}

// RunInfo is what the run was asked for.
type RunInfo struct {
	Started  time.Time     `json:"started"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Args     []string      `json:"args"`
	Scale    string        `json:"scale"`
	Rounds   int           `json:"rounds"`
	Duration time.Duration `json:"duration_ns"` // per row per round
	Pin      bool          `json:"pin"`
	// Counters are the counters the run read (cfg.Counters), available
	// or not.
	Counters []perfcount.Info `json:"counters,omitempty"`
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
		Counters: cfg.Counters.Info(),
	}
}

// WriteDir writes results.md, results.json and one plot per suite (in
// plotFormat: "svg" or "png") into dir, creating it. It returns the paths
// written.
func WriteDir(dir string, r Report, plotFormat string) ([]string, error) {
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
	for _, s := range r.Suites {
		img, err := Plot(s, plotFormat)
		if err != nil {
			return paths, fmt.Errorf("plot %s: %w", s.Name, err)
		}
		if img == nil {
			continue
		}
		if err := write(s.Name+"."+plotFormat, img); err != nil {
			return paths, err
		}
	}
	return paths, nil
}
