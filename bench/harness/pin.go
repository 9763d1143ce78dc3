package harness

import (
	"errors"
	"runtime"
	"slices"
	"sync"

	"github.com/knit-go/knit/affinity"
)

// LockThread locks the calling goroutine to its OS thread and, when the
// run asked for pinning, binds that thread to one CPU with knit's
// affinity package: the slot-th CPU of the process's allowed set (modulo
// its size), so slot 0 and slot 1 land on different CPUs when there are
// two. The returned func undoes both, so the thread goes back to the
// runtime's pool exactly as it came. Where the OS has no thread affinity
// (darwin, others) -pin only locks, and Pins says so.
//
// Limit rows call it for both ends of a ping-pong, with or without -pin:
// a locked thread is what the "two threads" in the limit means. -pin
// binds exactly these threads: the runner's own goroutine and rows that
// lock nothing stay where the scheduler puts them (a pinned runner would
// make every channel handoff switch threads).
func (c Config) LockThread(slot int) (release func()) {
	if c.Pin {
		set, err := affinity.Available()
		if err == nil && set.Len() > 0 {
			cpus := slices.Collect(set.All())
			var release func()
			if release, err = affinity.Pin(cpus[nth(slot, len(cpus))]); err == nil {
				pins.record(nil)
				return release
			}
		}
		pins.record(err)
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// PinStats is what -pin did: threads bound to a CPU, threads that could
// only be locked, and the first error that stopped a binding.
type PinStats struct {
	Pinned int   `json:"pinned"`
	Failed int   `json:"failed"`
	Err    error `json:"-"`
}

var pins pinLog

type pinLog struct {
	mu sync.Mutex
	s  PinStats
}

func (p *pinLog) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.s.Pinned++
		return
	}
	p.s.Failed++
	if p.s.Err == nil {
		p.s.Err = err
	}
}

// Pins reports what LockThread has done with Pin set since the process
// started.
func Pins() PinStats {
	pins.mu.Lock()
	defer pins.mu.Unlock()
	return pins.s
}

// nth is slot mod n, in [0, n).
func nth(slot, n int) int {
	if slot %= n; slot < 0 {
		slot += n
	}
	return slot
}

// CanPin reports why -pin cannot bind threads here, or nil where it can:
// the OS has thread affinity and the process has CPUs to bind to.
func CanPin() error {
	set, err := affinity.Available()
	if err != nil {
		return err
	}
	if set.Len() == 0 {
		return errors.New("no CPU in the process's allowed set")
	}
	return nil
}
