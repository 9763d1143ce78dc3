//go:build amd64 || arm64

package suites

import (
	"fmt"
	"runtime"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The spsc-rigtorp suite's limit rows, and the peers suite's 1P1C floor,
// over the all-assembly loops of limitring_$GOARCH.s.

// limitStream is the throughput limit: limitPush/limitPop in chunks, of
// 4-, 8- or 64-byte items (slot).
type limitStream struct {
	rigStream
	r    *limitRing
	slot int
}

func startLimitStream(capacity, slot int) *limitStream {
	if slot != 4 && slot != 8 && slot != 64 {
		panic(fmt.Sprintf("knitbench: no all-assembly loop for %d-byte items", slot))
	}
	s := &limitStream{r: newLimitRing(capacity, slot), slot: slot}
	s.start(func() {
		for !s.stop.Load() {
			switch s.slot {
			case 4:
				limitPush32(s.r, rigChunk, rigSpins)
			case 8:
				limitPush64(s.r, rigChunk, rigSpins)
			case 64:
				limitPushLine(s.r, rigChunk, rigSpins)
			}
		}
	})
	return s
}

func (s *limitStream) Run(n int) error {
	s.pinRun()
	for left := uint64(n); left > 0; {
		var got, bad uint64
		switch s.slot {
		case 4:
			got, bad = limitPop32(s.r, left, rigSpins)
		case 8:
			got, bad = limitPop64(s.r, left, rigSpins)
		case 64:
			got, bad = limitPopLine(s.r, left, rigSpins)
		}
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
