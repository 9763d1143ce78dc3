package suites

import (
	"fmt"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The rings suite measures knit's rings against Go channels, a peer ring
// (Workiva go-datastructures' queue.RingBuffer) and the raw-atomic limits,
// in four groups:
//
//   - SPSC throughput, batch 1/16/64: one producer goroutine streams
//     sequence numbers, the timed goroutine consumes and checks them.
//     knit's SPSC[uint64] (the Go path) and Words (the assembly path) in
//     the same run, so the asm is judged against the Go code it replaces.
//   - round trip: a request ring and a reply ring between two goroutines
//     against two unbuffered channels and the raw atomic ping-pong.
//   - contended, P producers: MPMC (P producers, P consumers) and MPSC
//     (P producers, 1 consumer) against one buffered channel shared the
//     same way; CPU-µs/op says what the contention costs in cores.
//   - blocking bursts: the consumer blocks in Pop between bursts of 16
//     (the producer sleeps 50 µs between bursts), for no spin and budgets of
//     5, 20 and 50 µs against a channel; CPU-µs/op is the column to read.
//
// The reference in every group is a Go channel (see ringsRef); the raw
// limits are rows beside it, so "vs ref" reads as "times a channel" and a
// knit row over its limit row is the ratio to the floor.
var ringsSuite = harness.Suite{
	Name: "rings",
	Description: "knit rings vs Go channels, Workiva's RingBuffer and the raw-atomic limits. " +
		"Reference \"Go channel\": a chan uint64 of capacity 1024 in the throughput, contended and burst groups " +
		"(P producers and P consumers on one channel in the contended groups), " +
		"two unbuffered chan int in the round-trip group. " +
		"Throughput limit: the producer hands the consumer a mailbox of batch words with one atomic store each way " +
		"(two locked threads); a ring pipelines and can go below it. " +
		"Contended limit: every producer and consumer does one atomic add on one of two shared words per item. " +
		"Bursts: the producer sleeps in nanosleep(2) on Linux (time.Sleep elsewhere), since an idle Go process " +
		"rounds a 50 µs time.Sleep up to about 1 ms; the limit there wakes a locked consumer with a raw " +
		"FUTEX_WAKE after every burst.",
	Unit: "item (round trip group: one round trip)",
	Ref:  ringsRef,
	Rows: ringsRows,
}

// ringsRef names the Go channel row of every rings group: the reference.
const ringsRef = "Go channel"

// ringCap is the capacity of every streaming ring and channel.
const ringCap = 1024

// Burst shape of the blocking group.
const (
	burstLen = 16
	burstGap = 50 * time.Microsecond
)

func ringsRows(cfg harness.Config) []harness.Row {
	var rows []harness.Row
	for _, b := range ringBatches(cfg.Scale) {
		rows = append(rows, throughputRows(b)...)
	}
	rows = append(rows, roundTripRows()...)
	for _, p := range contendedSweep(cfg.Scale) {
		rows = append(rows, contendedRows(p)...)
	}
	return append(rows, burstRows(cfg.Scale)...)
}

// ringBatches is the SPSC throughput sweep.
func ringBatches(s harness.Scale) []int {
	switch s {
	case harness.Tiny:
		return []int{1, 64}
	case harness.Full:
		return []int{1, 16, 64, 256}
	}
	return []int{1, 64}
}

// contendedSweep is the producer count of the contended groups.
func contendedSweep(s harness.Scale) []int {
	switch s {
	case harness.Tiny:
		return []int{2}
	case harness.Full:
		return []int{2, 4, 8, 16}
	}
	return []int{2, 4}
}

// burstSpins are the spin budgets of the blocking-burst group.
func burstSpins(s harness.Scale) []time.Duration {
	us := time.Microsecond
	if s == harness.Tiny {
		return []time.Duration{knit.NoSpin, 50 * us}
	}
	return []time.Duration{knit.NoSpin, 5 * us, 20 * us, 50 * us}
}

func throughputRows(batch int) []harness.Row {
	g := fmt.Sprintf("SPSC throughput, batch %d", batch)
	rows := []harness.Row{
		{Group: g, Name: ringsRef, Start: func(harness.Config) (harness.Bench, error) {
			return startChanStream(0, 0), nil
		}},
		{Group: g, Name: "limit: atomic handoff (locked threads)", Start: func(cfg harness.Config) (harness.Bench, error) {
			return startMailbox(cfg, batch), nil
		}},
		{Group: g, Name: "knit SPSC[uint64] (Go)", Start: func(harness.Config) (harness.Bench, error) {
			return startSPSCStream(batch, 0, 0, knit.Park{}), nil
		}},
		{Group: g, Name: "knit Words (asm)", Start: func(harness.Config) (harness.Bench, error) {
			return startWordsStream(batch), nil
		}},
		{Group: g, Name: "Workiva RingBuffer (Put/Get)", Start: func(harness.Config) (harness.Bench, error) {
			return startWorkivaStream(), nil
		}},
	}
	if batch == 1 {
		rows = append(rows, peerSPSCRows(g)...)
	}
	return rows
}

func roundTripRows() []harness.Row {
	const g = "round trip"
	spin := knit.Park{Spin: 50 * time.Microsecond}
	futex := knit.Park{Spin: 50 * time.Microsecond, Backend: knit.BackendFutex}
	return []harness.Row{
		{Group: g, Name: ringsRef, Start: chanPingPong(0)},
		{Group: g, Name: refAtomic, Start: func(cfg harness.Config) (harness.Bench, error) {
			return startAtomicPingPong(cfg, 1), nil
		}},
		{Group: g, Name: "knit SPSC pair (default park)", Start: func(cfg harness.Config) (harness.Bench, error) {
			return startRingPair(cfg, false, knit.Park{}), nil
		}},
		{Group: g, Name: "knit SPSC pair, spin 50µs", Start: func(cfg harness.Config) (harness.Bench, error) {
			return startRingPair(cfg, false, spin), nil
		}},
		{Group: g, Name: "knit SPSC pair, locked threads, spin 50µs, futex", Start: func(cfg harness.Config) (harness.Bench, error) {
			return startRingPair(cfg, true, futex), nil
		}},
	}
}

func contendedRows(p int) []harness.Row {
	g := fmt.Sprintf("contended, %d producers", p)
	row := func(name string, start func() harness.Bench) harness.Row {
		return harness.Row{Group: g, Name: name, Start: func(harness.Config) (harness.Bench, error) { return start(), nil }}
	}
	return append([]harness.Row{
		row(ringsRef, func() harness.Bench { return startChanContended(p, p) }),
		row("Go channel, 1 consumer", func() harness.Bench { return startChanContended(p, 1) }),
		row("knit MPMC (P producers, P consumers)", func() harness.Bench {
			return startRingContended(knit.NewMPMC[uint64](ringCap, knit.Park{}), p, p)
		}),
		row("knit MPSC (P producers, 1 consumer)", func() harness.Bench {
			return startRingContended(knit.NewMPSC[uint64](ringCap, knit.Park{}), p, 1)
		}),
		row("limit: atomic add on two shared words", func() harness.Bench { return startAddContended(p, p) }),
	}, peerContendedRows(g, p)...)
}

func burstRows(s harness.Scale) []harness.Row {
	g := fmt.Sprintf("blocking bursts of %d, producer sleeps %v between", burstLen, burstGap)
	rows := []harness.Row{
		{Group: g, Name: ringsRef, Start: func(harness.Config) (harness.Bench, error) {
			return startChanStream(burstLen, burstGap), nil
		}},
	}
	for _, d := range burstSpins(s) {
		name := fmt.Sprintf("knit SPSC, spin %v", d)
		if d == knit.NoSpin {
			name = "knit SPSC, no spin"
		}
		rows = append(rows, harness.Row{
			Group: g,
			Name:  name,
			Start: func(harness.Config) (harness.Bench, error) {
				return startSPSCStream(1, burstLen, burstGap, knit.Park{Spin: d}), nil
			},
		})
	}
	return append(rows, harness.Row{
		Group: g,
		Name:  "limit: raw futex wake per burst (locked consumer)",
		Start: func(cfg harness.Config) (harness.Bench, error) { return startFutexBurst(cfg), nil },
	})
}
