package suites

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The ipc-peers suite reproduces the shape of the "IPC (Node)" table of
// Knitting's Node.js benchmarks page (knittingdocs.netlify.app): one iteration sends a batch of 1, 25, 50 or 100 messages to one
// worker and waits for every reply. Each message is an int64 v; the reply
// is v+1, checked by the caller, so every transport does the same work.
//
// A transport is an ipcTransport; adding one (the knit pool row) is a
// row provider built with ipcRows and a start function, joined to this
// suite in the registry with withRows; see README.md.
var ipcPeersSuite = harness.Suite{
	Name: "ipc-peers",
	Description: "Round trip of a batch of messages to one worker (reply = v+1), by transport; " +
		"two rows share the batch among a worker per P (channel workers, and the knit pool Call per message). " +
		"The atomic limit hands the whole batch over with one atomic store each way between two locked threads; " +
		"the rings' floor moves it to a worker goroutine and back through two bare knit SPSC rings, " +
		"one PushBatch and PopBatch each way, each side waiting as the pool's do (a yield, then the ring's park): no pool, no futures.",
	Reproduces: "Knitting's benchmarks (knittingdocs.netlify.app): \"IPC (Node)\": round trip of 1, 25, 50 messages to a worker, Knitting vs postMessage, websocket, HTTP",
	Unit:       "round trip of the group's batch",
	Ref:        refAtomic,
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		rows = append(rows, ipcRows(refAtomic, cfg, func(cfg harness.Config, max int) (ipcTransport, error) {
			return &atomicIPC{startAtomicPingPong(cfg, max)}, nil
		})...)
		rows = append(rows, ipcFloorRows(cfg)...)
		rows = append(rows, ipcRows("chan worker", cfg, startChanIPC)...)
		for _, r := range ipcRows(chanWorkersRow, cfg, startChanWorkersIPC) {
			if r.Group != ipcGroup(1) { // one message meets one worker
				rows = append(rows, r)
			}
		}
		rows = append(rows, ipcRows("ants pool (1 worker)", cfg, startAntsIPC)...)
		rows = append(rows, ipcRows("pond pool (1 worker)", cfg, startPondIPC)...)
		rows = append(rows, ipcRows("unix socket echo", cfg, startUDSIPC)...)
		rows = append(rows, ipcRows("loopback HTTP", cfg, startHTTPIPC)...)
		return rows
	},
}

// ipcTransport carries one batch to a worker and back.
type ipcTransport interface {
	// roundTrip sends every message of msgs and fills replies with the
	// worker's answers, in any order; len(replies) == len(msgs).
	roundTrip(msgs, replies []int64) error
	close() error
}

// ipcCounts are the batch sizes, one table each.
func ipcCounts(s harness.Scale) []int {
	switch s {
	case harness.Tiny:
		return []int{1, 25}
	case harness.Full:
		return []int{1, 25, 50, 100, 1000}
	}
	return []int{1, 25, 50, 100}
}

func ipcGroup(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}

// ipcRows makes one row per batch size for a transport. start receives
// the largest batch the transport will be asked to carry.
func ipcRows(name string, cfg harness.Config, start func(cfg harness.Config, maxBatch int) (ipcTransport, error)) []harness.Row {
	var rows []harness.Row
	for _, n := range ipcCounts(cfg.Scale) {
		rows = append(rows, harness.Row{
			Group: ipcGroup(n),
			Name:  name,
			Start: func(cfg harness.Config) (harness.Bench, error) {
				t, err := start(cfg, n)
				if err != nil {
					return nil, err
				}
				_, lock := t.(lockedCaller)
				return &ipcBench{cfg: cfg, lock: lock, t: t, msgs: make([]int64, n), replies: make([]int64, n)}, nil
			},
		})
	}
	return rows
}

// lockedCaller marks a transport whose caller side must run on a locked
// OS thread (the two-thread limit). Other transports run the caller as a
// plain goroutine: locking it would make every channel block hand its
// thread off and charge the peers for a choice they did not make.
type lockedCaller interface{ lockedCaller() }

type ipcBench struct {
	cfg           harness.Config
	lock          bool
	t             ipcTransport
	msgs, replies []int64
}

func (b *ipcBench) Run(n int) error {
	if b.lock {
		release := b.cfg.LockThread(0)
		defer release()
	}
	for i := 0; i < n; i++ {
		var want int64
		for j := range b.msgs {
			b.msgs[j] = int64(i*len(b.msgs) + j)
			want += b.msgs[j] + 1
		}
		clear(b.replies)
		if err := b.t.roundTrip(b.msgs, b.replies); err != nil {
			return err
		}
		var got int64
		for _, r := range b.replies {
			got += r
		}
		if got != want {
			return fmt.Errorf("replies sum to %d, want %d", got, want)
		}
	}
	return nil
}

func (b *ipcBench) Close() error { return b.t.close() }

// atomicIPC is the limit: the batch is written into memory the partner
// thread reads, and one atomic store each way hands it over.
type atomicIPC struct{ p *atomicPingPong }

func (a *atomicIPC) roundTrip(msgs, replies []int64) error {
	pp := a.p
	if len(msgs) > cap(pp.msgs) {
		return fmt.Errorf("atomic ipc: batch %d over capacity %d", len(msgs), cap(pp.msgs))
	}
	// Resizing before the handoff is safe: the partner reads msgs only
	// after it sees the store in trip.
	pp.msgs = pp.msgs[:len(msgs)]
	copy(pp.msgs, msgs)
	pp.trip()
	copy(replies, pp.msgs)
	return nil
}

func (a *atomicIPC) lockedCaller() {}

func (a *atomicIPC) close() error { return a.p.Close() }

// chanIPC is the idiomatic Go worker: a goroutine ranging over a buffered
// request channel and answering on a buffered reply channel, both deep
// enough for a whole batch so the caller never waits mid-batch.
type chanIPC struct {
	req, resp chan int64
}

func startChanIPC(_ harness.Config, max int) (ipcTransport, error) {
	c := &chanIPC{req: make(chan int64, max), resp: make(chan int64, max)}
	go func() {
		for v := range c.req {
			c.resp <- v + 1
		}
		close(c.resp)
	}()
	return c, nil
}

func (c *chanIPC) roundTrip(msgs, replies []int64) error {
	for _, m := range msgs {
		c.req <- m
	}
	for j := range replies {
		replies[j] = <-c.resp
	}
	return nil
}

func (c *chanIPC) close() error {
	close(c.req)
	for range c.resp {
	}
	return nil
}

// chanWorkersRow is chanIPC with a worker goroutine per P on the same two
// channels: what a Go user writes to spread the calls over the CPUs.
const chanWorkersRow = "chan workers (GOMAXPROCS goroutines)"

func startChanWorkersIPC(_ harness.Config, max int) (ipcTransport, error) {
	c := &chanIPC{req: make(chan int64, max), resp: make(chan int64, max)}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range c.req {
				c.resp <- v + 1
			}
		}()
	}
	go func() {
		wg.Wait()
		close(c.resp)
	}()
	return c, nil
}
