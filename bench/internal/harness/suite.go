// Package harness runs benchmark suites: named rows timed in interleaved
// rounds, with CPU and allocation figures taken over the same window.
//
// The harness knows nothing about what it measures. A suite is a list of
// rows; a row starts an instance (workers, servers, threads), the harness
// times Run(n) on it, then closes it. Every figure comes from a measurement
// taken in this process, in this run.
package harness

import (
	"io"
	"time"

	"github.com/knit-go/knit/bench/internal/perfcount"
)

// Scale says how big a run is. Suites pick sizes (element counts, sweep
// widths, problem sizes) from it; rounds and durations come from Config.
type Scale int

const (
	// Tiny is for tests: every row must run in milliseconds, also under
	// -race, so the smoke test can exercise every suite.
	Tiny Scale = iota
	// Quick is the default: a whole run of every suite in about two
	// minutes on a 2-core machine.
	Quick
	// Full is for large machines: wider sweeps and bigger problems.
	Full
)

func (s Scale) String() string {
	switch s {
	case Tiny:
		return "tiny"
	case Quick:
		return "quick"
	case Full:
		return "full"
	}
	return "scale?"
}

// Config is what a run was asked for. Suites read Scale (sizes) and use
// LockThread (pinning); the runner reads the rest.
type Config struct {
	Scale    Scale
	Rounds   int           // timed rounds per row; each round visits every row once
	Duration time.Duration // target length of one row's timed window in one round
	Pin      bool          // pin measuring threads to CPUs where the OS allows it
	Progress io.Writer     // progress lines (suite, round, row); nil for none
	// Counters are read on both sides of every timed window, like the
	// CPU time; nil reads none.
	Counters *perfcount.Set
}

// Suite is a named set of rows that are compared with each other.
//
// Rows are grouped into tables by Row.Group; within each table the row
// named Ref is the reference that the ratio column divides by. A suite
// whose rows come from several files (for example the channel rows here
// and the knit rows from another file) gets them through Rows: the
// registry in package suites concatenates every provider's rows.
type Suite struct {
	Name        string
	Description string
	Reproduces  string // the published benchmark whose shape it reproduces, or ""
	Unit        string // what one op is, e.g. "round trip"
	Ref         string // name of the reference row in each group
	// Speedup adds a column ref/median: how many times faster than the
	// reference a row is (the "heavy" suite's reading).
	Speedup bool
	// PlotRowsOnX puts rows on the plot's x axis and draws one series per
	// group; the default is groups on x and one series per row name.
	PlotRowsOnX bool
	Rows        func(cfg Config) []Row
}

// Row is one case of a suite.
type Row struct {
	Group string // table within the suite; "" when the suite has one table
	Name  string
	// Bytes is the payload moved by one op, for the GB/s column; 0 when
	// the row moves no payload worth counting.
	Bytes int64
	// Versus names the row of the same group this one is read against
	// round by round (RowResult.RoundRatio), besides the group's
	// reference: "" for none. A round runs every row once, one after the
	// other, so a machine whose speed drifts between rounds moves a row
	// and its counterpart together.
	Versus string
	// Start makes a fresh instance. The harness calls it once per round
	// (and once to calibrate), so nothing a row leaves running overlaps
	// another row's timed window.
	Start func(cfg Config) (Bench, error)
}

// Bench is one started instance of a row.
type Bench interface {
	// Run performs n ops and returns once all n are complete. It is the
	// only part that is timed.
	Run(n int) error
	// Close stops everything Start started and waits for it.
	Close() error
}

// Func makes a Bench for rows that need no setup.
func Func(run func(n int) error) Bench { return funcBench(run) }

type funcBench func(n int) error

func (f funcBench) Run(n int) error { return f(n) }
func (f funcBench) Close() error    { return nil }
