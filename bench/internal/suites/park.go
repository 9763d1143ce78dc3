package suites

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The park suite measures a parked wake: two goroutines pass a turn back
// and forth and each sleeps until the other's wake, through knit.Event on
// each backend, against what a Go programmer would otherwise write (an
// unbuffered channel, the reference; sync.Cond) and the floors: the
// runtime's own semaphore bare (the sleep knit's runtime backend is
// built on), and a raw futex ping-pong between two locked threads (no
// parked wake through the kernel can beat it).
//
// The Event rows are written as a user writes the protocol: register,
// re-check, wait; publish, then Notify.
var parkSuite = harness.Suite{
	Name: "park",
	Description: "A parked wake: a round trip between two goroutines that each sleep until the other " +
		"wakes them. knit.Event on the runtime backend (zero Park; and with a cancellable ctx, which " +
		"sleeps on a channel wait list) and on the futex backend (locked threads), against an unbuffered " +
		"channel (the reference) and sync.Cond, beside the runtime semaphore bare (with handoff, what " +
		"the runtime backend sleeps on) and the raw futex ping-pong between locked threads (the floor " +
		"for a wake through the kernel).",
	Unit: "round trip",
	Ref:  parkRef,
	Rows: parkRows,
}

const parkRef = "chan unbuffered ping-pong"

func parkRows(harness.Config) []harness.Row {
	bg := context.Background()
	rt := knit.Park{}
	return []harness.Row{
		{Name: parkRef, Start: chanPingPong(0)},
		{Name: "sync.Cond ping-pong", Start: startCondPingPong},
		{Name: "runtime semaphore ping-pong (handoff)", Start: startSemaPingPong},
		{Name: "knit Event, runtime (zero Park)", Start: startEventPingPong(rt, false, func() context.Context { return bg })},
		{Name: "knit Event, runtime, cancellable ctx (channel wait list)", Start: startEventPingPong(rt, false, cancellable)},
		{Name: "knit Event, futex, locked threads", Start: startEventPingPong(
			knit.Park{Spin: knit.NoSpin, Backend: knit.BackendFutex}, true, func() context.Context { return bg })},
		futexRows()[0],
	}
}

// cancellable is a ctx whose Done is not nil, so Wait takes the path
// that can be cancelled: the Event's channel wait list. Nobody cancels
// it.
func cancellable() context.Context {
	return neverDone{context.Background(), make(chan struct{})}
}

type neverDone struct {
	context.Context
	done chan struct{}
}

func (c neverDone) Done() <-chan struct{} { return c.done }

// eventPP is the Event ping-pong: turn is odd while the partner holds
// it, even while the caller does; each side waits on its own Event.
type eventPP struct {
	_          line
	turn       atomic.Uint64
	_          line
	ping       knit.Event // the caller waits here
	_          line
	pong       knit.Event // the partner waits here
	_          line
	stop       atomic.Bool
	park       knit.Park
	ctx        context.Context
	locked     bool
	cfg        harness.Config
	done       chan struct{}
	partnerErr error
}

func startEventPingPong(park knit.Park, locked bool, ctx func() context.Context) func(harness.Config) (harness.Bench, error) {
	return func(cfg harness.Config) (harness.Bench, error) {
		p := &eventPP{park: park, ctx: ctx(), locked: locked, cfg: cfg, done: make(chan struct{})}
		ready := make(chan struct{})
		go p.partner(ready)
		<-ready
		return p, nil
	}
}

// await waits on e until turn reaches want (or, for the partner, stop).
func (p *eventPP) await(e *knit.Event, want uint64, partner bool) error {
	for p.turn.Load() != want {
		if partner && p.stop.Load() {
			return nil
		}
		t := e.Prepare()
		if p.turn.Load() == want || partner && p.stop.Load() {
			e.Cancel(t)
			return nil
		}
		if err := e.Wait(p.ctx, t, p.park); err != nil {
			return err
		}
	}
	return nil
}

func (p *eventPP) partner(ready chan<- struct{}) {
	defer close(p.done)
	if p.locked {
		defer p.cfg.LockThread(1)()
	}
	close(ready)
	for v := uint64(1); ; v += 2 {
		if err := p.await(&p.pong, v, true); err != nil {
			p.partnerErr = err
			return
		}
		if p.stop.Load() {
			return
		}
		p.turn.Store(v + 1)
		p.ping.Notify(1)
	}
}

func (p *eventPP) Run(n int) error {
	if p.locked {
		defer p.cfg.LockThread(0)()
	}
	for range n {
		v := p.turn.Load()
		if v%2 != 0 {
			return fmt.Errorf("event ping-pong: turn %d is the partner's", v)
		}
		p.turn.Store(v + 1)
		p.pong.Notify(1)
		if err := p.await(&p.ping, v+2, false); err != nil {
			return err
		}
	}
	return nil
}

func (p *eventPP) Close() error {
	p.stop.Store(true)
	p.pong.NotifyAll()
	<-p.done
	return p.partnerErr
}
