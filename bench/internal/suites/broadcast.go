package suites

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The broadcast suite: one producer, S subscribers that each take every
// item (S = 1, 2, 4), items moved one at a time and in batches of 16.
// One op is one item delivered to all S. The timed goroutine produces;
// the subscribers run on goroutines of their own, each told how many
// items to take per round, and Run returns when all have taken them.
//
// Rows: what Go offers (S buffered channels fed by a fan-out loop, the
// reference; at batch 16 also channels of 16-item arrays), knit's
// Broadcast, and the limit: the producer fills a box of batch words and
// publishes it with one atomic store, and S reader threads each ack it
// with a store of their own before the next box (a one-deep broadcast in
// lockstep, all threads locked; a ring pipelines and can go below it).
var broadcastSuite = harness.Suite{
	Name: "broadcast",
	Description: "one producer, S subscribers that each see every item: knit Broadcast against S buffered " +
		"channels (capacity 1024) fed by a fan-out loop, and the raw-atomic limit. Reference \"Go channels, " +
		"fan-out loop\": one item per channel send, also in the batch-16 groups (the channel that go-disruptor's " +
		"figures compare with); the [16]uint64 channel row is the batched version a Go program would write. " +
		"Limit: a box of batch words published with one atomic store and acked by each of S locked reader threads.",
	Unit: "item delivered to every subscriber",
	Ref:  bcastRef,
	Rows: broadcastRows,
}

const bcastRef = "Go channels, fan-out loop"

func broadcastRows(cfg harness.Config) []harness.Row {
	var rows []harness.Row
	for _, batch := range []int{1, 16} {
		for _, subs := range []int{1, 2, 4} {
			g := fmt.Sprintf("%d subscriber(s), batch %d", subs, batch)
			row := func(name string, start func(harness.Config) harness.Bench) {
				rows = append(rows, harness.Row{Group: g, Name: name, Start: func(c harness.Config) (harness.Bench, error) {
					return start(c), nil
				}})
			}
			row(bcastRef, func(harness.Config) harness.Bench { return startChanFanout(subs) })
			if batch > 1 {
				row("Go channels of [16]uint64, fan-out loop", func(harness.Config) harness.Bench { return startChanFanout16(subs) })
			}
			row("knit Broadcast", func(harness.Config) harness.Bench { return startKnitBroadcast(subs, batch) })
			row("limit: atomic box, acked by each reader (locked threads)", func(c harness.Config) harness.Bench {
				return startFanoutLimit(c, subs, batch)
			})
		}
	}
	return rows
}

// fanout runs S subscriber loops, each handed its quota per round.
type fanout struct {
	produce func(n int) error
	cmds    []chan int
	round   sync.WaitGroup
	exit    sync.WaitGroup
	mu      sync.Mutex
	err     error
	closeQ  func()
}

// startFanout starts one goroutine per consume func; consume(quota) takes
// exactly quota items.
func startFanout(produce func(int) error, closeQ func(), consumers ...func(quota int) error) *fanout {
	f := &fanout{produce: produce, closeQ: closeQ}
	for _, consume := range consumers {
		cmd := make(chan int, 1)
		f.cmds = append(f.cmds, cmd)
		f.exit.Go(func() {
			for quota := range cmd {
				if err := consume(quota); err != nil {
					f.mu.Lock()
					if f.err == nil {
						f.err = err
					}
					f.mu.Unlock()
				}
				f.round.Done()
			}
		})
	}
	return f
}

func (f *fanout) Run(n int) error {
	f.round.Add(len(f.cmds))
	for _, c := range f.cmds {
		c <- n
	}
	err := f.produce(n)
	f.round.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	return err
}

func (f *fanout) Close() error {
	for _, c := range f.cmds {
		close(c)
	}
	f.exit.Wait()
	if f.closeQ != nil {
		f.closeQ()
	}
	return nil
}

func startChanFanout(subs int) *fanout {
	chans := make([]chan uint64, subs)
	var consumers []func(int) error
	for i := range chans {
		ch := make(chan uint64, ringCap)
		chans[i] = ch
		var want uint64
		consumers = append(consumers, func(quota int) error {
			for range quota {
				if v := <-ch; v != want {
					return outOfOrder("chan fan-out", v, want)
				}
				want++
			}
			return nil
		})
	}
	var next uint64
	return startFanout(func(n int) error {
		for range n {
			for _, ch := range chans {
				ch <- next
			}
			next++
		}
		return nil
	}, nil, consumers...)
}

// box16 is a batch on a channel: up to 16 items, n of them used.
type box16 struct {
	n int
	v [16]uint64
}

