package suites

import (
	"context"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/puzpuzpuz/xsync/v4"
)

// The peers suite is the matrix a user porting a program from xsync's
// queues meets: xsync's MPMCQueue and SPSCQueue against knit's rings in
// every cell, across the three things a port varies. Item size: 8, 24
// and 64 bytes (one, three and eight words). Loop style: a try loop that
// yields after every failed try (runtime.Gosched, as xsync's own examples
// wait), one that spins 64 tries and then yields, and knit's blocking
// Push and Pop, which xsync has no counterpart of. Shape: 1P1C (MPMC and
// SPSC on both sides), 2P2C and 4P4C. A buffered channel of the same item
// type is in every group. The 1P1C groups of 8- and 64-byte items also
// hold their floor (peersLimit): a 64-byte item fills a 64-byte line, so
// no layout lets two items share a transfer, and the row says what moving
// the items costs with no library in the loop.
//
// Every word of an item carries its number, and consumers check that the
// words agree, so a torn or mixed item fails the run; the contended
// harness checks that every number arrived once (the sum of the round).
var peersSuite = harness.Suite{
	Name: "peers",
	Description: "knit's rings against xsync's MPMCQueue and SPSCQueue, cell by cell: items of 8, 24 and 64 bytes; " +
		"try loops that yield after every failed try and loops that spin 64 tries then yield, on both; knit's blocking " +
		"Push/Pop; 1P1C (MPMC and SPSC), 2P2C and 4P4C; a buffered channel of the same items in every group, and in the " +
		"1P1C groups of 8- and 64-byte items the floor: the items through SPSC indices in all-assembly loops. " +
		"Reference: xsync MPMCQueue with the yield-every-miss loop (the shape of a program ported from xsync); " +
		"each knit row is also read against its xsync counterpart round by round (the matrix's cell).",
	Unit: "item",
	Ref:  refPeers,
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		for _, words := range []int{1, 3, 8} {
			for _, p := range peerShapes(cfg.Scale) {
				switch words {
				case 1:
					rows = append(rows, peerRows[item8](words, p)...)
				case 3:
					rows = append(rows, peerRows[item24](words, p)...)
				default:
					rows = append(rows, peerRows[item64](words, p)...)
				}
			}
		}
		return rows
	},
}

const refPeers = "xsync MPMCQueue, yield every miss"

// peersLimit names the 1P1C groups' floor row, for 8- and 64-byte items
// (limitring.go; where its assembly exists).
const peersLimit = "limit: SPSC indices, all assembly, spinning, pinned"

// The item types: n words, each holding the item's number.
type (
	item8  [1]uint64
	item24 [3]uint64
	item64 [8]uint64
)

type peerItem interface{ item8 | item24 | item64 }

// words views an item as its words.
func words[T peerItem](t *T) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(t)), unsafe.Sizeof(*t)/8)
}

func mkItem[T peerItem](v uint64) T {
	var t T
	w := words(&t)
	for i := range w {
		w[i] = v
	}
	return t
}

// itemNum is the item's number, after checking that every word agrees.
func itemNum[T peerItem](t T) (uint64, error) {
	w := words(&t)
	for _, x := range w[1:] {
		if x != w[0] {
			return 0, fmt.Errorf("peers: a torn item, words %d and %d: %w", w[0], x, errOrder)
		}
	}
	return w[0], nil
}

func peerShapes(s harness.Scale) []int {
	if s == harness.Tiny {
		return []int{1, 2}
	}
	return []int{1, 2, 4}
}

// Try-loop styles around one attempt.
type tryStyle struct {
	name   string
	misses int // failed tries between yields
}

var (
	yieldEvery = tryStyle{"yield every miss", 1}
	spinYield  = tryStyle{fmt.Sprintf("spin %d then yield", tryMisses), tryMisses}
)

func (s tryStyle) push(try func(uint64) bool) func(uint64) error {
	return func(v uint64) error {
		for f := 1; !try(v); f++ {
			if f%s.misses == 0 {
				runtime.Gosched()
			}
		}
		return nil
	}
}

func (s tryStyle) pop(try func() (uint64, bool, error)) func() (uint64, error) {
	return func() (uint64, error) {
		for f := 1; ; f++ {
			if v, ok, err := try(); ok || err != nil {
				return v, err
			}
			if f%s.misses == 0 {
				runtime.Gosched()
			}
		}
	}
}

