package suites

import (
	"runtime"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/puzpuzpuz/xsync/v4"
)

// The Go peer a user would pick instead of a knit ring: xsync's bounded
// queues (github.com/puzpuzpuz/xsync/v4, SPSCQueue and MPMCQueue). They
// have no blocking calls, so their users write try loops; these rows
// drive knit's rings and xsync's queues through the same loop, one that
// yields after 64 failed tries, so the two are compared in one shape.

// tryMisses is how many failed tries a try loop makes before it yields.
const tryMisses = 64

// tryPush and tryPop are the try loop around one attempt.
func tryPush(try func(uint64) bool) func(uint64) error {
	return func(v uint64) error {
		for f := 1; !try(v); f++ {
			if f%tryMisses == 0 {
				runtime.Gosched()
			}
		}
		return nil
	}
}

func tryPop(try func() (uint64, bool)) func() (uint64, error) {
	return func() (uint64, error) {
		for f := 1; ; f++ {
			if v, ok := try(); ok {
				return v, nil
			}
			if f%tryMisses == 0 {
				runtime.Gosched()
			}
		}
	}
}

// startTryContended is the contended shape with try loops.
func startTryContended(p, c int, push func(uint64) bool, pop func() (uint64, bool)) *contended {
	return startContended(p, c, tryPush(push), tryPop(pop), nil)
}

// knitTryContended drives a knit ring through the try loops.
func knitTryContended(q knit.Queue[uint64], p, c int) *contended {
	return knitTryEnds(q, q, p, c)
}

// knitTryEnds drives a knit ring's pushing and popping sides (the ring
// itself, or an SPSC's two ends) through the try loops. The loops take
// the bool shape of xsync's calls, so the knit calls' errors are compared
// with nil here.
func knitTryEnds(push knit.Producer[uint64], pop knit.Consumer[uint64], p, c int) *contended {
	return startTryContended(p, c,
		func(v uint64) bool { return push.TryPush(v) == nil },
		func() (uint64, bool) { v, err := pop.TryPop(); return v, err == nil })
}

func xsyncMPMCContended(p, c int) *contended {
	q := xsync.NewMPMCQueue[uint64](ringCap)
	return startTryContended(p, c, q.TryEnqueue, q.TryDequeue)
}

func xsyncSPSCContended() *contended {
	q := xsync.NewSPSCQueue[uint64](ringCap)
	return startTryContended(1, 1, q.TryEnqueue, q.TryDequeue)
}

// peerContendedRows are the try-loop rows of a contended group.
func peerContendedRows(g string, p int) []harness.Row {
	row := func(name string, start func() harness.Bench) harness.Row {
		return harness.Row{Group: g, Name: name, Start: func(harness.Config) (harness.Bench, error) { return start(), nil }}
	}
	return []harness.Row{
		row("knit MPMC, try loops", func() harness.Bench { return knitTryContended(knit.NewMPMC[uint64](ringCap, knit.Park{}), p, p) }),
		row("xsync MPMCQueue, try loops", func() harness.Bench { return xsyncMPMCContended(p, p) }),
		row("knit MPSC, try loops (1 consumer)", func() harness.Bench { return knitTryContended(knit.NewMPSC[uint64](ringCap, knit.Park{}), p, 1) }),
		row("xsync MPMCQueue, try loops (1 consumer)", func() harness.Bench { return xsyncMPMCContended(p, 1) }),
		row("knit SPMC, try loops (1 producer)", func() harness.Bench { return knitTryContended(knit.NewSPMC[uint64](ringCap, knit.Park{}), 1, p) }),
		row("xsync MPMCQueue, try loops (1 producer)", func() harness.Bench { return xsyncMPMCContended(1, p) }),
	}
}

// peerSPSCRows are the one-to-one try-loop rows, in the batch-1
// throughput group.
func peerSPSCRows(g string) []harness.Row {
	row := func(name string, start func() harness.Bench) harness.Row {
		return harness.Row{Group: g, Name: name, Start: func(harness.Config) (harness.Bench, error) { return start(), nil }}
	}
	return []harness.Row{
		row("knit SPSC, try loops", func() harness.Bench {
			tx, rx := knit.NewSPSC[uint64](ringCap, knit.Park{}).Ends()
			return knitTryEnds(tx, rx, 1, 1)
		}),
		row("xsync SPSCQueue, try loops", func() harness.Bench { return xsyncSPSCContended() }),
	}
}
