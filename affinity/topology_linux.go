package affinity

import (
	"os"
	"slices"

	"github.com/klauspost/cpuid/v2"
	"github.com/klauspost/cpuid/v2/topology"
)

// Topology returns the topology of the CPUs this process may run on
// (Available), read from sysfs. Siblings and LLC sets are limited to those
// CPUs too.
//
// Where sysfs lacks cache information (as in many virtual machines), the
// cache sizes are those CPUID reports for the CPU this process started on,
// applied to every such CPU. On Intel hybrid parts whose kernel lists no
// core types, each CPU is visited to read CPUID leaf 0x1A, which pins a
// thread to each CPU in turn for a moment. Source says whether CPUID was
// used.
func Topology() (Layout, error) {
	l, noCache, err := parseSysfs(os.DirFS("/sys"))
	if err != nil {
		return Layout{}, err
	}
	avail, err := Available()
	if err != nil {
		return Layout{}, err
	}
	filled := fillCachesFromCPUID(l.CPUs, noCache)
	scanned := scanCoreTypes(l.CPUs, avail)
	if filled || scanned {
		l.Source = "sysfs+cpuid"
	}
	return l.restrict(avail), nil
}

// fillCachesFromCPUID sets the cache sizes of the CPUs in noCache from
// cpuid's record of the CPU that ran its init. That assumes all CPUs
// alike, which hybrid parts are not; but sysfs lacks cache directories
// mostly in virtual machines, which present their vCPUs alike. It reports
// whether it set anything.
func fillCachesFromCPUID(cpus []CPU, noCache CPUSet) bool {
	c := cpuid.CPU.Cache
	if noCache.Len() == 0 || (c.L1D <= 0 && c.L2 <= 0 && c.L3 <= 0) {
		return false
	}
	for i := range cpus {
		if noCache.Has(cpus[i].ID) {
			cpus[i].L1D, cpus[i].L2, cpus[i].L3 = max(c.L1D, 0), max(c.L2, 0), max(c.L3, 0)
		}
	}
	return true
}

// scanCoreTypes sets the core types of cpus from CPUID leaf 0x1A, read on
// each CPU, if the part is hybrid and sysfs named no types. It reports
// whether it set them.
func scanCoreTypes(cpus []CPU, avail CPUSet) bool {
	if !cpuid.CPU.Supports(cpuid.HYBRID_CPU) ||
		slices.ContainsFunc(cpus, func(c CPU) bool { return c.Type != CoreUnknown }) {
		return false
	}
	var sys *topology.System
	var err error
	// The scan visits the CPUs of its thread's mask, so run it where that
	// is the process's.
	onUnpinnedThread(func() { sys, err = cpuid.ScanTopology() })
	if err != nil {
		return false
	}
	types, ok := scannedTypes(sys, avail)
	if !ok {
		return false
	}
	for i := range cpus {
		cpus[i].Type = types[cpus[i].ID]
	}
	return true
}

// scannedTypes maps the core types of a cpuid scan onto CPU ids. The scan
// visits the CPUs of its thread's mask, avail, in ascending order, and
// numbers threads by visit (Thread.ID), not by CPU id: the i-th visited is
// the i-th CPU of avail, provided none was skipped, which Online tells.
func scannedTypes(sys *topology.System, avail CPUSet) (map[int]CoreType, bool) {
	ids := slices.Collect(avail.All())
	if sys == nil || !sys.Scanned || sys.Online != len(ids) {
		return nil, false
	}
	types := make(map[int]CoreType, len(ids))
	for _, p := range sys.Packages {
		for _, g := range p.Groups {
			for _, core := range g.Cores {
				var t CoreType
				switch core.Type {
				case topology.Performance:
					t = CorePerformance
				case topology.Efficiency, topology.LPEfficiency:
					t = CoreEfficiency
				}
				for _, th := range core.Threads {
					if th.ID < 0 || th.ID >= len(ids) {
						return nil, false
					}
					types[ids[th.ID]] = t
				}
			}
		}
	}
	return types, len(types) == len(ids)
}
