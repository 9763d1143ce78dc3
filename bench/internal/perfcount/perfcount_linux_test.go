package perfcount

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSoftwareCounters: context switches count on every thread, also on
// threads the runtime starts after Open, and agree with getrusage's
// voluntary plus involuntary switches, which the kernel sums over the
// whole process. Where perf_event_open is refused (a CI runner's
// perf_event_paranoid, a seccomp filter) the counters must say why.
func TestSoftwareCounters(t *testing.T) {
	s := Open(ContextSwitches, CPUMigrations)
	defer s.Close()
	for _, in := range s.Info() {
		if !in.Available {
			if in.Why == "no PMU" {
				t.Errorf("%s: software counter reported as %q", in.Name, in.Why)
			}
			t.Skipf("%s unavailable here: %s (%s)", in.Name, in.Why, in.Detail)
		}
	}
	tids0, _ := threads()
	var ru0, ru1 unix.Rusage
	c0 := s.Read()
	unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	// Sleepers each locked to a thread of its own, more of them than
	// the process has threads now, so that the runtime must start new
	// ones after Open: each sleep is a context switch of its thread.
	const sleepers, sleeps = 16, 50
	var wg sync.WaitGroup
	for range sleepers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range sleeps {
				time.Sleep(200 * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	tids1, _ := threads()
	d := s.Read().Sub(c0)
	rusage := (ru1.Nvcsw - ru0.Nvcsw) + (ru1.Nivcsw - ru0.Nivcsw)
	cs := d[ContextSwitches.String()]
	t.Logf("threads %d at Open, %d after; %d sleepers x %d sleeps: perf context-switches %d, getrusage switches %d, cpu-migrations %d",
		len(tids0), len(tids1), sleepers, sleeps, cs, rusage, d[CPUMigrations.String()])
	if cs < sleepers*sleeps/2 {
		t.Errorf("perf counted %d context switches for %d sleeps: threads started after Open are not counted", cs, sleepers*sleeps)
	}
	// The two counts are taken at slightly different moments and
	// getrusage's include the reads; they must agree roughly.
	if float64(cs) < 0.5*float64(rusage) || float64(cs) > 2*float64(rusage)+100 {
		t.Errorf("perf counted %d context switches, getrusage %d: not the whole process", cs, rusage)
	}
}

// TestHardwareCounters: a hardware counter counts a busy loop, or says
// why it cannot (a VM without a PMU: "no PMU").
func TestHardwareCounters(t *testing.T) {
	s := Open(Cycles, Instructions, CacheMisses, BranchMisses)
	defer s.Close()
	c0 := s.Read()
	x := uint64(1)
	for i := range 10_000_000 {
		x = x*6364136223846793005 + uint64(i)
	}
	if x == 0 {
		t.Log("unlikely")
	}
	d := s.Read().Sub(c0)
	for _, in := range s.Info() {
		v, ok := d[in.Name]
		if !in.Available {
			if ok {
				t.Errorf("%s unavailable (%s) but read %d", in.Name, in.Why, v)
			}
			t.Logf("%s: n/a: %s (%s)", in.Name, in.Why, in.Detail)
			continue
		}
		t.Logf("%s: %d over 10M loop steps (user only %v)", in.Name, v, in.UserOnly)
		if (in.Name == "cycles" || in.Name == "instructions") && v < 1_000_000 {
			t.Errorf("%s counted %d over 10M loop steps", in.Name, v)
		}
	}
}
