//go:build !linux

package perfcount

import (
	"fmt"
	"runtime"
)

// Set is a group of counters, none of which counts here.
type Set struct {
	info []Info
}

// Open reports every counter unavailable: perf_event_open is Linux's,
// and the harness reads no equivalent here (macOS offers its PMU only
// through the private kperf framework).
func Open(cs ...Counter) *Set {
	s := &Set{info: make([]Info, len(cs))}
	for i, c := range cs {
		s.info[i] = Info{
			Name:   c.String(),
			Why:    "not Linux",
			Detail: fmt.Sprintf("no perf_event_open on %s: %v", runtime.GOOS, ErrUnsupported),
		}
	}
	return s
}

// Read reads nothing: no counter is available.
func (s *Set) Read() Counts { return nil }

// Close does nothing.
func (s *Set) Close() error { return nil }
