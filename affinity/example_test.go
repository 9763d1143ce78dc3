package affinity_test

import (
	"errors"
	"fmt"
	"log"
	"slices"
	"testing/fstest"

	"github.com/knit-go/knit/affinity"
)

func ExampleParseCPUSet() {
	s, err := affinity.ParseCPUSet("0-3,8,10-11")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Len(), s.Has(9), slices.Collect(s.All()))
	s.Add(9)
	fmt.Println(s)

	_, err = affinity.ParseCPUSet("0-3,x")
	fmt.Println(errors.Is(err, affinity.ErrSyntax), err)
	// Output:
	// 7 false [0 1 2 3 8 10 11]
	// 0-3,8-11
	// true affinity: bad CPU list "0-3,x": "x" is not a CPU id
}

func ExampleCPUSet_All() {
	var s affinity.CPUSet
	s.Add(6, 2, 4)
	for cpu := range s.All() {
		fmt.Print(cpu, " ")
	}
	fmt.Println()
	// Output: 2 4 6
}

// A pool places its workers one per core, cores sharing a cache first, and
// a helper thread for each on the SMT sibling or, lacking one, on a core
// that shares the last-level cache.
func ExampleParseTopology() {
	// Two sockets of two cores, two threads each (siblings n and n+4); each
	// socket has its own L3. Topology reads the same files from /sys.
	fsys := fstest.MapFS{"devices/system/cpu/online": {Data: []byte("0-7\n")}}
	for cpu := range 8 {
		dir := fmt.Sprintf("devices/system/cpu/cpu%d/", cpu)
		socket := cpu % 4 / 2
		files := map[string]string{
			"topology/core_id":              fmt.Sprint(cpu % 2),
			"topology/physical_package_id":  fmt.Sprint(socket),
			"topology/thread_siblings_list": fmt.Sprintf("%d,%d", cpu%4, cpu%4+4),
			"cache/index3/level":            "3",
			"cache/index3/type":             "Unified",
			"cache/index3/size":             "32768K",
			"cache/index3/shared_cpu_list":  []string{"0-1,4-5", "2-3,6-7"}[socket],
		}
		for name, content := range files {
			fsys[dir+name] = &fstest.MapFile{Data: []byte(content + "\n")}
		}
	}
	l, err := affinity.ParseTopology(fsys)
	if err != nil {
		log.Fatal(err)
	}
	for _, cpu := range l.PhysicalCores() {
		helper, ok := l.Sibling(cpu)
		if !ok {
			helper, _ = l.LLCNeighbor(cpu)
		}
		fmt.Printf("worker on CPU %d, helper on CPU %d\n", cpu, helper)
	}
	// Output:
	// worker on CPU 0, helper on CPU 4
	// worker on CPU 1, helper on CPU 5
	// worker on CPU 2, helper on CPU 6
	// worker on CPU 3, helper on CPU 7
}
