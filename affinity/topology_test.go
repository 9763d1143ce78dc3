package affinity

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// cpuSetText shows sets as CPU lists in diffs, and compares them by value.
var cpuSetText = cmp.Transformer("CPUList", CPUSet.String)

// loadSysfs reads a sysfs fixture from testdata: one file per line, its
// path relative to the sysfs root, a space, and its content (which may be
// empty); lines starting with # are comments.
func loadSysfs(t testing.TB, name string) fstest.MapFS {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fsys := fstest.MapFS{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, content, _ := strings.Cut(line, " ")
		fsys[path] = &fstest.MapFile{Data: []byte(content + "\n"), Mode: 0o444}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fsys
}

// set parses a CPU list that the test knows to be good.
func set(list string) CPUSet {
	s, err := ParseCPUSet(list)
	if err != nil {
		panic(err)
	}
	return s
}

// cpu builds an expected CPU.
func cpu(id, core, pkg, die, cluster, node int, siblings, llc string, l1d, l2, l3 int, typ CoreType) CPU {
	return CPU{ID: id, Core: core, Package: pkg, Die: die, Cluster: cluster, Node: node,
		Siblings: set(siblings), LLC: set(llc), L1D: l1d, L2: l2, L3: l3, Type: typ}
}

// placement is what a pool would ask a Layout.
type placement struct {
	Cores       []int
	Sibling     map[int]int // CPU -> Sibling; -1 where ok is false
	LLCNeighbor map[int]int // CPU -> LLCNeighbor; -1 where ok is false
}

func placementOf(t Layout) placement {
	p := placement{Cores: t.PhysicalCores(), Sibling: map[int]int{}, LLCNeighbor: map[int]int{}}
	for _, c := range t.CPUs {
		p.Sibling[c.ID], _ = t.Sibling(c.ID)
		p.LLCNeighbor[c.ID], _ = t.LLCNeighbor(c.ID)
	}
	return p
}

func TestParseTopology(t *testing.T) {
	const U, P, E = CoreUnknown, CorePerformance, CoreEfficiency
	xeonL3 := [2]string{"0,2,4,6,8,10,12,14", "1,3,5,7,9,11,13"}
	for _, tc := range []struct {
		fixture string
		want    Layout
		place   placement
	}{{
		fixture: "xeon-2s",
		want: Layout{Source: "sysfs", CPUs: []CPU{
			// id core pkg die cluster node siblings llc L1D L2 L3 type
			cpu(0, 0, 0, 0, -1, 0, "0,8", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(1, 0, 1, 0, -1, 1, "1,9", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(2, 1, 0, 0, -1, 0, "2,10", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(3, 1, 1, 0, -1, 1, "3,11", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(4, 3, 0, 0, -1, 0, "4,12", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(5, 3, 1, 0, -1, 1, "5,13", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(6, 4, 0, 0, -1, 0, "6,14", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(7, 4, 1, 0, -1, 1, "7", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(8, 0, 0, 0, -1, 0, "0,8", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(9, 0, 1, 0, -1, 1, "1,9", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(10, 1, 0, 0, -1, 0, "2,10", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(11, 1, 1, 0, -1, 1, "3,11", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(12, 3, 0, 0, -1, 0, "4,12", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
			cpu(13, 3, 1, 0, -1, 1, "5,13", xeonL3[1], 48*kib, 2*mib, 36*mib, U),
			cpu(14, 4, 0, 0, -1, 0, "6,14", xeonL3[0], 48*kib, 2*mib, 36*mib, U),
		}},
		place: placement{
			// Socket 0's cores, then socket 1's, though numbered alternately.
			Cores: []int{0, 2, 4, 6, 1, 3, 5, 7},
			Sibling: map[int]int{0: 8, 1: 9, 2: 10, 3: 11, 4: 12, 5: 13, 6: 14, 7: -1,
				8: 0, 9: 1, 10: 2, 11: 3, 12: 4, 13: 5, 14: 6},
			LLCNeighbor: map[int]int{0: 2, 1: 3, 2: 4, 3: 5, 4: 6, 5: 7, 6: 8, 7: 9,
				8: 10, 9: 11, 10: 12, 11: 13, 12: 14, 13: 1, 14: 0},
		},
	}, {
		fixture: "epyc-ccx",
		want: Layout{Source: "sysfs", CPUs: []CPU{
			cpu(0, 0, 0, 0, 0, 0, "0,8", "0-1,8-9", 32*kib, 1*mib, 16*mib, U),
			cpu(1, 1, 0, 0, 1, 0, "1,9", "0-1,8-9", 32*kib, 1*mib, 16*mib, U),
			cpu(2, 2, 0, 0, 2, 0, "2,10", "2-3,10-11", 32*kib, 1*mib, 16*mib, U),
			cpu(3, 3, 0, 0, 3, 0, "3,11", "2-3,10-11", 32*kib, 1*mib, 16*mib, U),
			cpu(4, 4, 0, 0, 4, 0, "4,12", "4-5,12-13", 32*kib, 1*mib, 16*mib, U),
			cpu(5, 5, 0, 0, 5, 0, "5,13", "4-5,12-13", 32*kib, 1*mib, 16*mib, U),
			cpu(6, 6, 0, 0, 6, 0, "6,14", "6-7,14-15", 32*kib, 1*mib, 16*mib, U),
			cpu(7, 7, 0, 0, 7, 0, "7,15", "6-7,14-15", 32*kib, 1*mib, 16*mib, U),
			cpu(8, 0, 0, 0, 0, 0, "0,8", "0-1,8-9", 32*kib, 1*mib, 16*mib, U),
			cpu(9, 1, 0, 0, 1, 0, "1,9", "0-1,8-9", 32*kib, 1*mib, 16*mib, U),
			cpu(10, 2, 0, 0, 2, 0, "2,10", "2-3,10-11", 32*kib, 1*mib, 16*mib, U),
			cpu(11, 3, 0, 0, 3, 0, "3,11", "2-3,10-11", 32*kib, 1*mib, 16*mib, U),
			cpu(12, 4, 0, 0, 4, 0, "4,12", "4-5,12-13", 32*kib, 1*mib, 16*mib, U),
			cpu(13, 5, 0, 0, 5, 0, "5,13", "4-5,12-13", 32*kib, 1*mib, 16*mib, U),
			cpu(14, 6, 0, 0, 6, 0, "6,14", "6-7,14-15", 32*kib, 1*mib, 16*mib, U),
			cpu(15, 7, 0, 0, 7, 0, "7,15", "6-7,14-15", 32*kib, 1*mib, 16*mib, U),
		}},
		place: placement{
			Cores: []int{0, 1, 2, 3, 4, 5, 6, 7},
			Sibling: map[int]int{0: 8, 1: 9, 2: 10, 3: 11, 4: 12, 5: 13, 6: 14, 7: 15,
				8: 0, 9: 1, 10: 2, 11: 3, 12: 4, 13: 5, 14: 6, 15: 7},
			// Each CCX has two cores: the neighbour is a thread of the other.
			LLCNeighbor: map[int]int{0: 1, 1: 8, 2: 3, 3: 10, 4: 5, 5: 12, 6: 7, 7: 14,
				8: 9, 9: 0, 10: 11, 11: 2, 12: 13, 13: 4, 14: 15, 15: 6},
		},
	}, {
		fixture: "intel-hybrid",
		want: Layout{Source: "sysfs", CPUs: []CPU{
			cpu(0, 0, 0, 0, 0, 0, "0-1", "0-7", 48*kib, 1280*kib, 12*mib, P),
			cpu(1, 0, 0, 0, 0, 0, "0-1", "0-7", 48*kib, 1280*kib, 12*mib, P),
			cpu(2, 4, 0, 0, 8, 0, "2-3", "0-7", 48*kib, 1280*kib, 12*mib, P),
			cpu(3, 4, 0, 0, 8, 0, "2-3", "0-7", 48*kib, 1280*kib, 12*mib, P),
			cpu(4, 8, 0, 0, 16, 0, "4", "0-7", 32*kib, 2*mib, 12*mib, E),
			cpu(5, 9, 0, 0, 16, 0, "5", "0-7", 32*kib, 2*mib, 12*mib, E),
			cpu(6, 10, 0, 0, 16, 0, "6", "0-7", 32*kib, 2*mib, 12*mib, E),
			cpu(7, 11, 0, 0, 16, 0, "7", "0-7", 32*kib, 2*mib, 12*mib, E),
		}},
		place: placement{
			Cores:       []int{0, 2, 4, 5, 6, 7},
			Sibling:     map[int]int{0: 1, 1: 0, 2: 3, 3: 2, 4: -1, 5: -1, 6: -1, 7: -1},
			LLCNeighbor: map[int]int{0: 2, 1: 2, 2: 4, 3: 4, 4: 5, 5: 6, 6: 7, 7: 0},
		},
	}, {
		fixture: "arm-biglittle",
		want: Layout{Source: "sysfs", CPUs: []CPU{
			cpu(0, 0, 0, -1, 0, -1, "0", "0-7", 0, 0, 0, E),
			cpu(1, 1, 0, -1, 0, -1, "1", "0-7", 0, 0, 0, E),
			cpu(2, 2, 0, -1, 0, -1, "2", "0-7", 0, 0, 0, E),
			cpu(3, 3, 0, -1, 0, -1, "3", "0-7", 0, 0, 0, E),
			cpu(4, 0, 0, -1, 1, -1, "4", "0-7", 0, 0, 0, P),
			cpu(5, 1, 0, -1, 1, -1, "5", "0-7", 0, 0, 0, P),
			cpu(6, 2, 0, -1, 1, -1, "6", "0-7", 0, 0, 0, P),
			cpu(7, 3, 0, -1, 1, -1, "7", "0-7", 0, 0, 0, P),
		}},
		place: placement{
			Cores:       []int{0, 1, 2, 3, 4, 5, 6, 7},
			Sibling:     map[int]int{0: -1, 1: -1, 2: -1, 3: -1, 4: -1, 5: -1, 6: -1, 7: -1},
			LLCNeighbor: map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 0},
		},
	}} {
		t.Run(tc.fixture, func(t *testing.T) {
			got, err := ParseTopology(loadSysfs(t, tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cpuSetText); d != "" {
				t.Errorf("ParseTopology mismatch (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.place, placementOf(got)); d != "" {
				t.Errorf("placement mismatch (-want +got):\n%s", d)
			}
			checkLayout(t, got)
		})
	}
}

// checkLayout checks the invariants Layout documents.
func checkLayout(t *testing.T, l Layout) {
	t.Helper()
	var all CPUSet
	for i, c := range l.CPUs {
		if i > 0 && c.ID <= l.CPUs[i-1].ID {
			t.Errorf("CPUs not sorted by unique ID at %d: %d after %d", i, c.ID, l.CPUs[i-1].ID)
		}
		all.Add(c.ID)
	}
	cores := 0
	for _, c := range l.CPUs {
		if !c.Siblings.Has(c.ID) || !c.LLC.Has(c.ID) {
			t.Errorf("CPU %d: Siblings %v or LLC %v lacks the CPU itself", c.ID, c.Siblings, c.LLC)
		}
		if without(c.Siblings, c.LLC).Len() != 0 {
			t.Errorf("CPU %d: siblings %v not all in its LLC %v", c.ID, c.Siblings, c.LLC)
		}
		for s := range c.Siblings.All() {
			o, ok := l.cpu(s)
			if !ok {
				t.Errorf("CPU %d: sibling %d has no entry", c.ID, s)
			} else if o.Siblings != c.Siblings {
				t.Errorf("siblings not symmetric: CPU %d has %v, CPU %d has %v", c.ID, c.Siblings, s, o.Siblings)
			}
		}
		// LLC sets partition the CPUs: every member has the same set.
		for s := range c.LLC.All() {
			o, ok := l.cpu(s)
			if !ok {
				t.Errorf("CPU %d: LLC member %d has no entry", c.ID, s)
			} else if o.LLC != c.LLC {
				t.Errorf("LLC groups overlap: CPU %d has %v, CPU %d has %v", c.ID, c.LLC, s, o.LLC)
			}
		}
		if c.Siblings.first() == c.ID {
			cores++
		}
	}
	pc := l.PhysicalCores()
	if len(pc) != cores {
		t.Errorf("PhysicalCores returned %d CPUs %v for %d cores", len(pc), pc, cores)
	}
	var seen CPUSet
	for _, id := range pc {
		c, ok := l.cpu(id)
		if !ok || c.Siblings.first() != id || seen.Has(id) {
			t.Errorf("PhysicalCores %v: %d is not the first thread of a new core", pc, id)
			continue
		}
		seen.Add(id)
	}
}

func TestParseTopologyNoOnlineFile(t *testing.T) {
	fsys := loadSysfs(t, "intel-hybrid")
	delete(fsys, cpuDir+"/online")
	got, err := ParseTopology(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.CPUs) != 8 {
		t.Fatalf("without an online file got %d CPUs, want the 8 cpuN directories", len(got.CPUs))
	}
}

func TestParseTopologyErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(fstest.MapFS)
		wants string // in the error
	}{
		{"no sysfs", func(m fstest.MapFS) { clear(m) }, "file does not exist"},
		{"none online", func(m fstest.MapFS) { m[cpuDir+"/online"].Data = []byte("\n") }, "no CPU online"},
		{"bad online", func(m fstest.MapFS) { m[cpuDir+"/online"].Data = []byte("0-x\n") }, `"x" is not a CPU id (in devices/system/cpu/online)`},
		{"no core_id", func(m fstest.MapFS) { delete(m, cpuDir+"/cpu5/topology/core_id") }, "cpu5/topology/core_id"},
		{"bad package", func(m fstest.MapFS) { m[cpuDir+"/cpu2/topology/physical_package_id"].Data = []byte("zero") }, `physical_package_id: "zero" is not a number`},
		{"bad siblings", func(m fstest.MapFS) { m[cpuDir+"/cpu0/topology/thread_siblings_list"].Data = []byte("0,,1") }, "thread_siblings_list"},
		{"bad size", func(m fstest.MapFS) { m[cpuDir+"/cpu1/cache/index2/size"].Data = []byte("big") }, `index2/size: "big" is not a cache size`},
		{"bad pmu list", func(m fstest.MapFS) { m["devices/cpu_atom/cpus"].Data = []byte("4-") }, "cpu_atom/cpus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := loadSysfs(t, "intel-hybrid")
			tc.edit(fsys)
			_, err := ParseTopology(fsys)
			if err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("ParseTopology: error %v, want one containing %q", err, tc.wants)
			}
		})
	}
}

func TestRestrict(t *testing.T) {
	l, err := ParseTopology(loadSysfs(t, "xeon-2s"))
	if err != nil {
		t.Fatal(err)
	}
	// As under taskset -c 0-3,8: socket 0's CPUs 0,2,8 and socket 1's 1,3.
	r := l.restrict(set("0-3,8"))
	got := map[int][2]string{}
	for _, c := range r.CPUs {
		got[c.ID] = [2]string{c.Siblings.String(), c.LLC.String()}
	}
	want := map[int][2]string{
		0: {"0,8", "0,2,8"}, 1: {"1", "1,3"}, 2: {"2", "0,2,8"}, 3: {"3", "1,3"}, 8: {"0,8", "0,2,8"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("restrict mismatch (-want +got):\n%s", d)
	}
	checkLayout(t, r)
	if s, ok := r.Sibling(2); ok {
		t.Errorf("Sibling(2) = %d outside the restricted set", s)
	}
	if n, ok := r.LLCNeighbor(8); !ok || n != 2 {
		t.Errorf("LLCNeighbor(8) = %d, %v; want 2", n, ok)
	}
	if _, ok := r.Sibling(9); ok {
		t.Error("Sibling of a CPU not in the layout reported ok")
	}
	if _, ok := r.LLCNeighbor(-1); ok {
		t.Error("LLCNeighbor(-1) reported ok")
	}
}

func TestLayoutFromSysctl(t *testing.T) {
	const U, P, E = CoreUnknown, CorePerformance, CoreEfficiency
	for _, tc := range []struct {
		name   string
		sysctl map[string]int
		want   []CPU
	}{{
		// An M1 Pro: 8 performance cores in two L2 clusters of 4, 2
		// efficiency cores in one.
		name: "m1-pro",
		sysctl: map[string]int{
			"hw.logicalcpu": 10, "hw.physicalcpu": 10, "hw.packages": 1, "hw.nperflevels": 2,
			"hw.perflevel0.logicalcpu": 8, "hw.perflevel0.physicalcpu": 8,
			"hw.perflevel0.l1dcachesize": 128 * kib, "hw.perflevel0.l2cachesize": 12 * mib, "hw.perflevel0.cpusperl2": 4,
			"hw.perflevel1.logicalcpu": 2, "hw.perflevel1.physicalcpu": 2,
			"hw.perflevel1.l1dcachesize": 64 * kib, "hw.perflevel1.l2cachesize": 4 * mib, "hw.perflevel1.cpusperl2": 2,
			"hw.l1dcachesize": 64 * kib, "hw.l2cachesize": 4 * mib,
		},
		want: []CPU{
			cpu(0, 0, 0, -1, 0, -1, "0", "0-3", 128*kib, 12*mib, 0, P),
			cpu(1, 1, 0, -1, 0, -1, "1", "0-3", 128*kib, 12*mib, 0, P),
			cpu(2, 2, 0, -1, 0, -1, "2", "0-3", 128*kib, 12*mib, 0, P),
			cpu(3, 3, 0, -1, 0, -1, "3", "0-3", 128*kib, 12*mib, 0, P),
			cpu(4, 4, 0, -1, 1, -1, "4", "4-7", 128*kib, 12*mib, 0, P),
			cpu(5, 5, 0, -1, 1, -1, "5", "4-7", 128*kib, 12*mib, 0, P),
			cpu(6, 6, 0, -1, 1, -1, "6", "4-7", 128*kib, 12*mib, 0, P),
			cpu(7, 7, 0, -1, 1, -1, "7", "4-7", 128*kib, 12*mib, 0, P),
			cpu(8, 8, 0, -1, 2, -1, "8", "8-9", 64*kib, 4*mib, 0, E),
			cpu(9, 9, 0, -1, 2, -1, "9", "8-9", 64*kib, 4*mib, 0, E),
		},
	}, {
		// An Intel Mac: 4 cores, 2 threads each, one L3; no perflevels.
		name: "intel-mac",
		sysctl: map[string]int{
			"hw.logicalcpu": 8, "hw.physicalcpu": 4, "hw.packages": 1,
			"hw.l1dcachesize": 32 * kib, "hw.l2cachesize": 256 * kib, "hw.l3cachesize": 8 * mib,
		},
		want: []CPU{
			cpu(0, 0, 0, -1, -1, -1, "0-1", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(1, 0, 0, -1, -1, -1, "0-1", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(2, 1, 0, -1, -1, -1, "2-3", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(3, 1, 0, -1, -1, -1, "2-3", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(4, 2, 0, -1, -1, -1, "4-5", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(5, 2, 0, -1, -1, -1, "4-5", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(6, 3, 0, -1, -1, -1, "6-7", "0-7", 32*kib, 256*kib, 8*mib, U),
			cpu(7, 3, 0, -1, -1, -1, "6-7", "0-7", 32*kib, 256*kib, 8*mib, U),
		},
	}, {
		// perflevel figures that do not add up to hw.logicalcpu are
		// ignored for the whole-machine ones.
		name: "inconsistent-levels",
		sysctl: map[string]int{
			"hw.logicalcpu": 2, "hw.physicalcpu": 2, "hw.nperflevels": 1,
			"hw.perflevel0.logicalcpu": 4, "hw.l2cachesize": 4 * mib,
		},
		want: []CPU{
			cpu(0, 0, 0, -1, -1, -1, "0", "0-1", 0, 4*mib, 0, U),
			cpu(1, 1, 0, -1, -1, -1, "1", "0-1", 0, 4*mib, 0, U),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := layoutFromSysctl(func(name string) (int, error) {
				if v, ok := tc.sysctl[name]; ok {
					return v, nil
				}
				return 0, fs.ErrNotExist // what darwin's ENOENT stands for here
			})
			if err != nil {
				t.Fatal(err)
			}
			want := Layout{Source: "sysctl", CPUs: tc.want}
			if d := cmp.Diff(want, got, cpuSetText); d != "" {
				t.Errorf("layoutFromSysctl mismatch (-want +got):\n%s", d)
			}
			checkLayout(t, got)
		})
	}
	if _, err := layoutFromSysctl(func(string) (int, error) { return 0, errors.New("ENOENT") }); err == nil {
		t.Error("layoutFromSysctl without hw.logicalcpu succeeded")
	}
	if _, err := layoutFromSysctl(func(string) (int, error) { return 0, nil }); err == nil {
		t.Error("layoutFromSysctl with hw.logicalcpu 0 succeeded")
	}
}

func TestCoreTypeString(t *testing.T) {
	got := []string{CoreUnknown.String(), CorePerformance.String(), CoreEfficiency.String(), CoreType(9).String()}
	if want := []string{"unknown", "performance", "efficiency", "unknown"}; !slices.Equal(got, want) {
		t.Errorf("CoreType strings %q, want %q", got, want)
	}
}
