package report

import "github.com/knit-go/knit"

// knitCPU is the one place the report depends on the knit package: the
// spin selection every knit row in the run is made with.
func knitCPU() KnitCPU {
	c := knit.CPU()
	return KnitCPU{
		Summary:   c.String(),
		Spin:      c.Spin.String(),
		SpinNs:    c.SpinNs,
		CounterHz: c.CounterHz,
		Asm:       c.Asm,
		Warning:   c.Warning,
	}
}
