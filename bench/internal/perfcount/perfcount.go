// Package perfcount counts kernel and CPU events for the whole process:
// context switches and CPU migrations (software events, which work on
// VMs), and cycles, instructions, cache misses and branch misses where
// the machine has a PMU. It uses perf_event_open(2) through
// golang.org/x/sys/unix, without cgo; elsewhere (macOS, Windows, a
// kernel or container that refuses the call) every counter reports why it
// is not available, and reads nothing.
//
// What is counted: every thread of the process. perf_event_open counts
// one thread (pid = 0 or a thread id; the process id names the main
// thread only), and with inherit set it also counts the threads that
// thread starts after the open. Open therefore opens each counter on
// every thread in /proc/self/task, with inherit: a thread the Go runtime
// starts later is started by one of them and counts through it, and a
// thread that exits adds its count to its parent's before it goes. So a
// reading covers the runtime's threads (sysmon, GC workers, idle Ms
// parking) and the harness's, as getrusage's CPU time does. A thread
// started while Open lists and opens could be missed or counted twice,
// so Open lists the threads again after opening and starts over if the
// set changed.
package perfcount

import (
	"errors"
	"fmt"
)

// Counter is one event.
type Counter int

const (
	ContextSwitches Counter = iota // software: the scheduler switched a thread of the process out
	CPUMigrations                  // software: a thread moved to another CPU
	Cycles                         // hardware: CPU cycles
	Instructions                   // hardware: instructions retired
	CacheMisses                    // hardware: last-level cache misses, as the PMU defines them
	BranchMisses                   // hardware: mispredicted branches
	numCounters
)

// Default is what knitbench counts unless asked for more.
var Default = []Counter{ContextSwitches}

// All is every counter, in table order.
var All = []Counter{ContextSwitches, CPUMigrations, Cycles, Instructions, CacheMisses, BranchMisses}

var names = [numCounters]string{
	"context-switches", "cpu-migrations", "cycles", "instructions", "cache-misses", "branch-misses",
}

// String is the counter's name as perf(1) spells it.
func (c Counter) String() string {
	if c >= 0 && c < numCounters {
		return names[c]
	}
	return fmt.Sprintf("Counter(%d)", int(c))
}

// Hardware reports whether the counter needs a PMU.
func (c Counter) Hardware() bool { return c >= Cycles }

// Info says whether a counter of a Set counts, and if not, why.
type Info struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	// UserOnly: only user-space events are counted (perf_event_paranoid
	// allows no more); the kernel's share of the work is not in it.
	UserOnly bool `json:"user_only,omitempty"`
	// Why is a short reason it is not available, for a table cell:
	// "no PMU", "not permitted", "no perf_event_open".
	Why string `json:"why,omitempty"`
	// Detail is the whole story: the error, perf_event_paranoid.
	Detail string `json:"detail,omitempty"`
}

// Counts is one reading of a Set: each counter's total since Open, by
// name, for the available counters only.
type Counts map[string]uint64

// Sub returns c - earlier, counter by counter.
func (c Counts) Sub(earlier Counts) Counts {
	if len(c) == 0 {
		return nil
	}
	d := make(Counts, len(c))
	for k, v := range c {
		d[k] = v - earlier[k]
	}
	return d
}

// ErrUnsupported is the Detail's cause where the OS has no
// perf_event_open.
var ErrUnsupported = errors.ErrUnsupported

// A Set (perfcount_$GOOS.go) is a group of counters open on the whole
// process, from Open. Read and Close may be called from any goroutine.

// Info describes each counter of the set, in the order Open was given.
func (s *Set) Info() []Info {
	if s == nil {
		return nil
	}
	return append([]Info(nil), s.info...)
}

// Available reports whether any counter of the set counts.
func (s *Set) Available() bool {
	for _, in := range s.Info() {
		if in.Available {
			return true
		}
	}
	return false
}
