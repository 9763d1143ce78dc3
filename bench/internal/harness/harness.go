// Package harness is knitbench's suites' name for the public harness,
// github.com/knit-go/knit/bench/harness: every identifier here is that
// package's own (aliases), so a suite written against either is written
// against the same API. New code imports the public package.
package harness

import (
	"time"

	"github.com/knit-go/knit/bench/harness"
)

type (
	Scale       = harness.Scale
	Config      = harness.Config
	Suite       = harness.Suite
	Row         = harness.Row
	Bench       = harness.Bench
	Kind        = harness.Kind
	Sample      = harness.Sample
	RowResult   = harness.RowResult
	SuiteResult = harness.SuiteResult
	Idle        = harness.Idle
	Event       = harness.Event
	Counters    = harness.Counters
)

const (
	Tiny  = harness.Tiny
	Quick = harness.Quick
	Full  = harness.Full

	KindAuto  = harness.KindAuto
	KindKnit  = harness.KindKnit
	KindGo    = harness.KindGo
	KindPeer  = harness.KindPeer
	KindLimit = harness.KindLimit
)

// Run is harness.Run.
func Run(s Suite, cfg Config) SuiteResult { return harness.Run(s, cfg) }

// Func is harness.Func.
func Func(run func(n int) error) Bench { return harness.Func(run) }

// MeasureIdle is harness.MeasureIdle.
func MeasureIdle(start func() (stop func(), err error), settle, window time.Duration) (Idle, error) {
	return harness.MeasureIdle(start, settle, window)
}

// IdleRow is harness.IdleRow.
func IdleRow(group, name string, tick time.Duration, start func(cfg Config) (stop func(), err error)) Row {
	return harness.IdleRow(group, name, tick, start)
}

// KindOf is harness.KindOf.
func KindOf(k Kind, name string) Kind { return harness.KindOf(k, name) }