func peerRows[T peerItem](nwords, p int) []harness.Row {
	g := fmt.Sprintf("%d B items, %dP%dC", 8*nwords, p, p)
	row := func(name, versus string, start func() harness.Bench) harness.Row {
		return harness.Row{Group: g, Name: name, Versus: versus,
			Start: func(harness.Config) (harness.Bench, error) { return start(), nil }}
	}
	// Each knit row is read against its xsync counterpart round by round
	// (the matrix's cell); the blocking rows against xsync yielding every
	// miss, which has no blocking call.
	const xMPMC, xSPSC = "xsync MPMCQueue, ", "xsync SPSCQueue, "
	var rows []harness.Row
	for _, st := range []tryStyle{yieldEvery, spinYield} {
		rows = append(rows,
			row(xMPMC+st.name, "", func() harness.Bench {
				q := xsync.NewMPMCQueue[T](ringCap)
				return xsyncPeer(st, p, q.TryEnqueue, q.TryDequeue)
			}),
			row("knit MPMC, "+st.name, xMPMC+st.name, func() harness.Bench {
				q := knit.NewMPMC[T](ringCap, knit.Park{})
				return knitPeer[T](st, p, q, q)
			}),
		)
		if p == 1 {
			rows = append(rows,
				row(xSPSC+st.name, "", func() harness.Bench {
					q := xsync.NewSPSCQueue[T](ringCap)
					return xsyncPeer(st, p, q.TryEnqueue, q.TryDequeue)
				}),
				row("knit SPSC, "+st.name, xSPSC+st.name, func() harness.Bench {
					tx, rx := knit.NewSPSC[T](ringCap, knit.Park{}).Ends()
					return knitPeer[T](st, p, tx, rx)
				}),
			)
		}
	}
	rows = append(rows, row("knit MPMC, blocking Push/Pop", xMPMC+yieldEvery.name, func() harness.Bench {
		q := knit.NewMPMC[T](ringCap, knit.Park{})
		return knitBlockingPeer[T](p, q, q, q.Close)
	}))
	if p == 1 {
		rows = append(rows, row("knit SPSC, blocking Push/Pop", xSPSC+yieldEvery.name, func() harness.Bench {
			tx, rx := knit.NewSPSC[T](ringCap, knit.Park{}).Ends()
			return knitBlockingPeer[T](1, tx, rx, nil)
		}))
	}
	if p == 1 && haveLimitRing && (nwords == 1 || nwords == 8) {
		// The floor of a 1P1C cell: the items through SPSC indices in loops
		// written wholly in assembly, spinning, pinned to two CPUs.
		slot := 8 * nwords
		rows = append(rows, row(peersLimit, "", func() harness.Bench {
			return warm(startLimitStream(ringCap, slot), ringCap)
		}))
	}
	return append(rows, row(fmt.Sprintf("Go channel (chan of %d B items)", 8*nwords), "", func() harness.Bench {
		ch := make(chan T, ringCap)
		return startContended(p, p,
			func(v uint64) error { ch <- mkItem[T](v); return nil },
			func() (uint64, error) { return itemNum(<-ch) },
			nil)
	}))
}

func xsyncPeer[T peerItem](st tryStyle, p int, enq func(T) bool, deq func() (T, bool)) *contended {
	return startContended(p, p,
		st.push(func(v uint64) bool { return enq(mkItem[T](v)) }),
		st.pop(func() (uint64, bool, error) {
			t, ok := deq()
			if !ok {
				return 0, false, nil
			}
			v, err := itemNum(t)
			return v, true, err
		}),
		nil)
}

func knitPeer[T peerItem](st tryStyle, p int, push knit.Producer[T], pop knit.Consumer[T]) *contended {
	return startContended(p, p,
		st.push(func(v uint64) bool { return push.TryPush(mkItem[T](v)) == nil }),
		st.pop(func() (uint64, bool, error) {
			t, err := pop.TryPop()
			if err != nil {
				return 0, false, nil
			}
			v, err := itemNum(t)
			return v, true, err
		}),
		nil)
}

func knitBlockingPeer[T peerItem](p int, push knit.Producer[T], pop knit.Consumer[T], closeQ func()) *contended {
	ctx := context.Background()
	return startContended(p, p,
		func(v uint64) error { return push.Push(ctx, mkItem[T](v)) },
		func() (uint64, error) {
			t, err := pop.Pop(ctx)
			if err != nil {
				return 0, err
			}
			return itemNum(t)
		},
		closeQ)
}
