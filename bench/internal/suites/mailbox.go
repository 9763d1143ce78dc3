package suites

import (
	"context"
	"fmt"

	"github.com/puzpuzpuz/xsync/v4"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The mailbox suite: P producers (1, 4, 16) push, one consumer pops; one
// op is one item. Reference: xsync's UMPSCQueue, the unbounded MPSC queue
// a Go program would pick for an inbox (an add per item and a WaitGroup
// per slot, no Close). Beside it knit's Mailbox, and two bounded queues
// of capacity 1024 whose producers block while full, so they are not the
// same contract: a Go channel and knit's MPSC ring. The limit is an
// atomic add per item on one word shared by the producers and one by the
// consumer. bytedance's lscq cannot wait, so its consumer runs a try
// loop, and the Mailbox's try loop (TryPush, TryPop) is the row to read
// it against. Producers and the consumer run on goroutines of their own,
// each told its share per round (the rings suite's contended rows).
var mailboxSuite = harness.Suite{
	Name: "mailbox",
	Description: "unbounded MPSC inbox: knit Mailbox against xsync UMPSCQueue (reference), with P producers " +
		"and one consumer. A buffered channel and knit MPSC (capacity 1024) are bounded: their producers wait " +
		"while full, which an unbounded queue never does. Limit: one atomic add per item on a word shared by " +
		"the producers, and one on the consumer's. bytedance's lscq (unbounded MPMC, amd64 and arm64) is drained " +
		"by a try loop, as it cannot wait; the Mailbox's try loop is beside it.",
	Unit: "item",
	Ref:  mailboxRef,
	Rows: mailboxRows,
}

const mailboxRef = "xsync UMPSCQueue"

func mailboxRows(cfg harness.Config) []harness.Row {
	sweep := []int{1, 4, 16}
	if cfg.Scale == harness.Tiny {
		sweep = []int{1, 4}
	}
	var rows []harness.Row
	for _, p := range sweep {
		g := fmt.Sprintf("%d producer(s)", p)
		row := func(name string, start func() harness.Bench) {
			rows = append(rows, harness.Row{Group: g, Name: name, Start: func(harness.Config) (harness.Bench, error) {
				return start(), nil
			}})
		}
		row(mailboxRef, func() harness.Bench {
			q := xsync.NewUMPSCQueue[uint64]()
			return startContended(p, 1,
				func(v uint64) error { q.Enqueue(v); return nil },
				func() (uint64, error) { return q.Dequeue(), nil },
				nil)
		})
		row("knit Mailbox", func() harness.Bench { return mailboxContended(p) })
		row("Go channel, capacity 1024 (bounded)", func() harness.Bench { return startChanContended(p, 1) })
		row("knit MPSC, capacity 1024 (bounded)", func() harness.Bench {
			return startRingContended(knit.NewMPSC[uint64](ringCap, knit.Park{}), p, 1)
		})
		row("limit: atomic add on two shared words", func() harness.Bench { return startAddContended(p, 1) })
		row("knit Mailbox (TryPush, TryPop), try loop", func() harness.Bench { return mailboxTryContended(p) })
		rows = append(rows, lscqRow(g, p)...)
	}
	return rows
}

// mailboxContended calls the Mailbox's methods on the concrete type, as
// the reference row calls UMPSCQueue's and as an actor's code would; the
// bounded rows go through knit.Queue.
func mailboxContended(p int) *contended {
	m := knit.NewMailbox[uint64](knit.Park{})
	ctx := context.Background()
	return startContended(p, 1,
		func(v uint64) error { return m.Push(ctx, v) },
		func() (uint64, error) { return m.Pop(ctx) },
		m.Close)
}

// mailboxTryContended is the Mailbox in lscq's shape: pushes that never
// wait, and the consumer's try loop around TryPop.
func mailboxTryContended(p int) *contended {
	m := knit.NewMailbox[uint64](knit.Park{})
	return startContended(p, 1,
		m.TryPush,
		tryPop(func() (uint64, bool) { v, err := m.TryPop(); return v, err == nil }),
		m.Close)
}
