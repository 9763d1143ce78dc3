//go:build amd64 || arm64

package suites

import (
	"fmt"
	"runtime"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The spsc-rigtorp suite's limit rows, and the peers suite's 1P1C floor,
// over the all-assembly loops of limitring_$GOARCH.s.

// limitStream is the throughput limit: a loop pair of limitLoops in
// chunks.
type limitStream struct {
	rigStream
	r     *limitRing
	loops limitLoop
}

// limitLoop is one item size's pair of assembly loops.
type limitLoop struct {
	push func(r *limitRing, n, spins uint64) uint64
	pop  func(r *limitRing, n, spins uint64) (got, bad uint64)
}

// limitLoops holds the loops by item size in bytes (the ring's slot).
var limitLoops = map[int]limitLoop{
	4:  {limitPush32, limitPop32},
	8:  {limitPush64, limitPop64},
	64: {limitPushLine, limitPopLine},
}

func startLimitStream(capacity, slot int) *limitStream {
	loops, ok := limitLoops[slot]
	if !ok {
		panic(fmt.Sprintf("knitbench: no all-assembly loop for %d-byte items", slot))
	}
	s := &limitStream{r: newLimitRing(capacity, slot), loops: loops}
	s.start(func() {
		for !s.stop.Load() {
			s.loops.push(s.r, rigChunk, rigSpins)
		}
	})
	return s
}

func (s *limitStream) Run(n int) error {
	s.pinRun()
	for left := uint64(n); left > 0; {
		got, bad := s.loops.pop(s.r, left, rigSpins)
		if bad != 0 {
			return fmt.Errorf("all-assembly ring: %d items out of order or torn", bad)
		}
		if got == 0 {
			runtime.Gosched()
		}
		left -= got
	}
	return nil
}

// limitPair is the all-assembly round trip.
type limitPair struct {
	rigStream
	req, rep *limitRing
	pending  uint64
}

func startLimitPair() harness.Bench {
	p := &limitPair{req: newLimitRing(64, 4), rep: newLimitRing(64, 4)}
	p.start(func() {
		for !p.stop.Load() {
			if limitPong32(p.req, p.rep, rigSpins) == 0 {
				runtime.Gosched()
			}
		}
	})
	return p
}

func (p *limitPair) Run(n int) error {
	p.pinRun()
	for left := uint64(n); left > 0; {
		trips, pending, bad := limitPing32(p.req, p.rep, left, rigSpins, p.pending)
		if bad != 0 {
			return fmt.Errorf("all-assembly pair: %d answers wrong", bad)
		}
		p.pending = pending
		if trips == 0 {
			runtime.Gosched()
		}
		left -= trips
	}
	return nil
}
