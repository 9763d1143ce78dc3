package report

import (
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/cpuid/v2"
)

// Machine is what the figures depend on and a reader cannot guess: the
// part, how many cores the process could use, and the spin hint knit
// chose and calibrated on it, and what reading its clocks costs.
type Machine struct {
	CPU            string  `json:"cpu"` // cpuid brand string
	Vendor         string  `json:"vendor"`
	LogicalCores   int     `json:"logical_cores"`  // runtime.NumCPU: the CPUs this process may run on
	PhysicalCores  int     `json:"physical_cores"` // cpuid's count, 0 if unknown; the host's under some hypervisors
	ThreadsPerCore int     `json:"threads_per_core"`
	Hypervisor     bool    `json:"hypervisor"`
	GOMAXPROCS     int     `json:"gomaxprocs"`
	GoVersion      string  `json:"go_version"`
	GOOS           string  `json:"goos"`
	GOARCH         string  `json:"goarch"`
	TimeNowNs      float64 `json:"time_now_ns"` // one time.Now, median of a few batches; beside knit.counter_read_ns
	Knit           KnitCPU `json:"knit"`
	Kernel         string  `json:"kernel,omitempty"` // uname: system, release, machine
	// Governor is the cpufreq scaling governor of the CPUs ("performance",
	// "powersave", or each with its count where they differ), Boost the
	// turbo state where the driver tells; GovernorWhy says why the
	// governor is "" (no cpufreq: a VM, not Linux).
	Governor    string `json:"cpu_governor,omitempty"`
	Boost       string `json:"cpu_boost,omitempty"`
	GovernorWhy string `json:"cpu_governor_why,omitempty"`
}

// KnitCPU is knit.CPU() flattened to plain fields, so results.json stays
// readable when knit's types change.
type KnitCPU struct {
	Summary   string  `json:"summary"`     // knit.CPUInfo.String()
	Hint      string  `json:"hint"`        // knit.CPUInfo.Hint: the spin instruction in force
	HintNs    float64 `json:"ns_per_hint"` // knit.CPUInfo.HintNs
	CounterHz int64   `json:"counter_hz"`
	// CounterReadNs is one read of that counter as knit's Go side makes it
	// (see counterReadNs); 0 under HintNone. The counter is the monotonic
	// clock when Asm is false or Warning says the counter is unusable.
	CounterReadNs float64 `json:"counter_read_ns"`
	Asm           bool    `json:"asm"`
	Warning       string  `json:"warning,omitempty"`
}

// DescribeMachine reads the machine now (call it after GOMAXPROCS is set).
func DescribeMachine() Machine {
	m := Machine{
		CPU:            cpuid.CPU.BrandName,
		Vendor:         cpuid.CPU.VendorString,
		LogicalCores:   runtime.NumCPU(),
		PhysicalCores:  cpuid.CPU.PhysicalCores,
		ThreadsPerCore: cpuid.CPU.ThreadsPerCore,
		Hypervisor:     cpuid.CPU.Supports(cpuid.HYPERVISOR),
		GOMAXPROCS:     runtime.GOMAXPROCS(0),
		GoVersion:      runtime.Version(),
		GOOS:           runtime.GOOS,
		GOARCH:         runtime.GOARCH,
		TimeNowNs:      readCostNs(nowBatch),
		Knit:           knitCPU(),
		Kernel:         kernel(),
	}
	m.Governor, m.Boost, m.GovernorWhy = governor()
	return m
}

func itoa(i int) string { return strconv.Itoa(i) }

func nowBatch(n int) {
	var t time.Time
	for range n {
		t = time.Now()
	}
	_ = t
}

// readCostNs is the median cost in ns of one read made by batch(n), which
// makes n of them. The batch size comes from a first short batch, so
// that the whole measurement stays within a few ms even where a
// hypervisor traps the read; the median keeps a preempted batch out.
func readCostNs(batch func(n int)) float64 {
	const (
		batches   = 5
		minReads  = 100
		maxReads  = 10_000
		batchTime = 200 * time.Microsecond
	)
	t0 := time.Now()
	batch(minReads)
	n := maxReads
	if per := time.Since(t0) / minReads; per > 0 {
		n = min(max(int(batchTime/per), minReads), maxReads)
	}
	var ns [batches]float64
	for i := range ns {
		t0 := time.Now()
		batch(n)
		ns[i] = float64(time.Since(t0)) / float64(n)
	}
	slices.Sort(ns[:])
	return ns[batches/2]
}
