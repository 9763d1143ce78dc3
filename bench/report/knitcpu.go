package report

import (
	"time"

	"github.com/knit-go/knit"
)

// knitCPU is the one place the report depends on the knit package: the
// spin hint every knit row in the run is made with.
func knitCPU() KnitCPU {
	c := knit.CPU()
	return KnitCPU{
		Summary:       c.String(),
		Hint:          c.Hint.String(),
		HintNs:        c.HintNs,
		CounterHz:     c.CounterHz,
		CounterReadNs: counterReadNs(c.Hint),
		Asm:           c.Asm,
		Warning:       c.Warning,
	}
}

// counterReadNs is the cost of one read of the counter knit's spin
// deadlines are kept in. knit exports no bare read, so it times the
// nearest exported one: Backoff.IsCompleted on a budget that cannot run
// out, which is the read plus two atomic loads and a compare. Under
// HintNone IsCompleted reads no counter, and the result is 0.
func counterReadNs(hint knit.Hint) float64 {
	if hint == knit.HintNone {
		return 0
	}
	b := knit.Backoff{Budget: time.Hour}
	b.Spin() // IsCompleted reads the counter only once a deadline is set
	return readCostNs(func(n int) {
		for range n {
			b.IsCompleted()
		}
	})
}
