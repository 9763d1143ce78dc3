package report

import (
	"runtime"

	"github.com/klauspost/cpuid/v2"
)

// Machine is what the figures depend on and a reader cannot guess: the
// part, how many cores the process could use, and the spin hint knit
// chose and calibrated on it.
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
	Knit           KnitCPU `json:"knit"`
}

// KnitCPU is knit.CPU() flattened to plain fields, so results.json stays
// readable when knit's types change.
type KnitCPU struct {
	Summary   string  `json:"summary"` // knit.CPUInfo.String()
	Spin      string  `json:"spin"`
	SpinNs    float64 `json:"spin_ns_per_hint"`
	CounterHz int64   `json:"counter_hz"`
	Asm       bool    `json:"asm"`
	Warning   string  `json:"warning,omitempty"`
}

// DescribeMachine reads the machine now (call it after GOMAXPROCS is set).
func DescribeMachine() Machine {
	return Machine{
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
		Knit:           knitCPU(),
	}
}
