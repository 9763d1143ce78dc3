package suites

import (
	"fmt"
	"sync"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The limits suite measures the floors every other figure is read
// against: a raw atomic handoff between two locked threads (no transport
// can beat it) and a raw futex handoff (no parked wake can beat it), with
// Go's own channel and sync.Cond ping-pongs beside them.
var limitsSuite = harness.Suite{
	Name: "limits",
	Description: "One round trip between two threads: the floors for a handoff (raw atomic, " +
		"two locked OS threads) and for a parked wake (raw futex), beside Go channels and sync.Cond.",
	Unit: "round trip",
	Ref:  refAtomic,
	Rows: func(cfg harness.Config) []harness.Row {
		rows := []harness.Row{
			{Name: refAtomic, Start: func(cfg harness.Config) (harness.Bench, error) {
				return startAtomicPingPong(cfg, 1), nil
			}},
		}
		rows = append(rows, futexRows()...)
		return append(rows,
			harness.Row{Name: "chan unbuffered ping-pong", Start: chanPingPong(0)},
			harness.Row{Name: "chan buffered(1) ping-pong", Start: chanPingPong(1)},
			harness.Row{Name: "sync.Cond ping-pong", Start: startCondPingPong},
		)
	},
}

// refAtomic is the limit row's name wherever it appears.
const refAtomic = "limit: atomic ping-pong"

// chanPingPong bounces an int between two goroutines over two channels.
func chanPingPong(capacity int) func(harness.Config) (harness.Bench, error) {
	return func(harness.Config) (harness.Bench, error) {
		ping, pong := make(chan int, capacity), make(chan int, capacity)
		go func() {
			for v := range ping {
				pong <- v + 1
			}
			close(pong)
		}()
		return &chanPP{ping: ping, pong: pong}, nil
	}
}

type chanPP struct{ ping, pong chan int }

func (c *chanPP) Run(n int) error {
	for i := 0; i < n; i++ {
		c.ping <- i
		if v := <-c.pong; v != i+1 {
			return fmt.Errorf("chan ping-pong: got %d, want %d", v, i+1)
		}
	}
	return nil
}

func (c *chanPP) Close() error {
	close(c.ping)
	for range c.pong {
	}
	return nil
}

// condPP is the textbook mutex + two condition variables handoff.
type condPP struct {
	mu          sync.Mutex
	toPartner   sync.Cond
	toCaller    sync.Cond
	partnerTurn bool
	stop        bool
	val         int
	done        chan struct{}
}

func startCondPingPong(harness.Config) (harness.Bench, error) {
	c := &condPP{done: make(chan struct{})}
	c.toPartner.L, c.toCaller.L = &c.mu, &c.mu
	go c.partner()
	return c, nil
}

func (c *condPP) partner() {
	defer close(c.done)
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for !c.partnerTurn && !c.stop {
			c.toPartner.Wait()
		}
		if c.stop {
			return
		}
		c.val++
		c.partnerTurn = false
		c.toCaller.Signal()
	}
}

func (c *condPP) Run(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < n; i++ {
		c.val = i
		c.partnerTurn = true
		c.toPartner.Signal()
		for c.partnerTurn {
			c.toCaller.Wait()
		}
		if c.val != i+1 {
			return fmt.Errorf("sync.Cond ping-pong: got %d, want %d", c.val, i+1)
		}
	}
	return nil
}

func (c *condPP) Close() error {
	c.mu.Lock()
	c.stop = true
	c.toPartner.Signal()
	c.mu.Unlock()
	<-c.done
	return nil
}
