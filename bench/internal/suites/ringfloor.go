package suites

import (
	"context"
	"errors"
	"fmt"
	_ "unsafe" // for go:linkname

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The floor rows of ipc-peers, types and payload: the values moved to one
// worker goroutine and back through two bare knit SPSC rings, with
// nothing of a pool (no task queue, no futures, no result slots). The
// caller puts the whole batch into the outgoing ring with one PushBatch
// (one store of the ring's index); the worker takes what is there with
// one TryPopBatch, applies the row's function to each value (v+1, the
// identity, the checksum) and puts the results into the return ring the
// same way; the caller takes them back in batches.
//
// Each side waits as the pool's worker and Future.Wait do, which is the
// cheapest wait on any machine: a side that finds its ring empty yields
// once (runtime.goyield, as they do: a partner readied onto this P runs
// now, and one on another P gets the time to answer), looks again, and only then blocks in PopBatch under the rings'
// default policy (DefaultSpin where a default spins, parked at once
// with fewer than four CPUs). A floor that spins instead reads the
// bimodal figures of the atomic limit once the process gets about one
// CPU: the partner it waits for sits on a descheduled thread, where a
// parked goroutine would have been readied onto the waiter's own P.
//
// The rows are limit rows (harness.KindLimit): grey in the plots, never a
// rival in the verdict, and ipc-peers' floor in the verdict's table. What
// a knit row reads above its floor is what the pool adds.

// floorRings names the floor row; types and payload add the value's type.
const floorRings = "limit: bare knit SPSC rings there and back, batches"

// ringTrip is the floor's transport: an ipcTransport (roundTrip), a
// typeEcho (In == Out) and a payloadWorker (Out == uint64).
type ringTrip[In, Out any] struct {
	there *knit.SPSC[In]
	back  *knit.SPSC[Out]
	done  chan struct{}
	// send and recv, as typeBench and payloadBench call them: send stages
	// a value, and the first recv after sends carries the staged batch
	// there and back in one trip.
	staged []In
	got    []Out
	next   int
}

// startRingTrip starts a worker applying fn, for batches of up to batch
// values.
func startRingTrip[In, Out any](batch int, fn func(In) Out) *ringTrip[In, Out] {
	r := &ringTrip[In, Out]{
		there:  knit.NewSPSC[In](batch, knit.Park{}),
		back:   knit.NewSPSC[Out](batch, knit.Park{}),
		done:   make(chan struct{}),
		staged: make([]In, 0, batch),
		got:    make([]Out, 0, batch),
	}
	go r.work(batch, fn)
	return r
}

func (r *ringTrip[In, Out]) work(batch int, fn func(In) Out) {
	defer close(r.done)
	_, there := r.there.Ends()
	back, _ := r.back.Ends()
	defer back.Close()
	ctx := context.Background()
	in, out := make([]In, batch), make([]Out, batch)
	for {
		k, err := popBatchYield(ctx, there, in)
		if err != nil {
			return // closed and drained
		}
		for i, v := range in[:k] {
			out[i] = fn(v)
		}
		if _, err := back.PushBatch(ctx, out[:k]); err != nil {
			return
		}
	}
}

// goyield is runtime.Gosched onto the P's own run queue rather than the
// global one, so the goroutine stays on its P behind what that P has
// runnable (a partner the ring's bell readied there): the pool's
// Future.Wait and worker yield the same way. The runtime marks it "Do
// not remove or change the type signature" (go.dev/issue/67401).
//
//go:linkname goyield runtime.goyield
func goyield()

// popBatchYield is PopBatch after one yield: a try, a yield and a second
// try before the ring's blocking wait.
func popBatchYield[T any](ctx context.Context, c knit.SPSCConsumer[T], dst []T) (int, error) {
	if k, _ := c.TryPopBatch(dst); k > 0 {
		return k, nil
	}
	goyield()
	if k, _ := c.TryPopBatch(dst); k > 0 {
		return k, nil
	}
	return c.PopBatch(ctx, dst)
}

// roundTrip carries msgs there and fills replies, in order. The rings
// hold a whole batch (startRingTrip's batch), so PushBatch never waits.
func (r *ringTrip[In, Out]) roundTrip(msgs []In, replies []Out) error {
	if len(msgs) != len(replies) {
		return fmt.Errorf("floor rings: %d messages, %d replies", len(msgs), len(replies))
	}
	ctx := context.Background()
	there, _ := r.there.Ends()
	if _, err := there.PushBatch(ctx, msgs); err != nil {
		return fmt.Errorf("floor rings: %w", err)
	}
	_, back := r.back.Ends()
	for got := 0; got < len(replies); {
		m, err := popBatchYield(ctx, back, replies[got:])
		if err != nil {
			return fmt.Errorf("floor rings: %w", err)
		}
		got += m
	}
	return nil
}

func (r *ringTrip[In, Out]) send(v In) error {
	if len(r.staged) == cap(r.staged) {
		return fmt.Errorf("floor rings: more than %d values in flight", cap(r.staged))
	}
	r.staged = append(r.staged, v)
	return nil
}

func (r *ringTrip[In, Out]) recv() (Out, error) {
	if r.next == len(r.got) {
		if len(r.staged) == 0 {
			var zero Out
			return zero, errors.New("floor rings: recv with nothing in flight")
		}
		r.got, r.next = r.got[:len(r.staged)], 0
		err := r.roundTrip(r.staged, r.got)
		r.staged = r.staged[:0]
		if err != nil {
			var zero Out
			return zero, err
		}
	}
	v := r.got[r.next]
	r.next++
	return v, nil
}

func (r *ringTrip[In, Out]) close() error {
	there, _ := r.there.Ends()
	there.Close()
	<-r.done
	return nil
}

// ipcFloorRows is ipc-peers' floor, one row per batch size.
func ipcFloorRows(cfg harness.Config) []harness.Row {
	rows := ipcRows(floorRings, cfg, func(_ harness.Config, maxBatch int) (ipcTransport, error) {
		return startRingTrip(maxBatch, func(v int64) int64 { return v + 1 }), nil
	})
	for i := range rows {
		rows[i].Kind = harness.KindLimit
	}
	return rows
}

// typesFloorRow is types' floor for one count, on the reference's type
// (int): the handoff is the same for every type but for the copy of it.
func typesFloorRow(count int) harness.Row {
	r := typeRow(typeGroup(count), floorRings+" (int)", count, valInt, func(count int) (typeEcho[int], error) {
		return startRingTrip(count, func(v int) int { return v }), nil
	})
	r.Kind = harness.KindLimit
	return r
}

// payloadFloorRow is payload's floor for one size, on the reference's
// type ([]byte): the worker checksums every byte, as every row's does.
func payloadFloorRow(size, batch int) harness.Row {
	r := payloadRow(payloadGroup(size), floorRings+" ([]byte)", size, batch, func(b []byte) []byte { return b },
		func(batch int) (payloadWorker[[]byte], error) {
			return startRingTrip(batch, checksum[[]byte]), nil
		})
	r.Kind = harness.KindLimit
	return r
}
