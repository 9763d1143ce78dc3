package affinity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/cpuid/v2/topology"
)

func TestTopologyLive(t *testing.T) {
	l, err := Topology()
	if err != nil {
		t.Fatal(err)
	}
	avail := available(t)
	var ids CPUSet
	for _, c := range l.CPUs {
		ids.Add(c.ID)
	}
	if ids != avail {
		t.Errorf("Topology() CPUs %v, Available() %v", ids, avail)
	}
	if l.Source != "sysfs" && l.Source != "sysfs+cpuid" {
		t.Errorf("Source %q", l.Source)
	}
	checkLayout(t, l)
	for _, c := range l.CPUs {
		if c.Package < 0 || c.L1D < 0 || c.L2 < 0 || c.L3 < 0 {
			t.Errorf("CPU %+v: negative id or size", c)
		}
	}
	t.Logf("source %s, PhysicalCores %v", l.Source, l.PhysicalCores())
	for _, c := range l.CPUs {
		t.Logf("%+v", c)
	}
}

func TestScannedTypes(t *testing.T) {
	core := func(typ topology.CoreType, ids ...int) topology.Core {
		c := topology.Core{Type: typ}
		for _, id := range ids {
			c.Threads = append(c.Threads, topology.Thread{ID: id})
		}
		return c
	}
	// Scanned under taskset -c 2-3,6-7: visit order 0..3 is CPUs 2,3,6,7.
	sys := &topology.System{Scanned: true, Online: 4, Packages: []topology.Package{{Groups: []topology.Group{{
		Cores: []topology.Core{core(topology.Performance, 0, 1), core(topology.Efficiency, 2), core(topology.LPEfficiency, 3)},
	}}}}}
	avail := set("2-3,6-7")
	got, ok := scannedTypes(sys, avail)
	want := map[int]CoreType{2: CorePerformance, 3: CorePerformance, 6: CoreEfficiency, 7: CoreEfficiency}
	if d := cmp.Diff(want, got); !ok || d != "" {
		t.Errorf("scannedTypes ok=%v, mismatch (-want +got):\n%s", ok, d)
	}
	// A scan that skipped a CPU cannot be mapped.
	sys.Online = 3
	if _, ok := scannedTypes(sys, avail); ok {
		t.Error("scannedTypes accepted a scan of 3 CPUs for 4")
	}
	if _, ok := scannedTypes(&topology.System{}, avail); ok {
		t.Error("scannedTypes accepted an unscanned System")
	}
}
