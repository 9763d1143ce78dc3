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

// A pool's per-task handoff: the submitter stores the task in the
// worker's one-word slot and calls Handoff, which wakes the worker and,
// if it was asleep, lets it run the task at once on the submitter's P.
func ExampleEvent_Handoff() {
	var (
		slot atomic.Pointer[func() int] // the task; nil while the worker is idle
		e    knit.Event
		sum  int
	)
	done := make(chan struct{})
	go func() { // the worker
		defer close(done)
		for {
			_ = e.WaitFor(context.Background(), func() bool { return slot.Load() != nil }, knit.Park{})
			task := *slot.Swap(nil)
			if task == nil {
				return
			}
			sum += task()
		}
	}()
	for i := 1; i <= 3; i++ {
		task := func() int { return i * 10 }
		for !slot.CompareAndSwap(nil, &task) { // the worker still holds the last one
			time.Sleep(time.Microsecond)
		}
		e.Handoff()
	}
	var stop func() int
	for !slot.CompareAndSwap(nil, &stop) {
		time.Sleep(time.Microsecond)
	}
	e.Handoff()
	<-done
	fmt.Println("sum", sum)
	// Output:
	// sum 60
}
