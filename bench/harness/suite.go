// Package harness runs benchmark suites: named rows timed in interleaved
// rounds, with CPU, context switches and allocations taken over the same
// window, and summarised with an interval on every median.
//
// The harness knows nothing about what it measures. A suite is a list of
// rows in groups (one table each), with a reference row per group; a row
// starts an instance (workers, servers, threads), the harness times
// Run(n) on it, then closes it. Every figure comes from a measurement
// taken in this process, in this run.
//
// It is the harness knitbench's own suites use, importable from another
// module: write a Suite, and run it with package knitbench's Main (the
// whole command: flags, progress, verdict, tables, plots, JSON and
// compare) or with Run and package report. See examples/outside in this
// module for a suite of one's own, built and run from a module outside it.
package harness

import (
	"io"
	"strings"
	"time"
)

// Scale says how big a run is. Suites pick sizes (element counts, sweep
// widths, problem sizes) from it; rounds and durations come from Config.
type Scale int

const (
	// Tiny is for tests: every row must run in milliseconds, also under
	// -race, so the smoke test can exercise every suite.
	Tiny Scale = iota
	// Quick is the default: a whole run of knitbench's suites in a few
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
	Pin      bool          // bind every thread a row locks with LockThread to its own CPU, where the OS allows it
	// Progress receives the per-round log (suite, round, row, ops), one
	// line per row per round; nil for none.
	Progress io.Writer
	// Observe, when set, is called before each calibration and each timed
	// window, and once when the suite is done: what a progress display
	// needs. It runs on the runner's goroutine, outside every window.
	Observe func(Event)
	// Counters are read on both sides of every timed window, like the
	// CPU time; nil reads none. OpenCounters makes a set.
	Counters *Counters
}

// Phase is what the runner is about to do.
type Phase int

const (
	Calibrating Phase = iota // the row's calibration pass (also its warm-up)
	Measuring                // one timed window of the row
	SuiteDone                // every row done; Row and Round are 0
)

// Event is one step of a suite's run, for Config.Observe.
type Event struct {
	Suite  string
	Phase  Phase
	Row    int    // index of the row in the suite, 0-based
	Rows   int    // rows in the suite
	Name   string // the row: "group / name", or the name alone
	Round  int    // 1-based during Measuring, 0 otherwise
	Rounds int
}

// Suite is a named set of rows that are compared with each other.
//
// Rows are grouped into tables by Row.Group; within each table the row
// named Ref is the reference that the ratio column divides by. A suite
// whose rows come from several places (knitbench's channel rows in one
// file and its knit rows in another) concatenates them in Rows.
type Suite struct {
	Name        string
	Description string
	Reproduces  string // the published benchmark whose shape it reproduces, or ""
	Unit        string // what one op is, e.g. "round trip"
	// Ref names the reference row of each group: the ratio column is
	// each row's time over it, round by round. A reference that turns
	// out unstable in a run (its rounds spread over 3× or more: a
	// bimodal limit), or a limit far from the rows it judges (20× from
	// their median), is replaced by the table's first Go row (KindGo),
	// else its first peer row (never a knit row), if that row is
	// steadier; once replaced in one table, it is replaced in every
	// table that has a Go row. The tables say so; see SuiteResult.Refs.
	Ref string
	// Speedup adds a column ref/median: how many times faster than the
	// reference a row is (knitbench's "heavy" suite's reading).
	Speedup bool
	// PlotRowsOnX is kept for suites written for the line plots of
	// earlier versions; the plots are now one panel per group and ignore it.
	PlotRowsOnX bool
	Rows        func(cfg Config) []Row
}

// Row is one case of a suite.
type Row struct {
	Group string // table within the suite; "" when the suite has one table
	Name  string // what it is, and which API it uses: "knit Task.CallBatch + WaitAll"
	// Kind says whose implementation the row measures, for the plots'
	// colours and the verdict's choice of rivals; KindAuto derives it
	// from Name (see KindOf).
	Kind Kind
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

// Kind is whose implementation a row measures. The plots colour by it,
// the same colour for a kind in every plot, and the verdict reads knit's
// row against the best row of KindGo or KindPeer.
type Kind string

const (
	KindAuto  Kind = ""      // derive from the name (KindOf)
	KindKnit  Kind = "knit"  // knit's rings, events, pool; in a suite of one's own, the implementation under test
	KindGo    Kind = "go"    // Go's own: channels, sync, the runtime, the standard library
	KindPeer  Kind = "peer"  // another library: xsync, ants, pond, conc, errgroup, ...
	KindLimit Kind = "limit" // a floor no implementation can beat: raw atomics, raw futex, ideal splits
)

// peerNames are the libraries whose rows are KindPeer when the name says
// nothing else.
var peerNames = []string{
	"xsync", "ants", "pond", "conc ", "conc.", "workerpool", "workiva", "lscq", "bytedance",
	"errgroup", "rigtorp", "disruptor", "unix socket", "http",
}

// KindOf is a row's kind: k unless it is KindAuto, otherwise read from
// the name: "limit…" or "ideal…" is a limit; a name that mentions knit is
// knit's; a name that mentions a peer library (xsync, ants, pond, conc,
// workerpool, errgroup, …) or a transport outside the process's memory
// (unix socket, HTTP) is a peer; everything else is Go's own.
func KindOf(k Kind, name string) Kind {
	if k != KindAuto {
		return k
	}
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "limit") || strings.HasPrefix(n, "ideal"):
		return KindLimit
	case strings.Contains(n, "knit"):
		return KindKnit
	}
	for _, p := range peerNames {
		if strings.Contains(n, p) {
			return KindPeer
		}
	}
	if strings.HasPrefix(n, "conc") {
		return KindPeer
	}
	return KindGo
}