func startChanFanout16(subs int) *fanout {
	chans := make([]chan box16, subs)
	var consumers []func(int) error
	for i := range chans {
		ch := make(chan box16, ringCap/16)
		chans[i] = ch
		var want uint64
		consumers = append(consumers, func(quota int) error {
			for got := 0; got < quota; {
				b := <-ch
				for _, v := range b.v[:b.n] {
					if v != want {
						return outOfOrder("[16]uint64 chan fan-out", v, want)
					}
					want++
				}
				got += b.n
			}
			return nil
		})
	}
	var next uint64
	return startFanout(func(n int) error {
		for sent := 0; sent < n; {
			var b box16
			b.n = min(16, n-sent)
			for i := range b.n {
				b.v[i] = next
				next++
			}
			for _, ch := range chans {
				ch <- b
			}
			sent += b.n
		}
		return nil
	}, nil, consumers...)
}

func startKnitBroadcast(subs, batch int) *fanout {
	ctx := context.Background()
	b := knit.NewBroadcast[uint64](ringCap, knit.Park{})
	var consumers []func(int) error
	for range subs {
		s := b.Subscribe()
		dst := make([]uint64, batch)
		var want uint64
		consumers = append(consumers, func(quota int) error {
			for got := 0; got < quota; {
				if batch == 1 {
					v, err := s.Pop(ctx)
					if err != nil {
						return err
					}
					if v != want {
						return outOfOrder("knit Broadcast", v, want)
					}
					want++
					got++
					continue
				}
				k, err := s.PopBatch(ctx, dst[:min(batch, quota-got)])
				if err != nil {
					return err
				}
				for _, v := range dst[:k] {
					if v != want {
						return outOfOrder("knit Broadcast", v, want)
					}
					want++
				}
				got += k
			}
			return nil
		})
	}
	var next uint64
	src := make([]uint64, batch)
	return startFanout(func(n int) error {
		for sent := 0; sent < n; {
			if batch == 1 {
				if err := b.Push(ctx, next); err != nil {
					return err
				}
				next++
				sent++
				continue
			}
			k := min(batch, n-sent)
			for i := range k {
				src[i] = next
				next++
			}
			if _, err := b.PushBatch(ctx, src[:k]); err != nil {
				return err
			}
			sent += k
		}
		return nil
	}, b.Close, consumers...)
}

// fanoutLimit is the limit: seq counts boxes published; each reader
// stores the last box it finished in its own ack word, on a line of its
// own, and the producer waits for every ack before refilling the box.
type fanoutLimit struct {
	_    line
	seq  atomic.Uint64
	_    line
	acks []ackWord
	box  []uint64
	cfg  harness.Config
	stop atomic.Bool
	*fanout
}

type ackWord struct {
	v atomic.Uint64
	_ line
}

func startFanoutLimit(cfg harness.Config, subs, batch int) *fanoutLimit {
	l := &fanoutLimit{acks: make([]ackWord, subs), box: make([]uint64, batch), cfg: cfg}
	var consumers []func(int) error
	for i := range subs {
		var k, want uint64 // boxes taken, next item
		locked := false
		consumers = append(consumers, func(quota int) error {
			if !locked { // the reader goroutine keeps its thread for the instance's life
				runtime.LockOSThread()
				locked = true
			}
			for got := 0; got < quota; {
				if !l.waitSeq(k + 1) {
					return nil
				}
				for _, v := range l.box[:min(len(l.box), quota-got)] {
					if v != want {
						return outOfOrder("fan-out limit", v, want)
					}
					want++
					got++
				}
				k++
				l.acks[i].v.Store(k)
			}
			return nil
		})
	}
	var k, next uint64
	l.fanout = startFanout(func(n int) error {
		release := cfg.LockThread(0)
		defer release()
		for sent := 0; sent < n; {
			for i := range l.acks {
				l.waitAck(i, k)
			}
			m := min(len(l.box), n-sent)
			for j := range m {
				l.box[j] = next
				next++
			}
			k++
			l.seq.Store(k)
			sent += m
		}
		for i := range l.acks { // the readers have taken the last box
			l.waitAck(i, k)
		}
		return nil
	}, func() { l.stop.Store(true) }, consumers...)
	return l
}

// waitSeq spins until box v is published, yielding every spinBound loads.
func (l *fanoutLimit) waitSeq(v uint64) bool {
	for {
		for range spinBound {
			if l.seq.Load() >= v {
				return true
			}
		}
		if l.stop.Load() {
			return false
		}
		runtime.Gosched()
	}
}

func (l *fanoutLimit) waitAck(i int, v uint64) {
	for {
		for range spinBound {
			if l.acks[i].v.Load() >= v {
				return
			}
		}
		runtime.Gosched()
	}
}
