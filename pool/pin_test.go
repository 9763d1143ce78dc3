package pool

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/affinity"
)

// TestPinnedEveryCPU pins a pool to each available CPU in turn and checks
// its tasks run there, and that the pins are released on Close.
func TestPinnedEveryCPU(t *testing.T) {
	watchdog(t, 30*time.Second)
	avail, err := affinity.Available()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	base := runtime.NumGoroutine()
	for cpu := range avail.All() {
		for _, b := range []knit.Backend{knit.BackendAuto, knit.BackendFutex} {
			var set affinity.CPUSet
			set.Add(cpu)
			p := New(Config{Workers: 2, Pinning: Pinning{CPUs: set}, Park: knit.Park{Backend: b}})
			if s := p.Stats(); s.Pinned != 2 {
				t.Fatalf("cpu %d: %d workers pinned, want 2", cpu, s.Pinned)
			}
			where := NewTask(p, func(int) int {
				c, err := affinity.Current()
				if err != nil {
					return -1
				}
				return c
			})
			for i := range 20 {
				if c, err := where.Call(i).Wait(context.Background()); err != nil || c != cpu {
					t.Fatalf("pinned to %d, task ran on %d (%v)", cpu, c, err)
				}
			}
			p.Close()
			if s := p.Stats(); s.Pinned != 0 {
				t.Fatalf("after Close %d workers still pinned", s.Pinned)
			}
		}
	}
	// The calling goroutine was never pinned.
	if got, err := affinity.Available(); err != nil || got != avail {
		t.Fatalf("available set changed: %v -> %v (%v)", avail, got, err)
	}
	checkNoLeak(t, base)
}

// TestPinnedSpread pins one worker per physical core.
func TestPinnedSpread(t *testing.T) {
	watchdog(t, 10*time.Second)
	topo, err := affinity.Topology()
	if err != nil {
		t.Skip(err)
	}
	cores := topo.PhysicalCores()
	p := New(Config{Workers: len(cores) + 1, Pinning: Pinning{Spread: true}})
	defer p.Close()
	if s := p.Stats(); s.Pinned != len(cores)+1 {
		t.Fatalf("%d of %d workers pinned", s.Pinned, len(cores)+1)
	}
	for i, w := range p.workersNow() {
		if want := cores[i%len(cores)]; w.cpu != want {
			t.Fatalf("worker %d on cpu %d, want %d", i, w.cpu, want)
		}
	}
}

// TestPinUnavailable: a CPU outside the process's mask leaves the worker
// unpinned but working.
func TestPinUnavailable(t *testing.T) {
	var set affinity.CPUSet
	set.Add(60000)
	p := New(Config{Workers: 1, Pinning: Pinning{CPUs: set}})
	defer p.Close()
	if s := p.Stats(); s.Pinned != 0 {
		t.Fatalf("pinned to an unavailable CPU: %+v", s)
	}
	if v, err := NewTask(p, func(x int) int { return x }).Call(7).Wait(context.Background()); v != 7 || err != nil {
		t.Fatal(v, err)
	}
}
