package suites

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/affinity"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The spsc-rigtorp suite rebuilds rigtorp's SPSCQueue benchmark
// (github.com/rigtorp/SPSCQueue, src/SPSCQueueBenchmark.cpp) around knit:
// a producer thread pinned to CPU 1 and a consumer pinned to CPU 0, try-
// push and try-pop spin loops, a stream of 32-bit ints in throughput
// mode; then a round trip through two queues. rigtorp streams 10 M items
// through a 10 M-slot queue and prints ops/ms; here the harness picks the
// item count for each window and prints ns per item (ops/ms = 1e6 / ns),
// through a queue of 2^20 slots (2^24 with -full).
//
// The reference of every group is named "limit": in the throughput
// groups the all-assembly producer and consumer loops over knit's SPSC
// layout (limitRing), for 4- and 8-byte items; in the round-trip group
// the raw atomic ping-pong between the same two pinned threads. So "vs
// ref" reads as "times the floor".
var rigtorpSuite = harness.Suite{
	Name: "spsc-rigtorp",
	Description: "rigtorp's SPSCQueue benchmark shape: producer pinned to CPU 1, consumer to CPU 0, " +
		"try-push and try-pop spin loops, one item at a time; then a round trip through two queues. " +
		"Queues of 2^20 slots (2^24 with -full, which adds the SPSC[uint64] and channel-pair rows); " +
		"ops/ms = 1e6 / (ns per item). " +
		"Reference \"limit\": in the throughput groups, producer and consumer loops written wholly in assembly " +
		"over knit's SPSC layout (cached opposite index, release store per item, no call, no doorbell); " +
		"in the round-trip group, the raw atomic ping-pong between the two pinned threads.",
	Unit: "item (round-trip group: one round trip)",
	Ref:  rigLimit,
	Rows: rigtorpRows,
}

// rigLimit is the reference row's name in every group of the suite.
const rigLimit = "limit"

// rigSpins is how many polls the assembly loops make per item before
// they hand back to Go (so the thread can be preempted): long enough to
// cover any line transfer, short enough to be a few microseconds.
const rigSpins = 1 << 12

// rigChunk is how many items a producer moves per call into assembly.
const rigChunk = 1 << 12

func rigCap(s harness.Scale) int {
	switch s {
	case harness.Tiny:
		return 1 << 10
	case harness.Full:
		return 1 << 24
	}
	return 1 << 20
}

func rigtorpRows(cfg harness.Config) []harness.Row {
	c := rigCap(cfg.Scale)
	row := func(g, name string, start func() harness.Bench) harness.Row {
		return harness.Row{Group: g, Name: name, Start: func(harness.Config) (harness.Bench, error) { return start(), nil }}
	}
	const g4, g8, rt = "throughput, 4-byte items", "throughput, 8-byte items", "round trip"
	var rows []harness.Row
	if haveLimitRing {
		rows = append(rows,
			row(g4, rigLimit, func() harness.Bench { return warm(startLimitStream(c, 4), c) }),
			row(g8, rigLimit, func() harness.Bench { return warm(startLimitStream(c, 8), c) }),
		)
	}
	rows = append(rows,
		row(g4, "knit SPSC[int32]", func() harness.Bench { return warm(startRigSPSC[int32](c, "knit SPSC[int32]"), c) }),
		row(g4, "Go channel (chan int32)", func() harness.Bench { return warm(startRigChan(c), c) }),
		row(g8, "knit Words", func() harness.Bench { return warm(startRigWords(c), c) }),
	)
	full := cfg.Scale == harness.Full
	if full {
		rows = append(rows, row(g8, "knit SPSC[uint64]", func() harness.Bench { return warm(startRigSPSC[uint64](c, "knit SPSC[uint64]"), c) }))
	}
	rows = append(rows, row(rt, rigLimit, func() harness.Bench { return startPinnedPingPong() }))
	if haveLimitRing {
		rows = append(rows, row(rt, "all-assembly ring pair (int32)", startLimitPair))
	}
	rows = append(rows,
		row(rt, "knit SPSC[int32] pair", startRigPair32),
		row(rt, "knit Words pair", startRigWordsPair),
	)
	if full {
		// A channel round trip between locked threads parks both ends
		// every trip (tens of µs here): a row for the record, not a
		// reference, so it runs with -full only.
		rows = append(rows, row(rt, "Go channel pair (chan int32, buffered 1)", startRigChanPair))
	}
	return rows
}

