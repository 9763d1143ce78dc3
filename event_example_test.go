package knit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
)

// The Event protocol: the consumer registers, re-checks its condition and
// only then waits; the producer publishes and then notifies, which costs
// one atomic load when nobody is registered.
func ExampleEvent() {
	var (
		ready atomic.Bool
		value int
		e     knit.Event
	)
	done := make(chan struct{})
	go func() { // consumer
		defer close(done)
		park := knit.Park{Spin: 10 * time.Microsecond}
		for {
			if ready.Load() {
				fmt.Println("got", value)
				return
			}
			t := e.Prepare()
			if ready.Load() { // the publish may have come before Prepare
				e.Cancel(t)
				continue
			}
			if err := e.Wait(context.Background(), t, park); err != nil {
				fmt.Println(err)
				return
			}
		}
	}()
	value = 42
	ready.Store(true) // publish...
	e.Notify(1)       // ...then ring
	<-done
	fmt.Println("waiters left:", e.Waiters())
	// Output:
	// got 42
	// waiters left: 0
}

// A wait bounded by a context: Wait returns ctx.Err() when it expires,
// and the Event is left with no waiter registered.
func ExampleEvent_Wait() {
	var e knit.Event
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	never := func() bool { return false }
	var err error
	for !never() {
		t := e.Prepare()
		if never() {
			e.Cancel(t)
			continue
		}
		if err = e.Wait(ctx, t, knit.Park{Backend: knit.BackendRuntime}); err != nil {
			break
		}
	}
	fmt.Println(err, e.Waiters())
	// Output: context deadline exceeded 0
}

// WaitFor runs the waiter's loop: the consumer states its condition, the
// producer publishes and rings.
func ExampleEvent_WaitFor() {
	var (
		ready atomic.Bool
		e     knit.Event
	)
	go func() {
		ready.Store(true) // publish...
		e.Notify(1)       // ...then ring
	}()
	err := e.WaitFor(context.Background(), ready.Load, knit.Park{})
	fmt.Println(ready.Load(), err, e.Waiters())
	// Output: true <nil> 0
}

// A pool's per-task handoff, written with Events (knit.Slot is this
// pattern, ready-made): a one-word slot, an Event the worker waits on
// for a task and one the submitter waits on for room. The submitter
// claims the empty slot with a CompareAndSwap and calls Handoff, which
// wakes the worker and, if it was asleep, yields the submitter's P to it,
// so the task runs at once; the worker empties the slot and rings the
// submitter's Event. Nothing allocates per task and nobody polls.
func ExampleEvent_Handoff() {
	var (
		slot        atomic.Int64 // the task: a number to add, or -1 to stop; 0 while empty
		full, empty knit.Event
		sum         int64
	)
	done := make(chan struct{})
	go func() { // the worker
		defer close(done)
		for {
			_ = full.WaitFor(context.Background(), func() bool { return slot.Load() != 0 }, knit.Park{})
			task := slot.Swap(0)
			empty.Notify(1) // room for the next task
			if task < 0 {
				return
			}
			sum += task
		}
	}()
	put := func(task int64) {
		// The condition claims the slot: true only for the call that
		// moved it from empty to task.
		_ = empty.WaitFor(context.Background(), func() bool { return slot.CompareAndSwap(0, task) }, knit.Park{})
		full.Handoff()
	}
	for i := int64(1); i <= 3; i++ {
		put(i * 10)
	}
	put(-1)
	<-done
	fmt.Println("sum", sum)
	// Output:
	// sum 60
}
