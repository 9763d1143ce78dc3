//go:build !linux && amd64 && !purego && !race

package knit

// Without membarrier(2) there is no asymmetric barrier: every bell stays
// fenced (bell.go), so publishers fence after their release store, which
// is what sync/atomic's Store would cost.

func startAsymBarrier() {}

func asymBarrierReady() bool { return false }

func asymBarrier() { panic("knit: asymmetric barrier used where there is none") }