// pinCPU pins the calling goroutine's thread to cpu, as rigtorp's
// benchmark does; where that is refused (fewer CPUs, an OS without
// affinity) it locks the goroutine to its thread, the best left.
func pinCPU(cpu int) (release func()) {
	if rel, err := affinity.Pin(cpu); err == nil {
		return rel
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// rigStream is the throughput rows' frame: a producer goroutine pinned to
// CPU 1 streams 0, 1, 2, ... until stopped; Run, pinned to CPU 0, takes n
// items and checks each is the next one (by its low 32 bits).
type rigStream struct {
	stop    atomic.Bool
	done    chan struct{}
	want    uint64
	release func() // undoes the timed goroutine's pin; nil until Run pins it
}

// pinRun pins the timed goroutine to CPU 0, once per instance: Start,
// Run and Close are called on that goroutine, and pinning per Run would
// put an affinity syscall in every timed chunk. Close undoes it.
func (s *rigStream) pinRun() {
	if s.release == nil {
		s.release = pinCPU(0)
	}
}

// unpinRun undoes pinRun.
func (s *rigStream) unpinRun() {
	if s.release != nil {
		s.release()
		s.release = nil
	}
}

// warm runs one lap of a throughput row before the harness times it, so
// that the first touch of a fresh ring's pages (a fault each) is not in
// the window.
func warm[B harness.Bench](b B, n int) B {
	if err := b.Run(n); err != nil {
		panic(fmt.Sprintf("limit warm-up: %v", err))
	}
	return b
}

func (s *rigStream) start(produce func()) {
	s.done = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		release := pinCPU(1)
		defer release()
		close(ready)
		produce()
	}()
	<-ready
}

// spin is a try loop's wait: it yields the processor after every
// spinBound failed tries in a row (the partner may need this CPU on a
// loaded box; tries counts one wait, from zero) and reports whether the
// stream was stopped meanwhile. Counting across waits instead would
// yield every few hundred items of a round trip, each yield of a locked
// thread a scheduler hand-off.
func (s *rigStream) spin(tries *int) bool {
	if *tries++; *tries%spinBound == 0 {
		runtime.Gosched()
		return s.stop.Load()
	}
	return false
}

func (s *rigStream) Close() error {
	s.stop.Store(true)
	<-s.done
	s.unpinRun()
	return nil
}

func (s *rigStream) check(what string, got uint64) error {
	if uint32(got) != uint32(s.want) {
		return outOfOrder(what, got, s.want)
	}
	s.want++
	return nil
}

// rigSPSC is the knit SPSC rows, for 4- and 8-byte items. The loops call
// the ends' methods directly (a type parameter over the element type
// leaves them static calls); Words, a different type, has its own loops.
type rigSPSC[T int32 | uint64] struct {
	rigStream
	q    *knit.SPSC[T]
	name string
}

func startRigSPSC[T int32 | uint64](capacity int, name string) *rigSPSC[T] {
	s := &rigSPSC[T]{q: knit.NewSPSC[T](capacity, knit.Park{}), name: name}
	p, _ := s.q.Ends()
	s.start(func() {
		for v := T(0); ; v++ {
			for tries := 0; p.TryPush(v) != nil; {
				if s.spin(&tries) {
					return
				}
			}
			if v&(rigChunk-1) == 0 && s.stop.Load() {
				return
			}
		}
	})
	return s
}

func (s *rigSPSC[T]) Run(n int) error {
	s.pinRun()
	_, c := s.q.Ends()
	for range n {
		v, err := c.TryPop()
		for tries := 0; err != nil; {
			s.spin(&tries)
			v, err = c.TryPop()
		}
		if err = s.check(s.name, uint64(v)); err != nil {
			return err
		}
	}
	return nil
}

type rigWords struct {
	rigStream
	q *knit.Words
}

func startRigWords(capacity int) *rigWords {
	s := &rigWords{q: knit.NewWords(capacity, knit.Park{})}
	p, _ := s.q.Ends()
	s.start(func() {
		for v := uint64(0); ; v++ {
			for tries := 0; p.TryPush(v) != nil; {
				if s.spin(&tries) {
					return
				}
			}
			if v&(rigChunk-1) == 0 && s.stop.Load() {
				return
			}
		}
	})
	return s
}

func (s *rigWords) Run(n int) error {
	s.pinRun()
	_, c := s.q.Ends()
	for range n {
		v, err := c.TryPop()
		for tries := 0; err != nil; {
			s.spin(&tries)
			v, err = c.TryPop()
		}
		if err = s.check("knit Words", v); err != nil {
			return err
		}
	}
	return nil
}

// rigChan is the channel row: the same pinned threads, a buffered
// channel of the queue's capacity, blocking send and receive (a channel
// has no try loop short of select with default, which costs more).
type rigChan struct {
	rigStream
	ch chan int32
}

func startRigChan(capacity int) *rigChan {
	s := &rigChan{ch: make(chan int32, capacity)}
	s.start(func() {
		defer close(s.ch)
		for v := int32(0); !s.stop.Load(); v++ {
			s.ch <- v
		}
	})
	return s
}

func (s *rigChan) Run(n int) error {
	s.pinRun()
	for range n {
		v, ok := <-s.ch
		if !ok {
			return fmt.Errorf("chan int32: closed early")
		}
		if err := s.check("chan int32", uint64(uint32(v))); err != nil {
			return err
		}
	}
	return nil
}

func (s *rigChan) Close() error {
	s.stop.Store(true)
	for range s.ch { // unblock a producer stuck on a full channel
	}
	<-s.done
	s.unpinRun()
	return nil
}

// startPinnedPingPong is the raw atomic ping-pong between the suite's
// two pinned threads: the round trip's floor.
func startPinnedPingPong() harness.Bench {
	p := &atomicPingPong{lock: func(slot int) func() { return pinCPU(slot) },
		msgs: make([]int64, 1), done: make(chan struct{})}
	ready := make(chan struct{})
	go p.partner(ready)
	<-ready
	return p
}

// The round-trip rows use rigStream's frame too: the partner goroutine,
// pinned to CPU 1, answers each request v with v+1 until stopped; Run,
// pinned to CPU 0, times n round trips.

type rigPair32 struct {
	rigStream
	req, rep *knit.SPSC[int32]
}

func startRigPair32() harness.Bench {
	p := &rigPair32{req: knit.NewSPSC[int32](64, knit.Park{}), rep: knit.NewSPSC[int32](64, knit.Park{})}
	_, in := p.req.Ends()
	out, _ := p.rep.Ends()
	p.start(func() {
		for {
			v, err := in.TryPop()
			for tries := 0; err != nil; {
				if p.spin(&tries) {
					return
				}
				v, err = in.TryPop()
			}
			for out.TryPush(v+1) != nil {
			}
		}
	})
	return p
}

func (p *rigPair32) Run(n int) error {
	p.pinRun()
	out, _ := p.req.Ends()
	_, in := p.rep.Ends()
	for i := range int32(n) {
		for out.TryPush(i) != nil {
		}
		v, err := in.TryPop()
		for tries := 0; err != nil; {
			p.spin(&tries)
			v, err = in.TryPop()
		}
		if v != i+1 {
			return outOfOrder("knit SPSC[int32] pair", uint64(v), uint64(i+1))
		}
	}
	return nil
}

type rigWordsPair struct {
	rigStream
	req, rep *knit.Words
}

func startRigWordsPair() harness.Bench {
	p := &rigWordsPair{req: knit.NewWords(64, knit.Park{}), rep: knit.NewWords(64, knit.Park{})}
	_, in := p.req.Ends()
	out, _ := p.rep.Ends()
	p.start(func() {
		for {
			v, err := in.TryPop()
			for tries := 0; err != nil; {
				if p.spin(&tries) {
					return
				}
				v, err = in.TryPop()
			}
			for out.TryPush(v+1) != nil {
			}
		}
	})
	return p
}

func (p *rigWordsPair) Run(n int) error {
	p.pinRun()
	out, _ := p.req.Ends()
	_, in := p.rep.Ends()
	for i := range uint64(n) {
		for out.TryPush(i) != nil {
		}
		v, err := in.TryPop()
		for tries := 0; err != nil; {
			p.spin(&tries)
			v, err = in.TryPop()
		}
		if v != i+1 {
			return outOfOrder("knit Words pair", v, i+1)
		}
	}
	return nil
}

type rigChanPair struct {
	rigStream
	req, rep chan int32
}

func startRigChanPair() harness.Bench {
	p := &rigChanPair{req: make(chan int32, 1), rep: make(chan int32, 1)}
	p.start(func() {
		for v := range p.req {
			p.rep <- v + 1
		}
	})
	return p
}

func (p *rigChanPair) Run(n int) error {
	p.pinRun()
	for i := range int32(n) {
		p.req <- i
		if v := <-p.rep; v != i+1 {
			return outOfOrder("chan int32 pair", uint64(v), uint64(i+1))
		}
	}
	return nil
}

func (p *rigChanPair) Close() error {
	close(p.req)
	<-p.done
	p.unpinRun()
	return nil
}
