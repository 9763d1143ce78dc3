// Package cputime reads the CPU time this process has used, for the
// benchmarks' CPU-per-op and idle-cores columns in every knit package and
// in the bench module.
package cputime

import "time"

// Process returns the user plus system CPU time of every thread of this
// process so far, and whether the platform could say. Process-wide on
// purpose: a handoff's cost includes the partner's spinning and the
// runtime's background work, not just the caller's thread.
func Process() (time.Duration, bool) { return process() }

// Used is Process without the flag: 0 where the platform cannot say, so
// a CPU column reads 0 there rather than failing. The tests and
// benchmarks of every package read it.
func Used() time.Duration {
	d, _ := process()
	return d
}
