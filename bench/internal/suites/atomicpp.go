package suites

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/knit-go/knit/bench/internal/harness"
)

// spinBound is how many loads a waiter spends before runtime.Gosched. It
// is a bound, not a tuned figure: long enough to cover a cache-line round
// trip on any machine, short enough that when the partner thread is
// descheduled (two spinners on two vCPUs shared with a build) the waiter
// hands the CPU back instead of livelocking against it.
const spinBound = 1 << 12

// line pads to 128 bytes: a cache line on arm64 and Apple parts, and the
// adjacent-line prefetch pair on x86.
type line [128]byte

// atomicPingPong is the floor for any handoff: two threads locked to OS
// threads passing one word back and forth with plain atomic loads and
// stores. seq is even while the caller holds the turn and odd while the
// partner does. A batch of messages rides in msgs: the caller writes them
// before publishing its turn, the partner answers in place (v+1) before
// publishing its own, so the atomic store/load pair orders the plain
// slice accesses.
type atomicPingPong struct {
	_    line
	seq  atomic.Uint64
	_    line
	stop atomic.Bool
	msgs []int64
	lock func(slot int) (release func()) // locks (and may pin) an end's thread
	done chan struct{}
}

func startAtomicPingPong(cfg harness.Config, batch int) *atomicPingPong {
	p := &atomicPingPong{lock: cfg.LockThread, msgs: make([]int64, batch), done: make(chan struct{})}
	ready := make(chan struct{})
	go p.partner(ready)
	<-ready
	return p
}

func (p *atomicPingPong) partner(ready chan<- struct{}) {
	defer close(p.done)
	release := p.lock(1)
	defer release()
	close(ready)
	var seen uint64
	for {
		v := waitChange(&p.seq, seen)
		if p.stop.Load() {
			return
		}
		for i := range p.msgs {
			p.msgs[i]++
		}
		seen = v + 1
		p.seq.Store(seen)
	}
}

// Run does n round trips of the whole batch, checking every reply.
func (p *atomicPingPong) Run(n int) error {
	release := p.lock(0)
	defer release()
	for i := 0; i < n; i++ {
		for j := range p.msgs {
			p.msgs[j] = int64(i + j)
		}
		p.trip()
		for j, m := range p.msgs {
			if m != int64(i+j)+1 {
				return fmt.Errorf("atomic ping-pong: reply %d = %d, want %d", j, m, i+j+1)
			}
		}
	}
	return nil
}

// trip hands the turn (and msgs) to the partner and waits for it back.
func (p *atomicPingPong) trip() {
	v := p.seq.Load()
	p.seq.Store(v + 1)
	waitChange(&p.seq, v+1)
}

func (p *atomicPingPong) Close() error {
	p.stop.Store(true)
	p.seq.Add(1)
	<-p.done
	return nil
}

// waitChange spins until *w differs from old and returns the new value,
// yielding the processor every spinBound loads.
func waitChange(w *atomic.Uint64, old uint64) uint64 {
	for {
		for range spinBound {
			if v := w.Load(); v != old {
				return v
			}
		}
		runtime.Gosched()
	}
}
