//go:build race

package testutil

// Race reports that the race detector is on: stress tests scale down, and
// allocation tests skip (the detector allocates).
const Race = true
